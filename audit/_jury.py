"""Juries in the audit's outputs (docs/command-line.md#judgeaudit-jury).

A jury's verdicts are stored by the store as rows of a judge of its own (provider `jury`): its
members' parsed sample-0 values combined in SQL (ingest/store/_juries.py says how and when), so every
cell-wise function of the audit computes a jury's cells as it computes any judge's. What this module
adds is the mark: a jury's cells carry `aggregate` = "jury" (in place of "single": a jury votes on
sample 0 of its members' calls) and `members`, the member judges in the order given.
"""

from __future__ import annotations

import os

import polars as pl

from ._read import reading

JURY_COLUMNS = {"judge": pl.String, "vote": pl.String, "members": pl.List(pl.String)}


def juries_of(read, pid: int) -> pl.DataFrame:
    """The pool's juries on an open connection: judge (the jury's name), vote, members."""
    if read.frame("has_juries").is_empty():
        return pl.DataFrame(schema=JURY_COLUMNS)
    return read.frame("juries", pool_id=pid).cast(JURY_COLUMNS)


def juries(db: str | os.PathLike | None, pool: str) -> pl.DataFrame:
    """One row per jury of the pool. Columns: judge (the jury's name), vote (mean | median |
    majority), members (list of judge names, in the order given)."""
    with reading(db) as read:
        return juries_of(read, read.pool_id(pool))


def mark_juries(cells: pl.DataFrame, found: pl.DataFrame) -> pl.DataFrame:
    """`cells` (any frame with a `judge` column) with a jury's rows marked: when the pool has
    juries, `aggregate` becomes "jury" on their rows (added as "single" elsewhere where the frame
    has none) and `members` lists each jury's members (null on other judges' rows). Without
    juries, `cells` unchanged."""
    if found.is_empty() or "judge" not in cells.columns:
        return cells
    is_jury = pl.col("judge").is_in(found["judge"].to_list())
    base = pl.col("aggregate") if "aggregate" in cells.columns else pl.lit("single")
    out = cells.with_columns(pl.when(is_jury).then(pl.lit("jury")).otherwise(base).alias("aggregate"))
    members = found.select("judge", "members")
    return out.drop("members", strict=False).join(members, on="judge", how="left", maintain_order="left")


def with_juries(db: str | os.PathLike | None, pool: str, cells: pl.DataFrame) -> pl.DataFrame:
    """mark_juries with the pool's juries read from the database (for a command's printed cells)."""
    return mark_juries(cells, juries(db, pool))
