"""The parsed comparative calls of a pool, each oriented to its item (the preference pairs of
train.pairs are built from them)."""

from __future__ import annotations

import os

import polars as pl

from ._read import reading

COMPARISON_COLUMNS = ("judge", "format", "decoding", "prompt_idx", "x", "y", "swapped", "value")


def comparisons(db: str | os.PathLike | None, pool: str) -> pl.DataFrame:
    """One row per parsed comparative call between two different candidates (every sample).

    Columns: judge, format, decoding, prompt_idx, x, y (cand_idx of the pair in the item's
    orientation: x is the anchored or the earlier-listed candidate), swapped (y was shown in slot
    A), value (the margin in favour of slot A: > 0 A is better, 0 a tie).
    """
    with reading(db) as read:
        return read.frame("comparisons", pool_id=read.pool_id(pool)).select(COMPARISON_COLUMNS)
