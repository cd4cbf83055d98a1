"""Pools: a validated pool file stored under a name (everything about a pool deleted on --replace:
sql/delete_pool.sql), and the names of the pools stored."""

from __future__ import annotations

import itertools
import os

import polars as pl

from .._errors import UserError
from ..files import PoolStream, file_sha256
from . import _sql
from ._database import next_id, reader, transaction, writer
from .connection import find_pool
from .database import Database


def import_pool(db: str | os.PathLike | None, path: str | os.PathLike, name: str,
                replace: bool = False, capped: bool = True, batch_rows: int | None = None) -> dict:
    """Validate a pool file and store it under `name`. Lands whole or not at all. `capped`: the file
    within the upload limits (files.limits); the command line passes False (any size).

    The file streams: read, checked and stored a batch of about `batch_rows` rows at a
    time (files.batch_rows) in one transaction; a problem in any batch rolls back the batches
    before it. The first batch is read before the database is touched."""
    if not name or not name.strip():
        raise UserError("--pool: a pool name is required")
    stream = PoolStream(path, capped, batch_rows)
    batches = iter(stream)
    first = next(batches)
    digest = file_sha256(path)
    with writer(db) as con, transaction(con):
        old = find_pool(con, name)
        if old is not None and not replace:
            raise UserError(f"pool '{name}' already exists (use --replace to overwrite it and "
                            "its verdicts)")
        replaced = 0
        if old is not None:
            replaced = _sql.first(con, "pool_verdict_count", pool_id=old)[0]
            _sql.script(con, "delete_attached", pool_id=old)    # first: it keeps the attach's id mark
            _sql.script(con, "delete_pool", pool_id=old)
        pid = next_id(con, "pools")
        _sql.execute(con, "insert_pool", pool_id=pid, name=name, source_file=str(path), source_sha256=digest,
                     layout=stream.layout)
        for prompts, candidates in itertools.chain([first], batches):
            con.register("prompts_df", prompts.with_columns(pl.lit(pid, pl.Int32).alias("pool_id")).to_arrow())
            con.register("candidates_df", candidates.with_columns(pl.lit(pid, pl.Int32).alias("pool_id")).to_arrow())
            try:
                _sql.execute(con, "insert_prompts")
                _sql.execute(con, "insert_candidates")
            finally:
                con.unregister("prompts_df")
                con.unregister("candidates_df")
    return {"pool": name, "layout": stream.layout, "replaced_verdicts": replaced, **stream.shape()}


def pool_names(db: str | os.PathLike | None) -> list[str]:
    """The names of the stored pools, sorted; none when there is no database file yet."""
    p = Database.of(db).path
    if not p.is_file():
        return []
    with reader(p) as con:
        return [r[0] for r in _sql.rows(con, "pool_names")]
