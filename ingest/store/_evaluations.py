"""Downstream evaluation in the store (schema 007): studies, generated answers and judged outcomes.

The only module that writes those tables (audit/_studies.py reads them). Each write is one short transaction; re-running an
evaluation skips answers and outcomes already stored, and a failed judge call is replaced by the
next attempt, never a parsed one.
"""

from __future__ import annotations

import json
import os

import polars as pl

from .._errors import UserError
from ._database import next_id, one, transaction, writer
from .connection import pool_id

GENERATION_SCHEMA = {"condition": pl.String, "seed": pl.Int64, "train_run": pl.String, "base_model": pl.String,
                     "prompt_idx": pl.Int64, "answer": pl.String, "answer_len": pl.Int64, "ref_idx": pl.Int64,
                     "ref_len": pl.Int64, "markdown": pl.Boolean, "tokens_out": pl.Int64,
                     "truncated": pl.Boolean}
EVALUATION_SCHEMA = {"condition": pl.String, "seed": pl.Int64, "prompt_idx": pl.Int64, "judge_id": pl.Int64,
                     "raw_ab": pl.String, "value_ab": pl.Float64, "status_ab": pl.String, "error_ab": pl.String,
                     "raw_ba": pl.String, "value_ba": pl.Float64, "status_ba": pl.String, "error_ba": pl.String,
                     "outcome": pl.Float64}
KEY = ["condition", "seed", "prompt_idx"]


def ensure_study(db: str | os.PathLike | None, name: str, pool: str, heldout: dict) -> int:
    """The study's id, created on first use. A name already used for another pool, or with another
    held-out rule (heldout's rule, share and seed; n is not compared), is refused."""
    with writer(db) as con, transaction(con):
        pid = pool_id(con, pool)
        row = one(con, "SELECT study_id, pool_id, heldout FROM studies WHERE name = $n", {"n": name})
        if row:
            if row[1] != pid:
                raise UserError(f"--study {name}: that study belongs to another pool; choose another name")
            stored = json.loads(row[2]) if isinstance(row[2], str) else (row[2] or {})
            if _rule(stored) != _rule(heldout):
                raise UserError(f"--study {name}: that study's held-out rule is {_rule(stored)}, not "
                                f"{_rule(heldout)}; use the same --heldout-share/--heldout-seed or another name")
            return row[0]
        sid = next_id(con, "studies", "study_id")
        con.execute("INSERT INTO studies (study_id, name, pool_id, heldout) VALUES ($id, $n, $p, $h)",
                    {"id": sid, "n": name, "p": pid, "h": json.dumps(heldout)})
        return sid


def _rule(heldout: dict) -> dict:
    return {k: heldout.get(k) for k in ("rule", "share", "seed") if heldout.get(k) is not None}


def insert_generations(db: str | os.PathLike | None, study_id: int, rows: list[dict],
                       run_id: int | None = None) -> int:
    """Store answers (one transaction); answers already stored for a key are kept."""
    if not rows:
        return 0
    frame = pl.DataFrame(rows, schema=GENERATION_SCHEMA).with_columns(
        pl.lit(study_id, pl.Int64).alias("study_id"), pl.lit(run_id, pl.Int64).alias("run_id"))
    with writer(db) as con, transaction(con):
        con.register("gen_df", frame.to_arrow())
        count = "SELECT count(*) FROM generations WHERE study_id = $s"
        before = one(con, count, {"s": study_id})[0]
        con.execute("INSERT INTO generations (study_id, condition, seed, train_run, base_model, prompt_idx, answer, "
                    "answer_len, ref_idx, ref_len, markdown, tokens_out, truncated, run_id) "
                    "SELECT study_id, condition, seed, train_run, base_model, prompt_idx, answer, answer_len, "
                    "ref_idx, ref_len, markdown, tokens_out, truncated, run_id FROM gen_df "
                    "ON CONFLICT DO NOTHING")
        after = one(con, count, {"s": study_id})[0]
    return after - before


def insert_evaluations(db: str | os.PathLike | None, study_id: int, rows: list[dict],
                       run_id: int | None = None) -> int:
    """Store outcomes (one transaction), replacing a stored row only where it had a failed call."""
    if not rows:
        return 0
    frame = pl.DataFrame(rows, schema=EVALUATION_SCHEMA).with_columns(
        pl.lit(study_id, pl.Int64).alias("study_id"), pl.lit(run_id, pl.Int64).alias("run_id"))
    with writer(db) as con, transaction(con):
        con.register("eval_df", frame.to_arrow())
        con.execute("DELETE FROM evaluations e USING eval_df n WHERE e.study_id = n.study_id "
                    "AND e.condition = n.condition AND e.seed = n.seed AND e.prompt_idx = n.prompt_idx "
                    "AND e.judge_id = n.judge_id AND (e.status_ab = 'failed' OR e.status_ba = 'failed')")
        con.execute("INSERT INTO evaluations (study_id, condition, seed, prompt_idx, judge_id, raw_ab, value_ab, "
                    "status_ab, error_ab, raw_ba, value_ba, status_ba, error_ba, outcome, run_id) "
                    "SELECT study_id, condition, seed, prompt_idx, judge_id, raw_ab, value_ab, status_ab, error_ab, "
                    "raw_ba, value_ba, status_ba, error_ba, outcome, run_id FROM eval_df ON CONFLICT DO NOTHING")
    return frame.height


