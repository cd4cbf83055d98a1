"""`judgeaudit train` as a background run (ingest.runs): rank 0 holds the run (queue 'train', one at
a time), polls its cancel and reports progress; other ranks of `accelerate launch` just train."""

from __future__ import annotations

import os
from pathlib import Path

from ingest import UserError


def train_job(db, *, subset, base: str, out=None, **hyper) -> dict:
    """Train under `ingest.runs.running(db, "train", queue="train")`; the metrics."""
    from ingest._subsets import subset_by_hash
    from ingest.runs import running

    from ._model import resolve_base
    from .finetune import TrainConfig, file_sha256, train
    subset = Path(subset)
    if not subset.is_file():
        raise UserError(f"--subset {subset}: no such file")
    resolve_base(base)                              # a bad --base fails before the run is recorded
    record = subset_by_hash(db, file_sha256(subset)) or {}
    record = {k: record.get(k) for k in ("subset_id", "pool", "name", "policy", "judge", "format", "rate", "seed")
              if k in record}
    rank0 = int(os.environ.get("RANK", "0")) == 0
    if not rank0:
        if out is None:
            raise UserError("--out is required with more than one process (accelerate launch)")
        return train(TrainConfig(subset=str(subset), base=base, out=str(out), **hyper), subset_record=record)
    config = {"subset": str(subset.resolve()), "base": base, "out": str(Path(out).resolve()) if out else None, **hyper, **{f"subset_{k}": v for k, v in record.items()}}
    with running(db, "train", pool=record.get("pool"), config=config, queue="train") as run:
        folder = Path(out) if out is not None else run.out_dir
        cfg = TrainConfig(subset=str(subset), base=base, out=str(folder), **hyper)
        return train(cfg, cancelled=run.cancelled, progress=lambda rec: run.progress({**rec, "out": str(folder)}),
                     run_id=run.id, subset_record=record)
