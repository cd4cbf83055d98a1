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
from . import _sql
from ._database import next_id, transaction, writer
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
        row = _sql.first(con, "stored_study", name=name)
        if row:
            if row[1] != pid:
                raise UserError(f"--study {name}: that study belongs to another pool; choose another name")
            stored = json.loads(row[2]) if isinstance(row[2], str) else (row[2] or {})
            if _rule(stored) != _rule(heldout):
                raise UserError(f"--study {name}: that study's held-out rule is {_rule(stored)}, not "
                                f"{_rule(heldout)}; use the same --heldout-share/--heldout-seed or another name")
            return row[0]
        sid = next_id(con, "studies")
        _sql.execute(con, "insert_study", study_id=sid, name=name, pool_id=pid, heldout=json.dumps(heldout))
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
        try:
            before = _sql.first(con, "study_generation_count", study_id=study_id)[0]
            _sql.execute(con, "insert_generations")
            after = _sql.first(con, "study_generation_count", study_id=study_id)[0]
        finally:
            con.unregister("gen_df")
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
        try:
            _sql.execute(con, "delete_failed_evaluations")
            _sql.execute(con, "insert_evaluations")
        finally:
            con.unregister("eval_df")
    return frame.height


