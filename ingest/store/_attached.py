"""Attached verdict sources (migrations 016, 018, 026): Parquet files registered as a pool's read-only verdicts,
read where they lie. The writes (attach, detach) run in a unit of work's transaction and touch two tables
of their own, `cell_runs` (an attach's cell runs hold its files and parsed answers) and `attached_ids` (each
file row's prompt and candidate ids, mapped from its names once, at attach); the read side, the
`verdict_source` view, is made on a connection by connection.verdict_source (the audit's readers, and the
writers that must see attached calls: the scorer's answered calls, the juries)."""

from __future__ import annotations

import os

import polars as pl

from .._errors import UserError
from . import _sql
from ._database import transaction, writer
from .connection import attached_views, verdict_source


def attach_files(con, pool: int, files: list[dict]) -> None:
    """Drop the pool's attached verdict source and make the views over `files` (path, size, mtime_ns,
    n_rows, judge, format) on this connection (attached_raw, attached_judgings (the files' judgings),
    verdict_source: the stored rows and these files' rows once their judgings are recorded), for the
    checks that follow in the same transaction. Nothing of the files is written until record_judging."""
    _sql.script(con, "delete_attached", pool_id=pool)
    attached_views(con, [(pool, f["path"], f["judge"], f["format"]) for f in files])
    con.register("attached_files_df", pl.DataFrame(files, schema={
        "path": pl.String, "size": pl.Int64, "mtime_ns": pl.Int64, "n_rows": pl.Int64, "judge": pl.String,
        "format": pl.String}).to_arrow())


def ensure_source(con, pool: int | None = None) -> None:
    """Make the view `verdict_source` (stored and attached rows) on a writer's connection, from the
    attached files as this transaction sees them; a changed file of `pool` is a UserError naming it."""
    broken = verdict_source(con)
    if pool is not None and pool in broken:
        raise UserError(broken[pool])


def first_problem(con, pool: int) -> tuple | None:
    """(path, row, field, problem) of the first attached row that is no verdict, or None."""
    return _sql.first(con, "attached_first_problem", pool_id=pool)


def judgings(con, pool: int) -> list[tuple[str, str]]:
    """The (judge, format) names of the judgings the attached files hold."""
    return _sql.rows(con, "attached_judging_names", pool_id=pool)


def record_judging(con, pool: int, judge: str, fmt: str, judge_id: int, format_id: int, source_file: str,
                   parsed: pl.DataFrame) -> int:
    """Record one judging (judge, format) of the attached files as a cell run of source 'attach' holding
    the files (as attach_files registered them) and the judging's distinct answers parsed (`parsed`:
    judge, format, raw, label, value, status); its id. cell_runs: one of the two tables an attach writes."""
    con.register("parsed_raws", parsed.to_arrow())
    try:
        return _sql.first(con, "insert_attached_cell_run", pool_id=pool, judge_id=judge_id, format_id=format_id,
                          judge=judge, format=fmt, source_file=source_file)[0]
    finally:
        con.unregister("parsed_raws")


def map_ids(con, pool: int) -> int:
    """Map each row of the pool's attached files to the pool's ids once (attached_ids, schema/026), its
    judgings recorded first (record_judging); how many rows were mapped: fewer than the files hold when a row
    names a prompt or candidate the pool lacks (unknown_call names the first). One judging at a time: each
    judging's rows then lie in row groups of their own (insert_attached_ids.sql)."""
    return sum(_sql.first(con, "insert_attached_ids", pool_id=pool, cell_run_id=run)[0]
               for run, in _sql.rows(con, "attached_cell_runs", pool_id=pool))


def unknown_call(con, pool: int) -> tuple | None:
    """(path, row, field, value, prompt_id, format, kind) of the first attached row naming a prompt or
    candidate the pool lacks, or None."""
    return _sql.first(con, "attached_unknown_call", pool_id=pool)


def repeated_call(con, pool: int) -> tuple | None:
    """(judge, format, prompt_id, n) of a call the pool's verdict source holds twice, or None."""
    return _sql.first(con, "attached_repeated_call", pool_id=pool)


def distinct_raws(con, pool: int) -> pl.DataFrame:
    """judge, format, raw: each distinct answer of each judging (judge, format) of the attached files once."""
    return _sql.frame(con, "attached_distinct_raws", pool_id=pool)


def attached_judging_ids(con, pool: int) -> list[tuple]:
    """(judge_id, format_id, judge, format) of each judging the pool's attached files hold."""
    return _sql.rows(con, "attached_cell_ids", pool_id=pool)


def detach_verdicts(db: str | os.PathLike | None, pool: str) -> dict:
    """Drop the pool's attached verdict source (the files stay where they are); the counts dropped."""
    from .connection import pool_id
    with writer(db) as con, transaction(con):
        pid = pool_id(con, pool)
        files, judgings = _sql.first(con, "attached_counts", pool_id=pid)
        _sql.script(con, "delete_attached", pool_id=pid)
    return {"pool": pool, "files": files, "cells": judgings}        # the key "cells" counts judgings
