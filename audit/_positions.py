"""Listing-position selection of tournament cells: whether the candidate a cell selects (its
top-scored one, ties broken by the audit's seeded key) tends to be a prompt's first- or
last-listed one."""

from __future__ import annotations

import os

import numpy as np
import polars as pl

from . import _metrics as m
from ._cells import PoolView
from ._scores import pool_scores


def position_selection(db: str | os.PathLike | None, pool: str, seed: int = 0) -> pl.DataFrame:
    """Tournament cells: how often the selected (top-scored, seeded tie-break) candidate of a
    prompt is its first- or last-listed one, against the uniform rate 1/k.

    Columns: judge, format, decoding, n_prompts (with >= 2 scored candidates), first_rate, last_rate,
    uniform_rate (mean of 1/k).
    """
    sc = pool_scores(db, pool)
    view = PoolView(sc, seed)              # the same seeded tie-break keys as the audit's top-1
    position = sc.position[sc.order]
    rows = []
    for c, cell in enumerate(sc.cells.iter_rows(named=True)):
        if cell["pairing"] != "tournament":
            continue
        s = view.scores(sc.S[c])
        idx, g = view.tie_layout(~np.isnan(s))
        if idx.size == 0:
            rows.append({"judge": cell["judge"], "format": cell["format"], "decoding": cell["decoding"],
                         "n_prompts": 0})
            continue
        chosen = idx[m.selected_member(g, s[idx], view.key[idx])]
        starts = m.group_starts(g)
        sizes = np.diff(np.append(starts, g.size))
        first = position[idx][starts]
        last = position[idx][starts + sizes - 1]
        rows.append({"judge": cell["judge"], "format": cell["format"], "decoding": cell["decoding"],
                     "n_prompts": int(sizes.size),
                     "first_rate": float(np.mean(position[chosen] == first)),
                     "last_rate": float(np.mean(position[chosen] == last)),
                     "uniform_rate": float(np.mean(1.0 / sizes))})
    return pl.DataFrame(rows, schema={"judge": pl.String, "format": pl.String, "decoding": pl.String,
                                      "n_prompts": pl.Int64,
                                      "first_rate": pl.Float64, "last_rate": pl.Float64,
                                      "uniform_rate": pl.Float64})
