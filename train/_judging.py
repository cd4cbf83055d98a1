"""Judging: each evaluation judge compares every stored answer with the prompt's reference-top
answer in both orders, in the paper's comparative format (`tournament`), through the judge
providers and the scoring runner's calls with retries. An order whose call succeeded is kept; a
re-run asks again for the failed order only."""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from audit import judged, stored_generations
from ingest import redact
from ingest.scoring import Caller, ScoreRequest, decoding_settings, ensure_spec_judge
from ingest.scoring.formats import BUILTIN
from ingest.scoring.judges import CallHints
from ingest.store import insert_evaluations

from ._conditions import Condition
from ._request import EvalRequest

FORMAT = "tournament"


def outcome(value_ab: float | None, value_ba: float | None) -> float | None:
    """The student's answer was Response A in the first call and Response B in the second; margins
    favour Response A. 1 if it wins both orders, 0 if it loses both, 0.5 otherwise; None unless
    both parsed."""
    if value_ab is None or value_ba is None:
        return None
    if value_ab > 0 and value_ba < 0:
        return 1.0
    if value_ab < 0 and value_ba > 0:
        return 0.0
    return 0.5



# pragma: no mutate start (make mutate: judging, tested with the model by the slow tests)
@dataclass
class _Judging:
    """What the judge workers share: calls to make and finished rows waiting to be written."""
    calls: list[dict]
    rows: list[dict] = field(default_factory=list)
    done: int = 0


async def _judge_one(spec_str: str, spec, req: EvalRequest, db: Path, calls: list[dict], texts: dict,
                     flush, cancelled) -> str:
    """Make one judge's calls with `req.concurrency` workers (a single shared judge where the spec
    says so), handing finished rows to `flush` every `req.flush_every`; 'finished' or 'cancelled'."""
    fmt = BUILTIN[FORMAT]
    sreq = ScoreRequest(pool=req.pool, judge=spec_str, formats=[FORMAT], db=db, timeout=req.timeout,
                        max_retries=req.max_retries, api_key_env=req.api_key_env, logprobs=False)
    caller = Caller(sreq, spec, {FORMAT: fmt}, decoding_settings(sreq, spec))
    state = _Judging(list(calls))
    stop = asyncio.Event()

    async def both_orders(judge, call) -> dict:
        row = {k: call[k] for k in ("condition", "seed", "prompt_idx", "judge_id")}
        for order, a, b in (("ab", "student", "reference"), ("ba", "reference", "student")):
            if order in call.get("kept", {}):
                row.update(call["kept"][order])
                continue
            c = {"format": FORMAT, "prompt_idx": call["key"], "a_idx": (call["key"], a), "b_idx": (call["key"], b)}
            hints = CallHints(format_name=FORMAT, kind="comparative",
                              key=f"eval|{call['condition']}|{call['seed']}|{call['prompt_idx']}|{order}|{call['digest']}")
            reply, error, _ = await caller.call(judge, c, texts, hints)
            parsed = fmt.parse(reply.text) if reply is not None else None
            row.update({f"raw_{order}": reply.text if reply is not None else None,
                        f"value_{order}": parsed.value if parsed is not None else None,
                        f"status_{order}": parsed.status if parsed is not None else "failed",
                        f"error_{order}": redact(error) if error else None})
        row["outcome"] = outcome(row["value_ab"], row["value_ba"])
        return row

    async def worker(judge) -> None:
        while state.calls and not stop.is_set():
            row = await both_orders(judge, state.calls.pop())
            state.rows.append(row)
            state.done += 1
            if len(state.rows) >= req.flush_every:
                rows, state.rows = state.rows, []
                await asyncio.to_thread(flush, rows, state.done)
            if cancelled():
                stop.set()

    judges = [await asyncio.to_thread(spec.factory)] if spec.shared else \
        [spec.factory() for _ in range(max(1, min(req.concurrency, len(calls))))]
    try:
        await asyncio.gather(*(worker(j) for j in judges))
    finally:
        for j in judges:
            await j.aclose()
    await asyncio.to_thread(flush, state.rows, state.done)
    return "cancelled" if stop.is_set() else "finished"


def judge_all(req: EvalRequest, db: Path, study_id: int, specs: list, conds: list[Condition],
              items: pl.DataFrame, run_id, cancelled, progress) -> dict:
    """Judge the conditions' stored answers to `items` not judged yet, judge by judge (specs: pairs
    of the judge string and its parsed spec); returns {judged, unparsed, status}."""
    gens = stored_generations(db, study_id).filter(
        pl.struct("condition", "seed").is_in(pl.DataFrame({"condition": [c.name for c in conds],
                                                           "seed": [c.seed for c in conds]}).to_struct().implode())
        & pl.col("prompt_idx").is_in(items["prompt_idx"].implode()))
    prompt_text = dict(zip(items["prompt_idx"].to_list(), items["prompt"].to_list()))
    ref_text = dict(zip(items["prompt_idx"].to_list(), items["ref_answer"].to_list()))
    summary = {"judged": 0, "unparsed": 0, "status": "finished"}
    for spec_str, spec in specs:
        sreq = ScoreRequest(pool=req.pool, judge=spec_str, formats=[FORMAT], logprobs=False)
        jid = ensure_spec_judge(db, spec, decoding_settings(sreq, spec))
        stored = judged(db, study_id, jid)
        done = stored.filter((pl.col("status_ab") != "failed") & (pl.col("status_ba") != "failed"))
        todo = gens.join(done, on=["condition", "seed", "prompt_idx"], how="anti")
        # an order whose call succeeded is kept: only the failed order is asked again
        kept = {(r["condition"], r["seed"], r["prompt_idx"]): {
                    order: {f"{f}_{order}": r[f"{f}_{order}"] for f in ("raw", "value", "status", "error")}
                    for order in ("ab", "ba") if r[f"status_{order}"] != "failed"}
                for r in stored.iter_rows(named=True)}
        calls, texts = [], {"prompt": {}, "response": {}}
        for r in todo.iter_rows(named=True):
            key = f"{r['condition']}|{r['seed']}|{r['prompt_idx']}"
            texts["prompt"][key] = prompt_text[r["prompt_idx"]]
            texts["response"][(key, "student")] = r["answer"]
            texts["response"][(key, "reference")] = ref_text[r["prompt_idx"]]
            calls.append({"condition": r["condition"], "seed": r["seed"], "prompt_idx": r["prompt_idx"],
                          "judge_id": jid, "key": key,
                          "kept": kept.get((r["condition"], r["seed"], r["prompt_idx"]), {}),
                          "digest": hashlib.blake2b(r["answer"].encode(), digest_size=6).hexdigest()})
        calls.reverse()            # workers pop from the end: judge in stored order

        def flush(rows, done, spec=spec, n=len(calls)):
            insert_evaluations(db, study_id, rows, run_id)
            summary["judged"] += len(rows)
            summary["unparsed"] += sum(r["outcome"] is None for r in rows)
            progress({"phase": "judging", "judge": spec.name, "done": done, "total": n})

        if calls:
            status = asyncio.run(_judge_one(spec_str, spec, req, db, calls, texts, flush, cancelled))
            if status == "cancelled":
                summary["status"] = "cancelled"
                break
    return summary


# pragma: no mutate end
