"""How many independent judges a jury is worth (docs/metrics.md#a-jurys-effective-size): its members
err together, so its effective size is below its head count (Kish's design effect for correlated
votes):

    effective_members = m / (1 + (m − 1)·ρ̄),

m the members with verdicts in the cell, ρ̄ the mean over the pairs of members of the Pearson
correlation of their errors against the human labels (prediction f − the humans' mean y, on the items
both judged and humans labelled), or, where fewer than MIN_LABELLED such items back every pair, of
their predictions f themselves (jury_member_pairs.sql says what an item and f are). `n` is the fewest
items any pair's correlation rests on. A pair whose correlation is undefined (a member constant on
those items) is left out of ρ̄; ρ̄ ≤ −1/(m − 1) gives no size.

The members' verdicts are read whatever judgings the reading is scoped to (jury_member_pairs.sql), so a
jury's part of the derived result, computed for the jury alone, has them.
"""

from __future__ import annotations

import os

import numpy as np
import polars as pl

from ._jury import juries_of
from ._read import reading

MIN_LABELLED = 10
SIZE_SCHEMA = {"judge": pl.String, "format": pl.String, "decoding": pl.String, "m": pl.Int64, "basis": pl.String,
               "n": pl.Int64, "mean_correlation": pl.Float64, "effective_members": pl.Float64}
SIZE_COLUMNS = list(SIZE_SCHEMA)


def effective_members(m: int, rho: float | None) -> float | None:
    """m / (1 + (m − 1)·ρ̄); None without ρ̄ or where the denominator is not positive."""
    if rho is None or m < 1:
        return None
    den = 1 + (m - 1) * rho
    return m / den if den > 0 else None


def cell_size(pairs: pl.DataFrame) -> dict:
    """One jury cell's size from its member pairs (member_a, member_b, n_scored, score_corr,
    n_labelled, error_corr): {m, basis, n, mean_correlation, effective_members}."""
    m = len(set(pairs["member_a"]) | set(pairs["member_b"]))
    use_errors = pairs.height > 0 and int(pairs["n_labelled"].min()) >= MIN_LABELLED
    basis, corr, counts = (("errors", "error_corr", "n_labelled") if use_errors else ("scores", "score_corr", "n_scored"))
    values = pairs[corr].drop_nulls().drop_nans().to_numpy()
    rho = float(np.mean(values)) if values.size else None
    return {"m": m, "basis": basis, "n": int(pairs[counts].min()) if pairs.height else 0,
            "mean_correlation": rho, "effective_members": effective_members(m, rho)}


def jury_sizes(db: str | os.PathLike | None, pool: str) -> pl.DataFrame:
    """One row per jury cell of the pool (a jury × format × decoding its members share), SIZE_COLUMNS:
    judge (the jury), format, decoding, m (its members with verdicts there), basis ('errors': their
    errors against human labels; 'scores': their predictions), n (the fewest items a pair's
    correlation rests on), mean_correlation (ρ̄), effective_members (m / (1 + (m − 1)·ρ̄))."""
    with reading(db) as read:
        pid = read.pool_id(pool)
        if juries_of(read, pid).is_empty():
            return pl.DataFrame(schema=SIZE_SCHEMA)
        pairs = read.frame("jury_member_pairs", pool_id=pid)
    rows = [{"judge": j, "format": f, "decoding": d, **cell_size(g)}
            for (j, f, d), g in pairs.group_by(["judge", "format", "decoding"], maintain_order=True)]
    return pl.DataFrame(rows, schema=SIZE_SCHEMA)
