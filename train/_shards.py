"""What both engines of `apply` share (train/apply.py): the columns, the per-batch scoring, and
writing a shard whole."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import numpy as np

from ingest.scoring.judges.distilled import Student

COLUMNS = ("prompt_id", "prompt", "candidate_id", "response")
OUT_COLUMNS = ("judge", "format", "prompt_id", "candidate_id", "raw")


def score_batch(student: Student, judge: str, batch: dict) -> dict:
    """One batch of pool rows (columns prompt_id, prompt, candidate_id, response) -> verdict rows."""
    raw = student.answers([str(p) for p in batch["prompt"]], [str(r) for r in batch["response"]])
    n = len(raw)
    return {"judge": np.array([judge] * n, dtype=object), "format": np.array([student.format_name] * n, dtype=object),
            "prompt_id": np.asarray(batch["prompt_id"], dtype=object),
            "candidate_id": np.asarray(batch["candidate_id"], dtype=object), "raw": np.array(raw, dtype=object)}


def out_schema():
    import pyarrow as pa
    return pa.schema([(c, pa.string()) for c in OUT_COLUMNS])


def drop_leftovers(target: Path) -> int:
    """Remove the temporary files a killed run left for `target` (a kill skips write_whole's clean-up;
    one live run at a time writes an output folder: its run key); how many."""
    gone = 0
    for tmp in target.parent.glob(f".{target.name}.*.tmp") if target.parent.is_dir() else []:
        tmp.unlink(missing_ok=True)
        gone += 1
    return gone


def write_whole(target: Path, write: Callable) -> None:
    """Run write(tmp_path), then rename the temporary file to `target`: a reader never sees half a shard."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()
