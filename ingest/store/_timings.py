"""What scoring runs measured of their judge's speed (`judge_timings`, schema/021): written by the run
that measured it, in its closing unit of work; read for an estimate (ingest.scoring: time estimates)."""

from __future__ import annotations

import os

import duckdb

from . import _sql
from ._database import reader

TIMING_FIELDS = ("format", "decoding", "calls", "chars", "call_s", "load_s")


def record_timings(con, run_id: int, host: str, provider: str, model: str | None, rows: list[dict]) -> None:
    """One row per format and decoding of the run: {format, decoding, calls, chars, call_s, load_s}."""
    for row in rows:
        _sql.execute(con, "insert_judge_timing", run_id=run_id, host=host, provider=provider, model=model,
                     **{k: row[k] for k in TIMING_FIELDS})


def judge_timings(db: str | os.PathLike | None, provider: str, host: str) -> list[dict]:
    """What the runs of `provider` on `host` measured, the latest runs first: {run_id, format,
    decoding, calls, chars, call_s, load_s}; none on a database without the table (written before schema/021,
    not yet upgraded: readers never migrate)."""
    with reader(db) as con:
        return timings_on(con, provider, host)


def timings_on(con, provider: str, host: str) -> list[dict]:
    try:
        found = _sql.rows(con, "judge_timings", provider=provider, host=host)
    except duckdb.CatalogException:
        return []
    return [dict(zip(("run_id", *TIMING_FIELDS), r)) for r in found]
