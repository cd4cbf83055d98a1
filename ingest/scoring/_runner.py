"""Scoring runs: plan the calls, make them concurrently with retries, and persist every one.

Work is split as in inspect_ai: providers only make a call (judges/); retries, backoff,
concurrency, resume and persistence live here, once. Many workers feed one writer task, which
inserts in batches, each in its own short transaction on a freshly opened connection, so the
dashboard and other readers get the file between batches. Every answer is appended to a journal
the moment it arrives; after a crash (even SIGKILL) the next run replays the journal first, so
nothing answered is lost and only the calls in flight are made again.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import socket
import time
from pathlib import Path

import polars as pl

from .. import runs
from .._errors import UserError
from .._redact import redact
from ..store import CellRunDescription, Database, writing
from ._calls import Caller
from ._endpoints import EndpointsDown
from ._estimate import Estimate, from_timings, machine_load, plan_chars
from ._journal import journal_path, replay_journal, write_rows
from ._progress import Progress
from ._request import (DECODINGS, ScoreRequest, check_samples, decoding_mode, decoding_settings, ensure_spec_judge,
                       resolve_formats)
from ._schedule import SCHEDULES, plan_calls, schedule_of
from .formats import Format
from .judges import CallHints, JudgeReply, JudgeSpec, check_server, parse_judge, public_endpoint, with_strategy


class _Scoring(Caller):
    """The state of one scoring run while its calls are in flight."""

    def __init__(self, req: ScoreRequest, spec: JudgeSpec, formats: dict[str, Format], db: Path,
                 settings: dict):
        super().__init__(req, spec, formats, settings)
        self.db = db
        self.buffer: list[dict] = []
        self.journal = None
        self.judge_models: set[str] = set()
        self.background: runs.Run | None = None       # the background run doing this (cancel, progress)
        self.write_error: str | None = None     # set when the writer failed: the workers stop
        self.down_error: str | None = None      # set when every endpoint is down: the workers stop
        self.answered_by: dict[str, int] = {}   # endpoint -> calls it answered in this run
        self.expected: Estimate | None = None   # the in-process judge's expected load and calls (measured here)
        self.load_s: float | None = None        # seconds from the process start to the in-process judge ready
        self.load_per_core: float | None = None     # the machine's load per core as it began loading it
        self.timing: dict[str, list] = {}       # format -> [calls, characters, seconds] of the in-process judge

    def timed(self, calls: list[dict], texts: dict, seconds: float) -> None:
        """`seconds` spent by the in-process judge on these calls (shared equally), with the characters
        each gave it (its format's template, the prompt, the response(s): plan_chars' count)."""
        for call in calls:
            spent = self.timing.setdefault(call["format"], [0, 0, 0.0])
            spent[0] += 1
            spent[1] += (len(self.formats[call["format"]].template or "") + len(texts["prompt"][call["prompt_idx"]])
                         + len(texts["response"][call["a_idx"]]) + len(texts["response"].get(call["b_idx"]) or ""))
            spent[2] += seconds / len(calls)

    def record(self, call: dict, reply: JudgeReply | None, error: str | None, attempts: int) -> dict:
        fmt = self.formats[call["format"]]
        row = {k: call[k] for k in ("cell_run_id", "pool_id", "judge_id", "format_id", "prompt_idx", "a_idx",
                                    "b_idx", "swapped", "sample", "decoding")}
        row.update(attempts=attempts, answer_probs=None, expected=None, endpoint=None)
        if reply is None:
            row.update(raw=None, answer=None, value=None, status="failed", error=redact(error), latency_ms=None,
                       tokens_in=None, tokens_out=None)
            return row
        parsed = fmt.parse(reply.text)
        probs = reply.answer_probs
        if probs is None and reply.top_logprobs and reply.tokens and parsed.answer is not None:
            first = fmt.answer_probs_from_logprobs({reply.tokens[0]: 0.0})
            if first and list(first) == [parsed.answer]:  # the first token alone names the verdict
                probs = fmt.answer_probs_from_logprobs(reply.top_logprobs[0])
        if reply.model:
            self.judge_models.add(reply.model)
        # the server that answered, without credentials; a strategy's merged reply names none: the judge's own
        endpoint = (public_endpoint(reply.endpoint) if reply.endpoint
                    else self.spec.endpoint if self.spec.provider == "openai" else None)
        row.update(raw=reply.text, answer=parsed.answer, value=parsed.value, status=parsed.status,
                   error=None, endpoint=endpoint, latency_ms=reply.latency_ms, tokens_in=reply.tokens_in,
                   tokens_out=reply.tokens_out, answer_probs=json.dumps(probs) if probs else None,
                   expected=fmt.expected_value(probs) if fmt.kind == "pointwise" else None)
        return row

    def keep(self, row: dict, progress: Progress) -> None:
        self.journal.write(json.dumps(row) + "\n")
        self.journal.flush()
        self.buffer.append(row)
        if row["endpoint"] is not None and row["status"] != "failed":
            self.answered_by[row["endpoint"]] = self.answered_by.get(row["endpoint"], 0) + 1
        progress.count(row["status"], row["error"], row["tokens_in"], row["tokens_out"])


async def _execute(run: _Scoring, calls: list[dict], texts: dict, refs: dict, progress: Progress) -> str:
    req, spec = run.req, run.spec
    queue: asyncio.Queue = asyncio.Queue()
    for call in calls:
        queue.put_nowait(call)
    stop = asyncio.Event()

    def hints_for(call: dict) -> CallHints:
        fmt = run.formats[call["format"]]
        return CallHints(format_name=fmt.name, kind=fmt.kind, reference_a=refs.get(call["a_idx"]),
                         reference_b=refs.get(call["b_idx"]) if call["b_idx"] is not None else None,
                         # the call's key is the same for every sample (ending in |0, as before
                         # repeats); the sample index travels beside it
                         key=f"{fmt.name}|{call['prompt_idx']}|{call['a_idx']}|{call['b_idx']}|0",
                         sample=call["sample"],
                         texts={"prompt": texts["prompt"][call["prompt_idx"]], "a": texts["response"][call["a_idx"]],
                                "b": texts["response"].get(call["b_idx"])})

    async def worker(judge) -> None:
        while not stop.is_set():
            try:
                call = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            try:
                reply, error, attempts = await run.call(judge, call, texts, hints_for(call))
            except EndpointsDown as exc:    # the call was not made: it stays for the next run
                run.down_error = str(exc)
                stop.set()
                return
            run.keep(run.record(call, reply, error, attempts), progress)

    async def local_worker(judge) -> None:
        """The in-process model: pointwise calls of one candidate share a prefix and go together."""
        pending: dict[tuple, list[dict]] = {}
        comparative = []
        for call in calls:
            if run.formats[call["format"]].kind == "pointwise" and call["decoding"] == "constrained":
                pending.setdefault((call["prompt_idx"], call["a_idx"], call["sample"]), []).append(call)
            else:
                comparative.append(call)
        for (p, a, _), group in pending.items():
            if stop.is_set():
                return
            fmts = [run.formats[c["format"]] for c in group]
            try:
                started = time.perf_counter()
                replies = await asyncio.to_thread(judge.score_pointwise, texts["prompt"][p], texts["response"][a], fmts)
                run.timed(group, texts, time.perf_counter() - started)
                for call, reply in zip(group, replies):
                    run.keep(run.record(call, reply, None, 1), progress)
            except Exception as exc:
                for call in group:
                    run.keep(run.record(call, None, f"{type(exc).__name__}: {exc}", 1), progress)
        for call in comparative:
            if stop.is_set():
                return
            started = time.perf_counter()
            reply, error, attempts = await run.call(judge, call, texts, hints_for(call))
            run.timed([call], texts, time.perf_counter() - started)
            run.keep(run.record(call, reply, error, attempts), progress)

    async def writer() -> None:
        while True:
            finished = all(w.done() for w in workers)
            if run.background is not None and run.background.cancelled():   # `judgeaudit cancel`, or Stop on a page
                stop.set()
            if run.buffer:
                rows, run.buffer = run.buffer, []
                try:
                    await asyncio.to_thread(write_rows, run.db, rows)
                except Exception as exc:
                    # The answers are in the journal; make no more (paid) calls and fail the run.
                    run.write_error = f"could not write verdicts to the database: {type(exc).__name__}: {exc}"
                    stop.set()
                    return
            progress.update()
            if run.background is not None:
                run.background.progress(progress.record)
            if finished and not run.buffer:
                return
            await asyncio.sleep(req.flush_interval_s)

    if spec.shared:
        since = _load(run, progress)
        judge = await asyncio.to_thread(spec.factory)
        run.load_s = time.time() - since
        expected = run.expected
        progress.calls_begin(expected.calls_s / len(calls) if expected and calls else None)
        judges = [judge]
        workers = [asyncio.create_task(local_worker(judge))]
    else:
        # `--concurrency` calls in flight per endpoint (several endpoints: their pool shares them out)
        lanes = req.concurrency * max(1, len(spec.endpoints))
        judges = [spec.factory() for _ in range(max(1, min(lanes, len(calls) or 1)))]
        workers = [asyncio.create_task(worker(j)) for j in judges]
    writer_task = asyncio.create_task(writer())
    try:
        await asyncio.gather(*workers)
        await writer_task
    finally:
        for j in judges:
            await j.aclose()
    if run.write_error or run.down_error:
        return "failed"
    return "cancelled" if stop.is_set() else "finished"


_LOADED_IN_THIS_PROCESS = []    # the in-process judges loaded so far by this process (one for a run's own)


def _load(run: _Scoring, progress: Progress) -> float:
    """Say that the in-process judge is loading, and how long that took on this machine (run.expected);
    when it began (epoch seconds): the process's start for the first judge a process loads (what a
    launched run waits for: Python, its imports, torch and the model), else now."""
    age = runs.seconds_since_start() if not _LOADED_IN_THIS_PROCESS else None
    run.load_per_core = machine_load()      # its own work has barely begun: the load it meets
    _LOADED_IN_THIS_PROCESS.append(run.spec.name)
    since = time.time() - (age or 0.0)
    expected = run.expected
    what = "the bundled model" if run.spec.provider == "local" else f"judge {run.spec.name}"
    progress.loading(what, since, expected.load_s if expected else None, expected.runs if expected else 0)
    if run.background is not None:
        run.background.progress(progress.record)
    return since


def _timings(run: _Scoring) -> list[dict]:
    """What the run measured of its in-process judge, one row per format (store: record_timings)."""
    if run.load_s is None or run.req.strategy:     # a strategy's calls are several of the judge's
        return []
    return [{"format": name, "decoding": run.req.decoding, "calls": calls, "chars": chars, "call_s": seconds,
             "load_s": run.load_s, "load_per_core": run.load_per_core}
            for name, (calls, chars, seconds) in run.timing.items() if calls]


def score(req: ScoreRequest) -> dict:
    """Score a pool with one judge under several formats; re-running resumes
    (docs/scoring.md#calls-retries-and-resuming).

    The work is a background run (ingest.runs) keyed by pool and judge, so a second run of the
    same pool and judge is refused while the first is alive; the judge name must keep standing for
    the same judge (provider, model, endpoint, decoding), or the run is refused before any call.
    """
    if req.schedule not in SCHEDULES:
        raise UserError(f"--schedule: one of {', '.join(SCHEDULES)}, not {req.schedule!r}")
    if req.concurrency < 1:
        raise UserError("--concurrency: at least 1")
    if req.decoding not in DECODINGS:
        raise UserError(f"--decoding: one of {', '.join(DECODINGS)}, not {req.decoding!r}")
    db = Database.of(req.db).path
    with writing(db) as unit:
        pid = unit.pool_id(req.pool)
        formats = resolve_formats(req, unit)
    spec = parse_judge(req.judge, formats, name=req.judge_name, api_key_env=req.api_key_env, timeout=req.timeout,
                       concurrency=req.concurrency, drain_after=req.drain_after, cooldown_s=req.cooldown_s)
    spec = with_strategy(spec, req.strategy, formats, name=req.judge_name, api_key_env=req.api_key_env,
                         timeout=req.timeout)
    if req.constraint is not None and (req.decoding != "constrained" or spec.provider != "openai"):
        raise UserError("--constraint: the server's mechanism, for --decoding constrained with an openai: judge "
                        "(local: and fake: judges constrain by themselves)")
    check_samples(req, spec)
    req = dataclasses.replace(req, decoding=decoding_mode(req))   # greedy at T > 0 is stored as sampled
    settings = decoding_settings(req, spec)
    if "constraint" in settings:   # one check call, before anything of the run is recorded or spent
        check_server(spec, next(iter(formats.values())), settings)
    jid = ensure_spec_judge(db, spec, settings)
    # beside the run's request (its options, recorded by the command line): what the run resolved
    config = {"judge": spec.name, "provider": spec.provider, "model": spec.model, "endpoint": spec.endpoint,
              "formats": list(formats)}
    with runs.running(db, req.run_kind, pool=req.pool, key=runs.run_key("score", req.pool, spec.name),
                      config=config) as background:
        return _score(req, db, pid, jid, spec, formats, settings, background)


def _score(req: ScoreRequest, db: Path, pid: int, jid: int, spec: JudgeSpec, formats: dict[str, Format],
           settings: dict, background: runs.Run) -> dict:
    with writing(db) as unit:
        unit.close_orphan_cell_runs(pid, jid, "its process ended without closing it")
        cands = unit.candidate_texts(pid)
        prompts = unit.prompt_texts(pid)
        timings = unit.judge_timings(spec.provider, socket.gethostname()) if spec.shared else []
    recovered = replay_journal(db, req.pool, spec.name, pid)
    plan, notes = plan_calls(cands, list(formats.values()), req.schedule, req.swap_sample, req.seed, req.samples)
    with writing(db) as unit:
        fids = {name: unit.ensure_format(fmt) for name, fmt in formats.items()}
        plan = plan.with_columns(pl.lit(jid, pl.Int32).alias("judge_id"), pl.lit(req.decoding).alias("decoding"),
                                 pl.col("format").replace_strict(fids, return_dtype=pl.Int32).alias("format_id"))
        todo = unit.unanswered(plan, pid, jid)
        cell_runs = {}
        for name in formats:
            if todo.filter(pl.col("format") == name).height:
                fmt_notes = [n for n in notes if n.startswith(name + ":")]
                how = CellRunDescription("score", template=formats[name].template, decoding_settings=settings,
                                         schedule=schedule_of(formats[name], req.schedule), seed=req.seed,
                                         notes="; ".join(fmt_notes) or None)
                cell_runs[name] = unit.start_cell_run(pid, jid, fids[name], how, run_id=background.id)
    todo = todo.with_columns(pl.col("format").replace_strict(cell_runs, default=None, return_dtype=pl.Int32)
                             .alias("cell_run_id"), pl.lit(pid, pl.Int32).alias("pool_id"))
    summary = {"pool": req.pool, "judge": spec.name, "formats": list(formats), "decoding": req.decoding,
               "planned": plan.height, "already_done": plan.height - todo.height,
               "recovered_from_journal": recovered, "made": 0, "failed": 0, "unparsed": 0,
               "status": "finished", "notes": notes, "background_run": background.id}
    if todo.height == 0:
        return summary

    refs_raw = dict(zip(cands["cand_idx"].to_list(), cands["reference"].to_list()))
    known = [v for v in refs_raw.values() if v is not None]
    lo, hi = (min(known), max(known)) if known else (0.0, 1.0)
    refs = {k: ((v - lo) / (hi - lo) if hi > lo else 0.5) for k, v in refs_raw.items() if v is not None}
    texts = {"prompt": dict(zip(prompts["prompt_idx"].to_list(), prompts["prompt"].to_list())),
             "response": dict(zip(cands["cand_idx"].to_list(), cands["response"].to_list()))}
    run = _Scoring(req, spec, formats, db, settings)
    run.background = background
    if spec.shared:
        run.expected = from_timings(timings, dict(todo.group_by("format").len().iter_rows()), req.decoding,
                                    plan_chars(todo, prompts, cands, formats), load_per_core=machine_load())
    progress = Progress(req.pool, spec.name, todo.height, list(cell_runs.values()), show_bar=req.progress)
    journal = journal_path(db, req.pool, spec.name)
    with open(journal, "a", encoding="utf-8") as fh:
        run.journal = fh
        try:
            status = asyncio.run(_execute(run, todo.to_dicts(), texts, refs, progress))
        except KeyboardInterrupt:
            status = "cancelled"
            if run.buffer:
                write_rows(db, run.buffer)
                run.buffer = []
    if not run.write_error:
        journal.unlink(missing_ok=True)  # everything in it is in the database now
    with writing(db) as unit:
        for cell_run_id in cell_runs.values():
            unit.finish_cell_run(cell_run_id, status, judge_model=", ".join(sorted(run.judge_models)) or None)
        if _timings(run):     # what the in-process judge took here: the next estimates rest on it
            unit.record_timings(background.id, socket.gethostname(), spec.provider, spec.model, _timings(run))
        unit.refresh_juries_of(list(cell_runs.values()))    # the juries with this judge as a member see its verdicts
    progress.update(status)
    background.progress(progress.record)
    if run.down_error:
        rec = progress.record
        raise UserError(f"{run.down_error}. The run stopped: {rec['done']} calls were stored, "
                        f"{todo.height - rec['done']} are still to make; run the same command again once "
                        "an endpoint answers")
    if status == "failed":
        raise UserError(f"{run.write_error}. The run stopped making calls; the answers it had received "
                        f"are kept in {journal.name} and are stored by the next run of this command")
    rec = progress.record
    summary.update(made=rec["done"], failed=rec["failed"], unparsed=rec["unparsed"], status=status,
                   tokens_in=rec["tokens_in"], tokens_out=rec["tokens_out"], cell_run_ids=list(cell_runs.values()))
    if len(spec.endpoints) > 1:     # calls answered per endpoint in this run
        summary["endpoints"] = {e: run.answered_by.get(e, 0) for e in spec.endpoints}
    return summary
