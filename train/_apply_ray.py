"""`apply --engine ray`: the per-batch scoring of train/apply.py as Ray Data's `map_batches` over
`read_parquet`, one input shard at a time, each written whole (temporary name, then renamed) at the
path the in-process engine writes, in the same row order (Ray's order-preserving execution). The
student travels to the workers inside the batch function, so a cluster's workers need no copy of
the model folder. `ray.init()` joins the cluster RAY_ADDRESS names (Ray reads the variable itself)
or, unset, starts a local one for the run."""

from __future__ import annotations

from pathlib import Path

from ingest import UserError
from ingest.scoring.judges.distilled import Student

from ._shards import COLUMNS, OUT_COLUMNS, out_schema, score_batch, write_whole


def score_on_ray(student: Student, judge: str, todo: list[tuple[Path, Path]], batch_rows: int, progress, meter,
                 done: list[int]) -> None:
    """Score each (shard, target) in turn, appending each shard's rows to `done` once it is written
    whole; meter.batch after each batch the driver writes (a cancel stops there)."""
    try:
        import ray   # deferred: the optional extra, needed by --engine ray alone
    except ImportError:
        raise UserError("--engine ray needs the optional extra: pip install 'judgeaudit[ray]'") from None
    import pyarrow as pa
    import pyarrow.parquet as pq
    started = not ray.is_initialized()
    if started:
        ray.init(include_dashboard=False, log_to_driver=False, configure_logging=False)
    ctx = ray.data.DataContext.get_current()
    ctx.execution_options.preserve_order = True
    ctx.enable_progress_bars = False

    def fn(batch: dict) -> dict:
        return score_batch(student, judge, batch)
    try:
        for path, target in todo:
            ds = ray.data.read_parquet(str(path)).select_columns(list(COLUMNS))
            scored = ds.map_batches(fn, batch_format="numpy", batch_size=batch_rows)
            n = 0

            def write(tmp: Path) -> None:
                nonlocal n
                with pq.ParquetWriter(tmp, out_schema()) as writer:
                    for batch in scored.iter_batches(batch_format="pyarrow", batch_size=batch_rows):
                        writer.write_table(pa.table({c: batch[c].cast(pa.string()) for c in OUT_COLUMNS}))
                        n += batch.num_rows
                        meter.batch(batch.num_rows)
            write_whole(target, write)
            done.append(n)
            progress(f"{path}: {n} rows -> {target} (ray)")
    finally:
        if started:
            ray.shutdown()
