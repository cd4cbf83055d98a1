"""Listing-position selection of tournament cells: whether the candidate a cell selects (its
top-scored one, ties broken by the audit's seeded key) tends to be a prompt's first- or
last-listed one. Out of core: the pool is read in blocks of whole prompts (_scores.read_blocks), and
each block adds its prompts' counts."""

from __future__ import annotations

import contextlib
import os

import numpy as np
import polars as pl

from . import _metrics as m
from ._cells import PoolView
from ._read import reading
from ._scores import BLOCK_CANDIDATES, read_blocks, read_cells, tiebreak_keys


def _block_counts(view: PoolView, position: np.ndarray, row: np.ndarray) -> np.ndarray:
    """(prompts with >= 2 scored candidates, selected first-listed, selected last-listed, sum of 1/k)
    over one block's prompts for one cell."""
    s = view.scores(row)
    idx, g = view.tie_layout(~np.isnan(s))
    if idx.size == 0:
        return np.zeros(4)
    chosen = idx[m.selected_member(g, s[idx], view.key[idx])]
    starts = m.group_starts(g)
    sizes = np.diff(np.append(starts, g.size))
    first = position[idx][starts]
    last = position[idx][starts + sizes - 1]
    return np.array([sizes.size, np.sum(position[chosen] == first), np.sum(position[chosen] == last),
                     np.sum(1.0 / sizes)])


def position_selection(db: str | os.PathLike | None, pool: str, seed: int = 0,
                       block: int | None = None) -> pl.DataFrame:
    """Tournament cells: how often the selected (top-scored, seeded tie-break) candidate of a
    prompt is its first- or last-listed one, against the uniform rate 1/k.

    Columns: judge, format, decoding, n_prompts (with >= 2 scored candidates), first_rate, last_rate,
    uniform_rate (mean of 1/k).
    """
    with reading(db) as read:
        pid = read.pool_id(pool)
        cells = read_cells(read, pid)
        cells = cells.filter(pl.col("pairing") == "tournament") if cells.height else cells
        totals = np.zeros((cells.height, 4))
        if cells.height:
            with contextlib.closing(read_blocks(read, pid, cells, block or BLOCK_CANDIDATES)) as blocks:
                for sc, cand_idx, _ in blocks:
                    # the same seeded tie-break keys as the audit's top-1, drawn for this block's candidates
                    view = PoolView(sc, seed, tiebreak_keys(cand_idx, seed))
                    position = sc.position[sc.order]
                    for c in range(cells.height):
                        totals[c] += _block_counts(view, position, sc.S[c])
    rows = []
    for c, cell in enumerate(cells.iter_rows(named=True)):
        n, first, last, inverse_k = totals[c]
        row = {"judge": cell["judge"], "format": cell["format"], "decoding": cell["decoding"], "n_prompts": int(n)}
        if n:
            row.update(first_rate=first / n, last_rate=last / n, uniform_rate=inverse_k / n)
        rows.append(row)
    return pl.DataFrame(rows, schema={"judge": pl.String, "format": pl.String, "decoding": pl.String,
                                      "n_prompts": pl.Int64,
                                      "first_rate": pl.Float64, "last_rate": pl.Float64,
                                      "uniform_rate": pl.Float64})
