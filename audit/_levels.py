"""Effective levels of each cell's score distribution, for any alpha (docs/metrics.md#the-audit-audit):
D_alpha = exp(H_alpha), the Renyi entropy of the shares of its distinct values."""

from __future__ import annotations

import os

import polars as pl

from . import _metrics as m
from ._scores import CELL_IDENTITY, cell_identity, cell_levels


def effective_levels(db: str | os.PathLike | None, pool: str,
                     alphas: tuple[float, ...] = (0, 0.5, 1, 2, float("inf")), block: int | None = None) -> pl.DataFrame:
    """One row per (judge, format, decoding, score, alpha): D_alpha = exp(H_alpha) of the score
    distribution.

    Columns: judge, format, decoding, score, alpha, d_alpha, n_candidates. alpha 0 = distinct values, 1 = exp of
    Shannon entropy (D1), 2 = 1 / tie probability (D2), inf = 1 / largest share. Out of core: only
    each cell's value counts are held, read in blocks of whole prompts (`block` candidates).
    """
    cells, levels = cell_levels(db, pool, block)
    rows = []
    for c, cell in enumerate(cells.iter_rows(named=True)):
        counts = levels[c][1]
        p = counts / counts.sum() if counts.size else counts.astype(float)
        for a in alphas:
            rows.append({**cell_identity(cell), "alpha": float(a),
                         "d_alpha": m.renyi_levels(p, a), "n_candidates": int(counts.sum())})
    return pl.DataFrame(rows, schema={**CELL_IDENTITY, "alpha": pl.Float64,
                                      "d_alpha": pl.Float64, "n_candidates": pl.Int64})
