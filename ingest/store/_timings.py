"""What scoring runs measured of their judge's speed (`judge_timings`, schema/021, and the machine's
load then, schema/022): written by the run that measured it, in its closing unit of work; read for an
estimate (ingest.scoring: time estimates)."""

from __future__ import annotations

import os

import duckdb

from . import _sql
from ._database import reader

TIMING_FIELDS = ("format", "decoding", "calls", "chars", "call_s", "load_s", "load_per_core")


def record_timings(con, run_id: int, host: str, provider: str, model: str | None, rows: list[dict]) -> None:
    """One row per format and decoding of the run: {format, decoding, calls, chars, call_s, load_s,
    load_per_core (None where the machine did not say)}."""
    for row in rows:
        _sql.execute(con, "insert_judge_timing", run_id=run_id, host=host, provider=provider, model=model,
                     **{k: row.get(k) for k in TIMING_FIELDS})


def judge_timings(db: str | os.PathLike | None, provider: str, host: str) -> list[dict]:
    """What the runs of `provider` on `host` measured, the latest runs first: {run_id, format,
    decoding, calls, chars, call_s, load_s, load_per_core}; none on a database without the table (written
    before schema/021, not yet upgraded: readers never migrate); load_per_core None before schema/022."""
    with reader(db) as con:
        return timings_on(con, provider, host)


def timings_on(con, provider: str, host: str) -> list[dict]:
    try:
        cursor = _sql.execute(con, "judge_timings", provider=provider, host=host)
    except duckdb.CatalogException:
        return []
    names = [d[0] for d in cursor.description]
    return [{"load_per_core": None, **dict(zip(names, r))} for r in cursor.fetchall()]
