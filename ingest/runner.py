"""Scoring runs: plan the calls, make them concurrently with retries, and persist every one.

Work is split as in inspect_ai: providers only make a call (ingest/judges); retries, backoff,
concurrency, resume and persistence live here, once. Many workers feed one writer task, which
inserts in batches, each in its own short transaction on a freshly opened connection, so the
dashboard and other readers get the file between batches. Every answer is appended to a journal
the moment it arrives; after a crash (even SIGKILL) the next run replays the journal first, so
nothing answered is lost and only the calls in flight are made again.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from . import _db, runs
from ._errors import UserError
from ._progress import Progress, progress_dir, run_key
from ._redact import redact
from ._schedule import SCHEDULES, plan_calls
from .formats import BUILTIN, Format, load_format_spec
from .judges import CallHints, JudgeError, JudgeReply, JudgeSpec, parse_judge
from .judges._constraint import check_server, settings_for as constraint_settings
from .judges.strategies import with_strategy
from .store import (CALL_KEY, close_orphan_cell_runs, ensure_format, ensure_judge, finish_run, insert_answers,
                    judge_identity, pool_id, start_run, stored_formats, unanswered)

ROW_SCHEMA = {"run_id": pl.Int32, "pool_id": pl.Int32, "judge_id": pl.Int32, "format_id": pl.Int32,
              "prompt_idx": pl.Int32, "a_idx": pl.Int32, "b_idx": pl.Int32, "swapped": pl.Boolean,
              "sample": pl.Int32, "raw": pl.String, "label": pl.String, "value": pl.Float64,
              "status": pl.String, "error": pl.String, "attempts": pl.Int32, "latency_ms": pl.Float64,
              "tokens_in": pl.Int32, "tokens_out": pl.Int32, "label_probs": pl.String,
              "expected": pl.Float64, "decoding": pl.String}
DECODINGS = ("greedy", "constrained")


@dataclass
class ScoreRequest:
    pool: str
    judge: str                                # SPEC: openai:MODEL@URL | local:smollm2 | fake:NAME
    formats: list[str]
    db: str | os.PathLike | None = None
    concurrency: int = 8
    swap_sample: int | str = 0
    schedule: str = "listing"
    seed: int = 0
    timeout: float = 60.0
    max_retries: int = 4
    api_key_env: str | None = None
    judge_name: str | None = None
    logprobs: bool = True
    decoding: str = "greedy"                  # greedy (the paper's protocol) | constrained to the labels
    constraint: str | None = None             # openai: the server's mechanism (judges/_constraint.py)
    format_specs: list[str | os.PathLike] = field(default_factory=list)
    retry_base_s: float = 0.5                 # first backoff; doubles per attempt, with jitter
    retry_cap_s: float = 30.0
    flush_interval_s: float = 0.5
    progress: bool = True
    strategy: str | None = None               # mitigation wrappers, e.g. "swap,ensemble:3" (judges/strategies.py)
    run_kind: str = "score"                   # the background run's kind ("probe" for judgeaudit probe)


def decoding_settings(req: ScoreRequest, spec: JudgeSpec) -> dict:
    """The paper's decoding: greedy, a 16-token verdict budget, no reasoning; `mode` says whether
    the verdict is generated then parsed (greedy) or restricted to the format's labels."""
    if spec.provider == "local":
        if req.decoding == "constrained":
            pointwise = "label-constrained: one forward pass per format over a shared prefix, the most probable label"
            comparative = "label-constrained: the most probable label over the labels' token trie"
        else:
            pointwise = "greedy generate, then parse; the label distribution kept for the expected score"
            comparative = "greedy generate, then parse"
        return {"mode": req.decoding, "temperature": 0.0, "max_tokens": 16, "reasoning": "none",
                "pointwise": pointwise, "comparative": comparative}
    out = {"mode": req.decoding, "temperature": 0.0, "max_tokens": 16, "reasoning": "none",
           "logprobs": req.logprobs, "top_logprobs": 20 if req.logprobs else None, "seed": req.seed}
    if req.decoding == "constrained" and spec.provider == "openai":
        out["constraint"] = constraint_settings(req.constraint)   # the server's mechanism, recorded
    return out


def identity_decoding(settings: dict) -> dict:
    """The decoding settings that bind a judge name (DESIGN.md 'Judge identity'). The mode is not
    among them: the same judge read greedily and constrained gives two cells of one judge."""
    return {k: settings.get(k) for k in ("temperature", "max_tokens", "reasoning")}


def _resolve_formats(req: ScoreRequest, con) -> dict[str, Format]:
    known = {**stored_formats(con), **BUILTIN}
    for path in req.format_specs:
        fmt = load_format_spec(path)
        known[fmt.name] = fmt
    unknown = [f for f in req.formats if f not in known]
    if unknown:
        raise UserError(f"--formats: unknown format(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    missing_template = [f for f in req.formats if known[f].template is None]
    if missing_template:
        raise UserError(f"--formats: {', '.join(missing_template)} has no prompt template (imported "
                        "verdicts only); give one in a --format-spec")
    return {f: known[f] for f in req.formats}


def _journal_path(db: Path, pool: str, judge: str) -> Path:
    folder = progress_dir(db)
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{run_key(pool, judge)}.journal.jsonl"


def _write_rows(db: Path, rows: list[dict]) -> dict:
    """One batch, one transaction: upsert the answers (store.insert_answers)."""
    with _db.writer(db) as con, _db.transaction(con):
        return insert_answers(con, pl.DataFrame(rows, schema=ROW_SCHEMA))


def replay_journal(db: Path, pool: str, judge: str, pool_id_now: int | None = None) -> int:
    """Store what a crashed run had answered but not yet written; returns the rows it stored.
    Replaying twice changes nothing (answers are upserted), and rows of a pool that has since been
    replaced (its id is never reused) are dropped."""
    path = _journal_path(db, pool, judge)
    if not path.exists():
        return 0
    rows = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                break  # a line cut short by the crash: that call was still in flight
    stored = 0
    if rows:
        frame = pl.DataFrame(rows, schema=ROW_SCHEMA)
        if pool_id_now is not None:
            frame = frame.filter(pl.col("pool_id") == pool_id_now)
        if frame.height:
            counts = _write_rows(db, frame.to_dicts())
            stored = counts["inserted"] + counts["replaced"]
    path.unlink()
    return stored


class _Run:
    """The state of one scoring run while its calls are in flight."""

    def __init__(self, req: ScoreRequest, spec: JudgeSpec, formats: dict[str, Format], db: Path,
                 settings: dict):
        self.req, self.spec, self.formats, self.db = req, spec, formats, db
        self.settings = settings   # the decoding sent with every call, as recorded on the runs
        self.buffer: list[dict] = []
        self.journal = None
        self.judge_models: set[str] = set()
        self.job: runs.Run | None = None        # the background run doing this (cancel, progress)
        self.write_error: str | None = None     # set when the writer failed: the workers stop

    def backoff(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.req.retry_cap_s * 4)
        return min(self.req.retry_cap_s, self.req.retry_base_s * 2 ** attempt) * random.uniform(0.5, 1.5)

    def record(self, call: dict, reply: JudgeReply | None, error: str | None, attempts: int) -> dict:
        fmt = self.formats[call["format"]]
        row = {k: call[k] for k in ("run_id", "pool_id", "judge_id", "format_id", "prompt_idx", "a_idx",
                                    "b_idx", "swapped", "sample", "decoding")}
        row.update(attempts=attempts, label_probs=None, expected=None)
        if reply is None:
            row.update(raw=None, label=None, value=None, status="failed", error=redact(error), latency_ms=None,
                       tokens_in=None, tokens_out=None)
            return row
        parsed = fmt.parse(reply.text)
        probs = reply.label_probs
        if probs is None and reply.top_logprobs and reply.tokens and parsed.label is not None:
            first = fmt.label_probs_from_logprobs({reply.tokens[0]: 0.0})
            if first and list(first) == [parsed.label]:  # the first token alone names the verdict
                probs = fmt.label_probs_from_logprobs(reply.top_logprobs[0])
        if reply.model:
            self.judge_models.add(reply.model)
        row.update(raw=reply.text, label=parsed.label, value=parsed.value, status=parsed.status,
                   error=None, latency_ms=reply.latency_ms, tokens_in=reply.tokens_in,
                   tokens_out=reply.tokens_out, label_probs=json.dumps(probs) if probs else None,
                   expected=fmt.expected_value(probs) if fmt.kind == "pointwise" else None)
        return row

    def keep(self, row: dict, progress: Progress) -> None:
        self.journal.write(json.dumps(row) + "\n")
        self.journal.flush()
        self.buffer.append(row)
        progress.count(row["status"], row["error"], row["tokens_in"], row["tokens_out"])


def _messages(fmt: Format, call: dict, texts: dict) -> list[dict]:
    prompt = texts["prompt"][call["prompt_idx"]]
    if fmt.kind == "pointwise":
        content = fmt.render(prompt, response=texts["response"][call["a_idx"]])
    else:
        content = fmt.render(prompt, a=texts["response"][call["a_idx"]], b=texts["response"][call["b_idx"]])
    return [{"role": "user", "content": content}]


async def _call_with_retries(run: _Run, judge, call: dict, texts: dict, hints: CallHints):
    fmt = run.formats[call["format"]]
    messages = _messages(fmt, call, texts)
    last_error = None
    limit = run.req.timeout * run.spec.settings.get("calls_per_verdict", 1)   # a strategy's verdict: several calls
    for attempt in range(run.req.max_retries + 1):
        try:
            reply = await asyncio.wait_for(judge.complete(messages, run.settings, hints), timeout=limit + 5)
            return reply, None, attempt + 1
        except JudgeError as exc:
            last_error = str(exc)
            if not exc.retryable or attempt == run.req.max_retries:
                return None, last_error, attempt + 1
            await asyncio.sleep(run.backoff(attempt, exc.retry_after))
        except asyncio.TimeoutError:
            last_error = f"timeout after {limit:.0f} s"
            if attempt == run.req.max_retries:
                return None, last_error, attempt + 1
            await asyncio.sleep(run.backoff(attempt, None))
        except Exception as exc:  # a provider bug must become a recorded failure, not a gap
            return None, f"{type(exc).__name__}: {exc}", attempt + 1
    return None, last_error, run.req.max_retries + 1


async def _execute(run: _Run, calls: list[dict], texts: dict, refs: dict, progress: Progress) -> str:
    req, spec = run.req, run.spec
    queue: asyncio.Queue = asyncio.Queue()
    for call in calls:
        queue.put_nowait(call)
    stop = asyncio.Event()

    def hints_for(call: dict) -> CallHints:
        fmt = run.formats[call["format"]]
        return CallHints(format_name=fmt.name, kind=fmt.kind, reference_a=refs.get(call["a_idx"]),
                         reference_b=refs.get(call["b_idx"]) if call["b_idx"] is not None else None,
                         key=f"{fmt.name}|{call['prompt_idx']}|{call['a_idx']}|{call['b_idx']}|{call['sample']}",
                         texts={"prompt": texts["prompt"][call["prompt_idx"]], "a": texts["response"][call["a_idx"]],
                                "b": texts["response"].get(call["b_idx"])})

    async def worker(judge) -> None:
        while not stop.is_set():
            try:
                call = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            reply, error, attempts = await _call_with_retries(run, judge, call, texts, hints_for(call))
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
                replies = await asyncio.to_thread(judge.score_pointwise, texts["prompt"][p], texts["response"][a], fmts)
                for call, reply in zip(group, replies):
                    run.keep(run.record(call, reply, None, 1), progress)
            except Exception as exc:
                for call in group:
                    run.keep(run.record(call, None, f"{type(exc).__name__}: {exc}", 1), progress)
        for call in comparative:
            if stop.is_set():
                return
            reply, error, attempts = await _call_with_retries(run, judge, call, texts, hints_for(call))
            run.keep(run.record(call, reply, error, attempts), progress)

    async def writer() -> None:
        while True:
            finished = all(w.done() for w in workers)
            if run.job is not None and run.job.cancelled():   # `judgeaudit cancel`, or Stop on a page
                stop.set()
            if run.buffer:
                rows, run.buffer = run.buffer, []
                try:
                    await asyncio.to_thread(_write_rows, run.db, rows)
                except Exception as exc:
                    # The answers are in the journal; make no more (paid) calls and fail the run.
                    run.write_error = f"could not write verdicts to the database: {type(exc).__name__}: {exc}"
                    stop.set()
                    return
            progress.update()
            if run.job is not None:
                run.job.progress(progress.record)
            if finished and not run.buffer:
                return
            await asyncio.sleep(req.flush_interval_s)

    if spec.shared:
        judge = await asyncio.to_thread(spec.factory)
        judges = [judge]
        workers = [asyncio.create_task(local_worker(judge))]
    else:
        judges = [spec.factory() for _ in range(max(1, min(req.concurrency, len(calls) or 1)))]
        workers = [asyncio.create_task(worker(j)) for j in judges]
    writer_task = asyncio.create_task(writer())
    try:
        await asyncio.gather(*workers)
        await writer_task
    finally:
        for j in judges:
            await j.aclose()
    if run.write_error:
        return "failed"
    return "cancelled" if stop.is_set() else "finished"


def score(req: ScoreRequest) -> dict:
    """Score a pool with one judge under several formats; re-running resumes (DESIGN.md 'score').

    The work is a background run (ingest/runs.py) keyed by pool and judge, so a second run of the
    same pool and judge is refused while the first is alive; the judge name must keep standing for
    the same judge (provider, model, endpoint, decoding), or the run is refused before any call.
    """
    if req.schedule not in SCHEDULES:
        raise UserError(f"--schedule: one of {', '.join(SCHEDULES)}, not {req.schedule!r}")
    if req.concurrency < 1:
        raise UserError("--concurrency: at least 1")
    if req.decoding not in DECODINGS:
        raise UserError(f"--decoding: one of {', '.join(DECODINGS)}, not {req.decoding!r}")
    db = _db.db_path(req.db).resolve()
    with _db.writer(db) as con:
        pid = pool_id(con, req.pool)
        if pid is None:
            raise UserError(f"no pool named '{req.pool}' (see `judgeaudit pools`)")
        formats = _resolve_formats(req, con)
    spec = parse_judge(req.judge, formats, name=req.judge_name, api_key_env=req.api_key_env, timeout=req.timeout)
    spec = with_strategy(spec, req.strategy, formats, name=req.judge_name, api_key_env=req.api_key_env,
                         timeout=req.timeout)
    if req.constraint is not None and (req.decoding != "constrained" or spec.provider != "openai"):
        raise UserError("--constraint: the server's mechanism, for --decoding constrained with an openai: judge "
                        "(local: and fake: judges constrain by themselves)")
    decoding = decoding_settings(req, spec)
    if "constraint" in decoding:   # one check call, before anything of the run is recorded or spent
        check_server(spec, next(iter(formats.values())), decoding)
    identity = judge_identity(spec.provider, spec.model, spec.endpoint,
                              params=spec.settings if spec.provider == "fake" else None,
                              decoding=identity_decoding(decoding))
    with _db.writer(db) as con, _db.transaction(con):
        jid = ensure_judge(con, spec.name, spec.provider, spec.model, spec.endpoint, spec.settings, identity)
    config = {"pool": req.pool, "judge": spec.name, "provider": spec.provider, "model": spec.model,
              "endpoint": spec.endpoint, "formats": list(formats), "schedule": req.schedule,
              "swap_sample": req.swap_sample, "seed": req.seed, "decoding": req.decoding,
              "concurrency": req.concurrency, "api_key_env": req.api_key_env, "strategy": req.strategy}
    with runs.running(db, req.run_kind, pool=req.pool, key=f"score:{req.pool}:{spec.name}", config=config) as job:
        return _score(req, db, pid, jid, spec, formats, decoding, job)


def _score(req: ScoreRequest, db: Path, pid: int, jid: int, spec: JudgeSpec, formats: dict[str, Format],
           decoding: dict, job: runs.Run) -> dict:
    with _db.writer(db) as con, _db.transaction(con):
        close_orphan_cell_runs(con, pid, jid, "its process ended without closing it")
        cands = _db.frame(con, "SELECT cand_idx, prompt_idx, position, reference, response FROM candidates "
                               "WHERE pool_id = $p ORDER BY cand_idx", {"p": pid})
        prompts = _db.frame(con, "SELECT prompt_idx, prompt FROM prompts WHERE pool_id = $p ORDER BY prompt_idx",
                            {"p": pid})
    recovered = replay_journal(db, req.pool, spec.name, pid)
    plan, notes = plan_calls(cands, list(formats.values()), req.schedule, req.swap_sample, req.seed)
    with _db.writer(db) as con, _db.transaction(con):
        fids = {name: ensure_format(con, fmt) for name, fmt in formats.items()}
        plan = plan.with_columns(pl.lit(jid, pl.Int32).alias("judge_id"), pl.lit(req.decoding).alias("decoding"),
                                 pl.col("format").replace_strict(fids, return_dtype=pl.Int32).alias("format_id"))
        todo = unanswered(con, plan, pid, jid)
        cell_runs = {}
        for name in formats:
            if todo.filter(pl.col("format") == name).height:
                fmt_notes = [n for n in notes if n.startswith(name + ":")]
                cell_runs[name] = start_run(con, pid, jid, formats[name], fids[name], "score",
                                            template=formats[name].template, decoding=decoding,
                                            schedule=req.schedule if formats[name].pairing == "tournament"
                                            else formats[name].pairing, seed=req.seed,
                                            notes="; ".join(fmt_notes) or None, job_id=job.id)
    todo = todo.with_columns(pl.col("format").replace_strict(cell_runs, default=None, return_dtype=pl.Int32)
                             .alias("run_id"), pl.lit(pid, pl.Int32).alias("pool_id"))
    summary = {"pool": req.pool, "judge": spec.name, "formats": list(formats), "decoding": req.decoding,
               "planned": plan.height, "already_done": plan.height - todo.height,
               "recovered_from_journal": recovered, "made": 0, "failed": 0, "unparsed": 0,
               "status": "finished", "notes": notes, "background_run": job.id}
    if todo.height == 0:
        return summary

    refs_raw = dict(zip(cands["cand_idx"].to_list(), cands["reference"].to_list()))
    known = [v for v in refs_raw.values() if v is not None]
    lo, hi = (min(known), max(known)) if known else (0.0, 1.0)
    refs = {k: ((v - lo) / (hi - lo) if hi > lo else 0.5) for k, v in refs_raw.items() if v is not None}
    texts = {"prompt": dict(zip(prompts["prompt_idx"].to_list(), prompts["prompt"].to_list())),
             "response": dict(zip(cands["cand_idx"].to_list(), cands["response"].to_list()))}
    run = _Run(req, spec, formats, db, decoding)
    run.job = job
    progress = Progress(req.pool, spec.name, todo.height, list(cell_runs.values()), show_bar=req.progress)
    journal_path = _journal_path(db, req.pool, spec.name)
    with open(journal_path, "a", encoding="utf-8") as journal:
        run.journal = journal
        try:
            status = asyncio.run(_execute(run, todo.to_dicts(), texts, refs, progress))
        except KeyboardInterrupt:
            status = "cancelled"
            if run.buffer:
                _write_rows(db, run.buffer)
                run.buffer = []
    if status != "failed":
        journal_path.unlink(missing_ok=True)  # everything in it is in the database now
    with _db.writer(db) as con, _db.transaction(con):
        for rid in cell_runs.values():
            finish_run(con, rid, status, judge_model=", ".join(sorted(run.judge_models)) or None)
    progress.update(status)
    job.progress(progress.record)
    if status == "failed":
        raise UserError(f"{run.write_error}. The run stopped making calls; the answers it had received "
                        f"are kept in {journal_path.name} and are stored by the next run of this command")
    rec = progress.record
    summary.update(made=rec["done"], failed=rec["failed"], unparsed=rec["unparsed"], status=status,
                   tokens_in=rec["tokens_in"], tokens_out=rec["tokens_out"], run_ids=list(cell_runs.values()))
    return summary
