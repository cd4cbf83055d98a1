"""`judgeaudit apply DIR GLOB --out OUT`: a distilled student scores Parquet shards of pool-file rows
into verdict shards (docs/scale.md#a-student-applied-to-shards).

Each input shard gives one output shard of the verdict file's columns (judge, format, prompt_id,
candidate_id, raw: the answer the threshold rule gives, which `attach-verdicts` parses), at the same
path relative to the shards' common folder. A shard is read and written a batch at a time (memory
follows one batch, not the shard nor the number of shards), written under a temporary name and
renamed when whole; a shard whose output exists is skipped, so a run killed and run again scores no
shard twice. `--engine ray` runs the same per-batch function under Ray Data (`map_batches` over
`read_parquet`), on the cluster RAY_ADDRESS names or, unset, a local one; it writes the same rows.

`apply_run` is the command's work as a run (kind `apply`, keyed by the output folder): progress in
rows with rate and ETA, a cancel seen between two batches (the shard being written is dropped whole,
the shards written stay), and, with `attach`, the output shards attached to a pool once all are
scored.
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
from ._shards import COLUMNS, OUT_COLUMNS, drop_leftovers, out_schema, score_batch, write_whole


def _shards(pattern: str) -> tuple[list[Path], Path]:
    paths = sorted(Path(p) for p in glob.glob(pattern, recursive=True) if p.endswith(".parquet") and os.path.isfile(p))
    if not paths:
        raise UserError(f"apply: no Parquet file matches {pattern!r}")
    root = Path(os.path.commonpath([str(p.parent.resolve()) for p in paths]))
    return paths, root


class Meter:
    """Rows scored against the rows to score: `batch(n)` after each batch (it raises Stopped once a
    cancel is asked), `report(doc)` gets {phase, done, total, rate, eta_s} at most every EVERY_S."""
    EVERY_S = 1.0

    def __init__(self, total: int, report: Callable[[dict], None], stop: Callable[[], bool]):
        self.total, self.done, self.report, self.stop = total, 0, report, stop
        self.start = self.last = time.perf_counter()

    def batch(self, n: int) -> None:
        self.done += n
        now = time.perf_counter()
        if now - self.last >= self.EVERY_S or self.done >= self.total:
            self.last = now
            rate = self.done / (now - self.start) if now > self.start else None
            self.report({"phase": "scoring", "done": self.done, "total": self.total, "rate": rate,
                         "eta_s": (self.total - self.done) / rate if rate else None})
        if self.stop():
            raise Stopped()


class Stopped(Exception):
    """A cancel was asked: the shard being written is dropped (write_whole), the others stay."""


def apply(model_dir: str | Path, pattern: str, out: str | Path, engine: str = "local", judge: str | None = None,
          batch_rows: int = 65536, progress: Callable[[str], None] = lambda line: None,
          report: Callable[[dict], None] = lambda doc: None, stop: Callable[[], bool] = lambda: False) -> dict:
    """Score every shard the glob matches; returns {shards, scored, skipped, rows, seconds, rows_per_s,
    stopped}. report and stop: the Meter's (a run's progress and cancel)."""
    import pyarrow.parquet as pq
    if engine not in ("local", "ray"):
        raise UserError(f"--engine {engine!r}: local or ray")
    student = Student.load(model_dir)
    judge = judge or f"distilled-{student.sha256[:12]}"
    paths, root = _shards(pattern)
    out = Path(out)
    todo = []
    for p in paths:
        target = out / p.resolve().relative_to(root)
        if not target.exists():
            todo.append((p, target))
    left = sum(drop_leftovers(t) for _, t in todo)
    progress(f"{len(paths)} shards, {len(paths) - len(todo)} already scored"
             + (f"; {left} half-written shards of a killed run removed" if left else ""))
    meter = Meter(sum(pq.ParquetFile(p).metadata.num_rows for p, _ in todo), report, stop)
    start = time.perf_counter()
    done: list[int] = []
    try:
        if engine == "local":
            for p, t in todo:
                done.append(_score_shard(student, judge, p, t, batch_rows, progress, meter))
        else:
            score_on_ray(student, judge, todo, batch_rows, progress, meter, done)
    except Stopped:
        progress(f"stopped on request after {len(done)} of {len(todo)} shards; the shard being written was dropped")
    seconds = time.perf_counter() - start
    rows = sum(done)
    return {"judge": judge, "format": student.format_name, "sha256": student.sha256, "shards": len(paths),
            "scored": len(done), "skipped": len(paths) - len(todo), "rows": rows, "seconds": round(seconds, 3),
            "rows_per_s": round(rows / seconds, 1) if seconds > 0 and rows else None, "engine": engine,
            "stopped": len(done) < len(todo), "out": str(out)}


def apply_key(out: str | Path) -> str:
    """The exclusive key of an apply run: its output folder (two runs never write one folder)."""
    from ingest.runs import run_key
    return run_key("apply", str(Path(out).resolve()))


def apply_run(db, model_dir: str | Path, pattern: str, out: str | Path, engine: str = "local",
              judge: str | None = None, batch_rows: int = 65536, attach: str | None = None,
              progress: Callable[[str], None] = lambda line: None) -> dict:
    """`apply` as a run of its own (kind `apply`, pool `attach`, one live run per output folder):
    progress and cancel through the run; once every shard is scored, with `attach`, the output
    shards attached to that pool (attach-verdicts: it replaces the pool's attached files)."""
    from ingest.runs import running
    with running(db, "apply", pool=attach, key=apply_key(out)) as run:
        doc = apply(model_dir, pattern, out, engine=engine, judge=judge, batch_rows=batch_rows, progress=progress,
                    report=run.progress, stop=run.cancelled)
        if attach and not doc["stopped"]:
            from ingest.scoring import attach_verdicts   # deferred: the scoring package, for this step alone
            run.progress({"phase": f"attaching the output to pool {attach}"})
            progress(f"attaching {out} to pool {attach}")
            done = attach_verdicts(db, [f"{out}/**/*.parquet"], attach)
            doc["attached"] = {"pool": attach, "files": done["files"], "rows": done["rows"]}
        run.progress({"phase": "stopped" if doc["stopped"] else "finished", "done": doc["rows"],
                      "total": doc["rows"], "rate": doc["rows_per_s"], "result": doc})
        return doc


def _score_shard(student: Student, judge: str, path: Path, target: Path, batch_rows: int, progress,
                 meter: Meter) -> int:
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
                meter.batch(batch.num_rows)
    write_whole(target, write)
    progress(f"{path}: {rows} rows -> {target}")
    return rows
