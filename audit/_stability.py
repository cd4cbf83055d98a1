"""Subsampling stability of each cell's level counts: how far distinct, D1 and D2 move when only a
fraction of the pool's candidates is scored."""

from __future__ import annotations

import os

import numpy as np
import polars as pl

from . import _metrics as m
from ._bias import cell_rng
from ._scores import CELL_IDENTITY, cell_identity, cell_levels


def stability(db: str | os.PathLike | None, pool: str, n_boot: int = 200, fraction: float = 1 / 3,
              seed: int = 0, block: int | None = None) -> pl.DataFrame:
    """Subsampling stability of the level counts: per cell, `n_boot` subsamples of
    floor(n * fraction) scored candidates without replacement (multivariate hypergeometric draws
    from the value counts, exact and O(levels) each).

    Columns: judge, format, decoding, score, metric (distinct | d1 | d2), full (on all candidates), sub_size,
    mean, sd (over subsamples), shift (mean - full).
    """
    cells, levels = cell_levels(db, pool, block)   # out of core: each cell's value counts alone
    rows = []
    for c, cell in enumerate(cells.iter_rows(named=True)):
        counts = levels[c][1]
        n = int(counts.sum())
        size = int(n * fraction)
        if size < 1:
            continue
        rng = cell_rng(seed, *(cell[k] for k in CELL_IDENTITY))   # by identity: other cells change nothing
        draws = rng.multivariate_hypergeometric(counts, size, size=n_boot).astype(float)
        p = draws / size
        with np.errstate(divide="ignore", invalid="ignore"):
            sub = {"distinct": (draws > 0).sum(axis=1).astype(float),
                   "d1": np.exp(-np.nansum(np.where(p > 0, p * np.log(p), 0.0), axis=1)),
                   "d2": 1.0 / (p ** 2).sum(axis=1)}
        full_p = counts / n
        full = {"distinct": float(counts.size), "d1": m.renyi_levels(full_p, 1),
                "d2": m.renyi_levels(full_p, 2)}
        for metric, values in sub.items():
            rows.append({**cell_identity(cell), "metric": metric,
                         "full": full[metric], "sub_size": size, "mean": float(values.mean()),
                         "sd": float(values.std(ddof=1)) if n_boot > 1 else float("nan"),
                         "shift": float(values.mean() - full[metric])})
    return pl.DataFrame(rows, schema={**CELL_IDENTITY, "metric": pl.String,
                                      "full": pl.Float64, "sub_size": pl.Int64, "mean": pl.Float64,
                                      "sd": pl.Float64, "shift": pl.Float64})
