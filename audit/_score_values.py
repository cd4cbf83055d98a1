"""The score levels of a pool's cells (the Formats page's histograms): per cell, each distinct
normalised score and how many candidates hold it.

A pointwise candidate's score is its one call's value, normalised: (v - lo) / (hi - lo), rounded (a
pointwise call is one per candidate and sample, the store's rule); so a pointwise cell's levels are its
calls' values grouped and counted in SQL, every cell in one read (cell_value_counts.sql), then
normalised value by value as _scores.normalised_scores does call by call. A comparative candidate's
score is a mean over its calls (a tournament's matches, an anchored format's forward calls), so those
cells are scored candidate by candidate as before (_scores.read_blocks) and their scores tallied.
"""

from __future__ import annotations

import contextlib
import os

import numpy as np
import polars as pl

from . import _metrics as m
from ._read import reading
from ._scores import BLOCK_CANDIDATES, merged_levels, read_blocks

SCHEMA = {"judge": pl.String, "format": pl.String, "decoding": pl.String, "score": pl.String, "s": pl.Float64,
          "n": pl.UInt32, "mult5": pl.Boolean}


def pointwise_levels(counts: pl.DataFrame) -> pl.DataFrame:
    """judge, format, decoding, score, s, n, scale_0_100 from cell_value_counts' rows of pointwise cells (value, n per
    cell): each value normalised and rounded as normalised_scores does a call's (the same arithmetic),
    values that round alike added up."""
    value, lo, hi = (counts[c].cast(pl.Float64).to_numpy() for c in ("value", "value_lo", "value_hi"))
    with np.errstate(invalid="ignore", divide="ignore"):
        s = np.round((value - lo) / (hi - lo), m.ROUND)
    return counts.with_columns(pl.Series("s", s, dtype=pl.Float64)).filter(pl.col("s").is_not_nan()) \
        .group_by("judge", "format", "decoding", "score", "s").agg(pl.col("n").sum(), pl.col("scale_0_100").first())


def tally(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """m.levels of the scores that are not NaN (sorted distinct values, their counts), counted by hashing
    (a comparative cell's means take many values, where m.levels would sort them all)."""
    counts = pl.Series("s", scores, dtype=pl.Float64, nan_to_null=True).drop_nulls().value_counts()
    counts = counts.sort("s")
    return counts["s"].to_numpy(), counts["count"].to_numpy().astype(np.int64)


def comparative_levels(read, pid: int, cells: pl.DataFrame, block: int) -> pl.DataFrame:
    """judge, format, decoding, score, s, n, scale_0_100 of the comparative cells (one row each: judge_id,
    format_id, decoding, score, aggregate, pairing, value_lo, value_hi, scale_0_100, as _scores.cell_score_rows
    reads a cell): each candidate's score in the cell (read in blocks of whole prompts), tallied."""
    tallies: list[list] = [[] for _ in range(cells.height)]
    with contextlib.closing(read_blocks(read, pid, cells, block)) as blocks:
        for sc, _, _ in blocks:
            for c in range(cells.height):
                tallies[c].append(tally(sc.S[c]))
    frames = []
    for cell, parts in zip(cells.iter_rows(named=True), tallies):
        values, n = merged_levels(parts)
        frames.append(pl.DataFrame({"s": values, "n": n}, schema={"s": pl.Float64, "n": pl.Int64}).with_columns(
            *[pl.lit(cell[k]).alias(k) for k in ("judge", "format", "decoding", "score")],
            pl.lit(bool(cell["scale_0_100"])).alias("scale_0_100")))
    return pl.concat(frames) if frames else None


def score_values(db: str | os.PathLike | None, pool: str, block: int | None = None) -> pl.DataFrame:
    """One row per (judge, format, decoding, score, score value): how many candidates hold it.

    Columns: judge, format, decoding, score (label | expected), s (normalised score), n, mult5 (the
    raw 0-100 value is a multiple of 5; null for other scales). In (judge, format, decoding) order, a
    cell's label values before its expected ones, each cell's values ascending. Pointwise cells are
    counted in SQL; comparative ones read in blocks of whole prompts (read_blocks), so memory follows
    the block, not the pool.
    """
    with reading(db) as read:
        pid = read.pool_id(pool)
        counts = read.frame("cell_value_counts", pool_id=pid)
        comparative = counts.filter(pl.col("kind") != "pointwise").unique(
            ["judge_id", "format_id", "decoding"]).sort("judge", "format", "decoding").with_columns(
            pl.lit("single").alias("aggregate"))
        parts = [pointwise_levels(counts.filter(pl.col("kind") == "pointwise"))]
        if comparative.height:
            parts.append(comparative_levels(read, pid, comparative, block or BLOCK_CANDIDATES))
    columns = ["judge", "format", "decoding", "score", "s", "n", "scale_0_100"]
    levels = pl.concat([p.select(columns).cast({"n": pl.Int64}) for p in parts if p is not None and p.height])\
        if any(p is not None and p.height for p in parts) else None
    if levels is None:
        return pl.DataFrame(schema=SCHEMA)
    mult5 = pl.when(pl.col("scale_0_100")).then(((pl.col("s") * 100).round(6) % 5) == 0).otherwise(None)
    return levels.sort("judge", "format", "decoding", "score", "s", descending=[False, False, False, True, False]) \
        .select("judge", "format", "decoding", "score", "s", pl.col("n").cast(pl.UInt32), mult5.alias("mult5"))
