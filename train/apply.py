"""`judgeaudit apply DIR GLOB --out OUT`: a distilled student scores Parquet shards of pool-file rows
into verdict shards (docs/scale.md#a-student-applied-to-shards).

Each input shard gives one output shard of the verdict file's columns (judge, format, prompt_id,
candidate_id, raw: the answer the threshold rule gives, which `attach-verdicts` parses), at the same
path relative to the shards' common folder. A shard is read and written a batch at a time (memory
follows one batch, not the shard nor the number of shards), written under a temporary name and
renamed when whole; a shard whose output exists is skipped, so a run killed and run again scores no
shard twice. `--engine ray` runs the same per-batch function under Ray Data (`map_batches` over
`read_parquet`), on the cluster RAY_ADDRESS names or, unset, a local one; it writes the same rows.
"""

from __future__ import annotations

import glob
import os
import time
from pathlib import Path
from typing import Callable

from ingest import UserError
from ingest.scoring.judges.distilled import Student

from ._apply_ray import score_on_ray
from ._shards import COLUMNS, OUT_COLUMNS, out_schema, score_batch, write_whole


def _shards(pattern: str) -> tuple[list[Path], Path]:
    paths = sorted(Path(p) for p in glob.glob(pattern, recursive=True) if p.endswith(".parquet") and os.path.isfile(p))
    if not paths:
        raise UserError(f"apply: no Parquet file matches {pattern!r}")
    root = Path(os.path.commonpath([str(p.parent.resolve()) for p in paths]))
    return paths, root


def apply(model_dir: str | Path, pattern: str, out: str | Path, engine: str = "local", judge: str | None = None,
          batch_rows: int = 65536, progress: Callable[[str], None] = lambda line: None) -> dict:
    """Score every shard the glob matches; returns {shards, scored, skipped, rows, seconds, rows_per_s}."""
    student = Student.load(model_dir)
    judge = judge or f"distilled-{student.sha256[:12]}"
    paths, root = _shards(pattern)
    out = Path(out)
    todo = []
    for p in paths:
        target = out / p.resolve().relative_to(root)
        if not target.exists():
            todo.append((p, target))
    progress(f"{len(paths)} shards, {len(paths) - len(todo)} already scored")
    start = time.perf_counter()
    if engine == "local":
        rows = sum(_score_shard(student, judge, p, t, batch_rows, progress) for p, t in todo)
    elif engine == "ray":
        rows = score_on_ray(student, judge, todo, batch_rows, progress)
    else:
        raise UserError(f"--engine {engine!r}: local or ray")
    seconds = time.perf_counter() - start
    return {"judge": judge, "format": student.format_name, "sha256": student.sha256, "shards": len(paths),
            "scored": len(todo), "skipped": len(paths) - len(todo), "rows": rows, "seconds": round(seconds, 3),
            "rows_per_s": round(rows / seconds, 1) if seconds > 0 and rows else None, "engine": engine}


def _score_shard(student: Student, judge: str, path: Path, target: Path, batch_rows: int, progress) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq
    src = pq.ParquetFile(path)
    missing = [c for c in COLUMNS if c not in src.schema_arrow.names]
    if missing:
        raise UserError(f"{path}: no column {', '.join(missing)} (a shard has the pool file's columns)")
    rows = 0

    def write(tmp: Path) -> None:
        nonlocal rows
        with pq.ParquetWriter(tmp, out_schema()) as writer:
            for batch in src.iter_batches(batch_size=batch_rows, columns=list(COLUMNS)):
                scored = score_batch(student, judge, batch.to_pydict())
                writer.write_table(pa.table({c: pa.array(scored[c], type=pa.string()) for c in OUT_COLUMNS}))
                rows += batch.num_rows
    write_whole(target, write)
    progress(f"{path}: {rows} rows -> {target}")
    return rows
