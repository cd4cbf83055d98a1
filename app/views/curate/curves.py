"""The training runs' curves for the Curate & Train page, read from the progress.jsonl each run's
trainer writes in its folder: SFT runs' train and eval loss, DPO runs' loss and reward margins."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import polars as pl


def _records(row: dict) -> Iterator[dict]:
    """The progress records of one run (a row of the runs table), none if its folder has no log."""
    folder = (row.get("progress") or {}).get("out") or (row.get("config") or {}).get("out") or row["out_dir"]
    path = Path(folder) / "progress.jsonl" if folder else None
    if path is None or not path.is_file():
        return
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            yield json.loads(line)


def train_curves(rows: list[dict], caption) -> pl.DataFrame:
    """run, step, loss, kind (train | eval) from the progress.jsonl of each training run's folder."""
    out = [{"run": caption(row), "step": rec["step"], "loss": rec[key], "kind": kind}
           for row in rows for rec in _records(row)
           for kind, key in (("train", "loss"), ("eval", "eval_loss")) if rec.get(key) is not None]
    return pl.DataFrame(out, schema={"run": pl.String, "step": pl.Int64, "loss": pl.Float64, "kind": pl.String})


def dpo_curves(rows: list[dict], caption) -> pl.DataFrame:
    """run, step, value, figure (loss | rewards/margins) of each DPO run's progress.jsonl."""
    out = [{"run": caption(row), "step": rec["step"], "value": rec[k], "figure": k}
           for row in rows for rec in _records(row) if rec.get("rewards/margins") is not None
           for k in ("loss", "rewards/margins") if rec.get(k) is not None]
    return pl.DataFrame(out, schema={"run": pl.String, "step": pl.Int64, "value": pl.Float64, "figure": pl.String})
