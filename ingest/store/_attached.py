"""Attached verdict sources (migration 016): Parquet files registered as a pool's read-only verdicts,
read where they lie. The writes (attach, detach) run in a unit of work's transaction; the read side,
the audit's `verdict_source` view, is connection.verdict_source."""

from __future__ import annotations

import os

import polars as pl

from . import _sql
from ._database import transaction, writer


def attach_files(con, pool: int, files: list[dict]) -> None:
    """Replace the pool's attached files by `files` (path, size, mtime_ns, n_rows, judge, format) and
    make the views over them on this connection (attached_raw, verdict_source: the stored rows and
    these files' rows), for the checks that follow in the same transaction."""
    _sql.script(con, "delete_attached", pool_id=pool)
    for f in files:
        _sql.execute(con, "insert_attached_file", pool_id=pool, **f)
    _sql.execute(con, "set_attached_files", files=[f["path"] for f in files])
    _sql.execute(con, "attached_raw")
    _sql.execute(con, "verdict_source_attached")


def first_problem(con, pool: int) -> tuple | None:
    """(path, row, field, problem) of the first attached row that is no verdict, or None."""
    return _sql.first(con, "attached_first_problem", pool_id=pool)


def cell_names(con, pool: int) -> list[tuple[str, str]]:
    """The (judge, format) names of the cells the attached files hold."""
    return _sql.rows(con, "attached_cell_names", pool_id=pool)


def record_cell(con, pool: int, judge: str, fmt: str, judge_id: int, format_id: int, kind: str,
                cell_run_id: int) -> None:
    _sql.execute(con, "insert_attached_cell", pool_id=pool, judge=judge, format=fmt, judge_id=judge_id,
                 format_id=format_id, kind=kind, cell_run_id=cell_run_id)


def unknown_call(con, pool: int) -> tuple | None:
    """(path, row, field, value, prompt_id, format, kind) of the first attached row naming a prompt or
    candidate the pool lacks, or None."""
    return _sql.first(con, "attached_unknown_call", pool_id=pool)


def repeated_call(con, pool: int) -> tuple | None:
    """(judge, format, prompt_id, n) of a call the pool's verdict source holds twice, or None."""
    return _sql.first(con, "attached_repeated_call", pool_id=pool)


def distinct_raws(con, pool: int) -> pl.DataFrame:
    """format_id, raw: each distinct answer of the attached files once."""
    return _sql.frame(con, "attached_distinct_raws", pool_id=pool)


def record_parses(con, pool: int, parsed: pl.DataFrame) -> None:
    """Store the parse (format_id, raw, label, value, status) of each distinct attached answer."""
    con.register("parsed_raws", parsed.to_arrow())
    try:
        _sql.execute(con, "insert_attached_parses", pool_id=pool)
    finally:
        con.unregister("parsed_raws")


def attached_cells(con, pool: int) -> list[tuple]:
    """(judge_id, format_id, judge, format) of each cell the pool's attached files hold."""
    return _sql.rows(con, "attached_cell_ids", pool_id=pool)


def detach_verdicts(db: str | os.PathLike | None, pool: str) -> dict:
    """Drop the pool's attached verdict source (the files stay where they are); the counts dropped."""
    from .connection import pool_id
    with writer(db) as con, transaction(con):
        pid = pool_id(con, pool)
        files, cells = _sql.first(con, "attached_counts", pool_id=pid)
        _sql.script(con, "delete_attached", pool_id=pid)
    return {"pool": pool, "files": files, "cells": cells}
