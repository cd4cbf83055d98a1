"""Downstream evaluation (`judgeaudit evaluate`): answer a pool's held-out prompts with each trained
adapter and with the base model (batched greedy generation, left padding), then judge every answer
against the prompt's reference-top answer in both orders with the paper's comparative format
(`tournament`), through the judge providers and the runner's retries. One outcome per (condition,
seed, prompt, evaluation judge): 1 wins both orders, 0 loses both, 0.5 otherwise; null when a
verdict did not parse (or the call failed), and a re-run asks again for failed calls only.

The steps live beside it: the request (train/_request.py), the conditions from the run folders
(train/_conditions.py), the held-out rule check (train/_heldout_check.py), generation
(train/_generation.py) and judging (train/_judging.py). None of them imports torch, transformers
or peft: generation loads the models through train/_model.py, inside its functions.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import polars as pl

from audit import eval_prompts, stored_generations, study_outcomes
from ingest import UserError
from ingest.scoring.formats import BUILTIN
from ingest.scoring.judges import parse_judge
from ingest.store import Database, ensure_current, ensure_study

from ._conditions import Condition, condition_name, resolve_runs
from ._generation import generate_all, has_markdown
from ._heldout_check import check_heldout, rule_key
from ._judging import FORMAT, judge_all, outcome
from ._request import EvalRequest
from .heldout import heldout_prompt_ids

__all__ = ["Condition", "EvalRequest", "check_heldout", "condition_name", "evaluate", "export_outcomes",
           "has_markdown", "outcome", "resolve_runs", "rule_key"]


# pragma: no mutate start (make mutate: orchestration, tested with the model by the slow tests)
def evaluate(req: EvalRequest, run=None) -> dict:
    """Generate, then judge; `run` is the background run (ingest.runs.Run) or None. Returns a summary."""
    req.check()
    db = Database.of(req.db).path
    ensure_current(db)
    cancelled = run.cancelled if run is not None else (lambda: False)
    progress = run.progress if run is not None else (lambda record: None)
    run_id = run.id if run is not None else None
    specs = [(s, parse_judge(s, {FORMAT: BUILTIN[FORMAT]}, api_key_env=req.api_key_env, timeout=req.timeout))
             for s in req.judges]
    if len({spec.name for _, spec in specs}) < len(specs):
        raise UserError("--judge: two evaluation judges with the same name")
    conds = resolve_runs(db, req.runs)
    prompts = eval_prompts(db, req.pool)
    ids, rule = heldout_prompt_ids(prompts, req.heldout_share, req.heldout_seed)
    heldout_notes = check_heldout(conds, rule)
    items = prompts.filter(pl.col("prompt_id").is_in(ids)).sort("prompt_idx")
    no_ref = items.filter(pl.col("ref_idx").is_null()).height
    items = items.filter(pl.col("ref_idx").is_not_null())
    if req.max_prompts:
        items = items.head(req.max_prompts)
    if items.height == 0:
        raise UserError(f"pool '{req.pool}': no held-out prompt has a reference-top answer to judge against")
    study_id = ensure_study(db, req.study_name, req.pool, rule)
    started = time.monotonic()
    made = generate_all(req, db, study_id, conds, items, run_id, cancelled, progress)
    gen_s = time.monotonic() - started
    summary = {"study": req.study_name, "pool": req.pool, "heldout": rule, "heldout_notes": heldout_notes,
               "n_prompts": items.height,
               "n_without_reference": no_ref, "conditions": [{"condition": c.name, "seed": c.seed, "run": c.run,
                                                              "base": c.base, "data_rule": c.data_rule}
                                                             for c in conds],
               "judges": [spec.name for _, spec in specs], "generated": made, "generation_s": round(gen_s, 2),
               "judged": 0, "unparsed": 0, "status": "cancelled" if cancelled() else "finished"}
    if summary["status"] == "finished":
        started = time.monotonic()
        summary.update(judge_all(req, db, study_id, specs, conds, items, run_id, cancelled, progress))
        summary["judging_s"] = round(time.monotonic() - started, 2)
    summary["generations_stored"] = stored_generations(db, study_id).height
    progress({"phase": "done", **{k: summary[k] for k in ("generated", "judged", "unparsed", "status")}})
    return summary


def export_outcomes(db, study: str, path: str | os.PathLike) -> int:
    """Write the study's outcomes as the JSONL `contrasts --outcomes` reads; returns rows written."""
    frame = study_outcomes(db, study)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for row in frame.iter_rows(named=True):
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return frame.height
# pragma: no mutate end
