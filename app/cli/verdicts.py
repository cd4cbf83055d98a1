"""`judgeaudit export-verdicts`: every stored judge call of a pool, one row each, as Parquet or
JSONL (docs/command-line.md#judgeaudit-export-verdicts); `import-verdicts` (in `pools`) reads both back."""

from __future__ import annotations

import os
import time
from pathlib import Path

import click
import polars as pl

from ._common import current, db_option, emit_json, json_option, refresh_derived
from ingest import UserError

KINDS = {".parquet": "parquet", ".jsonl": "jsonl"}


def _write(kind: str, batches, path: Path) -> int:
    """Write the record batches to `path` as they come (no more than one batch in memory); the
    number of rows written."""
    import pyarrow.parquet as pq
    n, writer = 0, None
    with open(path, "wb") as fh:
        try:
            for batch in batches:
                if kind == "parquet":
                    writer = writer or pq.ParquetWriter(fh, batch.schema, compression="zstd")
                    writer.write_batch(batch)
                elif batch.num_rows:   # one JSON object a line, as DuckDB wrote it
                    pl.from_arrow(batch).write_csv(fh, include_header=False, quote_style="never")
                n += batch.num_rows
        finally:
            if writer is not None:
                writer.close()
    return n


@click.command("export-verdicts")
@click.option("--pool", required=True, help="the pool whose verdicts to write")
@click.option("--out", required=True, type=click.Path(path_type=Path),
              help="FILE.parquet or FILE.jsonl (replaced if it exists)")
@db_option
@json_option
def export_verdicts_cmd(pool, out, db, as_json):
    """Write every stored judge call of a pool, one row each (Parquet or JSONL): judge, format,
    decoding, prompt_id, candidate_a, candidate_b, sample, raw, label, value, status, error,
    label_probs, tokens_in, tokens_out, latency_ms, endpoint."""
    from audit import verdict_batches
    kind = KINDS.get(out.suffix.lower())
    if kind is None:
        raise UserError(f"--out {out}: write a .parquet or .jsonl file, not '{out.suffix or '(no suffix)'}'")
    if out.is_dir():
        raise UserError(f"--out {out}: is a directory, not a file")
    if not out.parent.is_dir():
        raise UserError(f"--out {out}: no such folder {out.parent}")
    tmp = out.with_name(f".{out.name}.{os.getpid()}.part")   # a failed export leaves no half-written file
    try:
        rows = _write(kind, verdict_batches(current(db), pool, json_lines=kind == "jsonl"), tmp)
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    if as_json:
        emit_json({"pool": pool, "out": str(out), "format": kind, "rows": rows})
    else:
        click.echo(f"wrote {rows} verdicts of pool '{pool}' to {out} ({kind})")


@click.command("attach-verdicts")
@click.argument("patterns", nargs=-1, required=True)
@click.option("--pool", required=True, help="the pool the verdicts are about")
@click.option("--hive", is_flag=True, help="read judge and format from judge=J/format=F/ folders above each file")
@click.option("--format-spec", "format_specs", type=click.Path(path_type=Path), multiple=True,
              help="TOML file defining a format the verdicts use (repeatable)")
@db_option
@json_option
def attach_verdicts_cmd(patterns, pool, hive, format_specs, db, as_json):
    """Register Parquet files (globs; `**` descends) with the verdict file's columns as the pool's
    read-only verdict source, read where they lie: nothing is copied, and every command reads them as
    if imported. Attaching again replaces the pool's attached files; a file changed or removed since
    is refused by name until then."""

    from ingest.scoring import attach_verdicts
    start = time.perf_counter()
    result = attach_verdicts(db, list(patterns), pool, hive=hive, format_specs=list(format_specs))
    result["seconds"] = round(time.perf_counter() - start, 3)
    refresh_derived(db, pool)
    if as_json:
        emit_json(result)
    else:
        cells = ", ".join(f"{c['judge']}/{c['format']}" for c in result["cells"])
        click.echo(f"attached {result['files']} file(s), {result['rows']} verdicts, to pool '{pool}' ({cells}) "
                   f"in {result['seconds']:.1f} s; they are read where they lie")


@click.command("detach-verdicts")
@click.option("--pool", required=True, help="the pool whose attached files to drop")
@db_option
@json_option
def detach_verdicts_cmd(pool, db, as_json):
    """Drop the pool's attached verdict source (the files stay where they are)."""
    from ingest.store import detach_verdicts
    result = detach_verdicts(db, pool)
    refresh_derived(db, pool)
    if as_json:
        emit_json(result)
    else:
        click.echo(f"detached {result['files']} file(s) ({result['cells']} cells) from pool '{pool}'")
