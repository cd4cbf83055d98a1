"""The answer journal of a scoring run: every answer is appended the moment it arrives, and the
next run of the same pool and judge stores what a crashed run had not yet written. The folder
beside the database (`DB.progress/`) holds the journals."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl

from ..store import writing

ROW_SCHEMA = {"cell_run_id": pl.Int32, "pool_id": pl.Int32, "judge_id": pl.Int32, "format_id": pl.Int32,
              "prompt_idx": pl.Int32, "a_idx": pl.Int32, "b_idx": pl.Int32, "swapped": pl.Boolean,
              "sample": pl.Int32, "raw": pl.String, "answer": pl.String, "value": pl.Float64,
              "status": pl.String, "error": pl.String, "attempts": pl.Int32, "latency_ms": pl.Float64,
              "tokens_in": pl.Int32, "tokens_out": pl.Int32, "answer_probs": pl.String,
              "expected": pl.Float64, "decoding": pl.String, "endpoint": pl.String}
DECODINGS = ("greedy", "sampled", "constrained")
# The fields a journal left by an earlier version names otherwise: the cell run (before schema 12) and
# the format's answer and its distribution (before schema 20).
RENAMED = {"run_id": "cell_run_id", "label": "answer", "label_probs": "answer_probs"}


def progress_dir(db: Path) -> Path:
    return db.with_name(db.name + ".progress")


def journal_stem(pool: str, judge: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", f"{pool}--{judge}")


def journal_path(db: Path, pool: str, judge: str) -> Path:
    folder = progress_dir(db)
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{journal_stem(pool, judge)}.journal.jsonl"


def write_rows(db: Path, rows: list[dict]) -> dict:
    """One batch, one transaction: upsert the answers (the store's insert_answers)."""
    with writing(db) as unit:
        return unit.insert_answers(pl.DataFrame(rows, schema=ROW_SCHEMA))


def replay_journal(db: Path, pool: str, judge: str, pool_id_now: int | None = None) -> int:
    """Store what a crashed run had answered but not yet written; returns the rows it stored.
    Replaying twice changes nothing (answers are upserted), and rows of a pool that has since been
    replaced (its id is never reused) are dropped."""
    path = journal_path(db, pool, judge)
    if not path.exists():
        return 0
    rows = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                break  # a line cut short by the crash: that call was still in flight
            for before, now in RENAMED.items():
                if before in row:
                    row[now] = row.pop(before)
            rows.append(row)
    stored = 0
    if rows:
        frame = pl.DataFrame(rows, schema=ROW_SCHEMA)
        if pool_id_now is not None:
            frame = frame.filter(pl.col("pool_id") == pool_id_now)
        if frame.height:
            counts = write_rows(db, frame.to_dicts())
            stored = counts["inserted"] + counts["replaced"]
    path.unlink()
    return stored
