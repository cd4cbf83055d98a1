"""The Pool page's summary of a pool, computed from its candidates alone (a derived result stored once,
audit.derived 'pool_summary', 'pool_head'), so the page draws a 10M-candidate pool from a few hundred
rows: its counts, prompts per k, and the reference scores and response lengths in 30 equal bins (the
bins altair would draw from every candidate)."""

from __future__ import annotations

import os

import polars as pl

from ._pools import pool_candidates

N_BINS = 30
HEAD = 200       # the candidates the page lists


def _bins(values: pl.Series, part: str) -> pl.DataFrame:
    """Counts of `values` in N_BINS equal bins from the least to the most (the last closed): x the
    bin's start, width its width; one bin of width 1 when every value is the same; none when empty."""
    values = values.drop_nulls().cast(pl.Float64)
    if values.is_empty():
        return pl.DataFrame(schema={"part": pl.String, "x": pl.Float64, "width": pl.Float64, "n": pl.Int64})
    lo, hi = float(values.min()), float(values.max())
    width = (hi - lo) / N_BINS if hi > lo else 1.0
    k = ((values - lo) / width).floor().clip(0, N_BINS - 1 if hi > lo else 0).cast(pl.Int64)
    counts = k.value_counts(name="n").sort(k.name)
    return pl.DataFrame({"part": part, "x": lo + counts[k.name].cast(pl.Float64) * width, "width": width,
                         "n": counts["n"].cast(pl.Int64)})


def summary(cands: pl.DataFrame) -> pl.DataFrame:
    """(part, x, width, n) of audit.pool_candidates' frame: part 'count' (x 0 prompts, 1 candidates,
    2 with a reference, 3 held out), 'k' (x candidates per prompt, n prompts), 'reference' and
    'chars' (binned, see _bins)."""
    counts = [cands["prompt_idx"].n_unique(), cands.height, int(cands["reference"].is_not_null().sum()),
              int((cands["split"] == "heldout").sum())]
    per_k = cands.unique("prompt_idx").group_by("k").len("n").sort("k")
    return pl.concat([
        pl.DataFrame({"part": "count", "x": [0.0, 1.0, 2.0, 3.0], "width": 1.0, "n": counts},
                     schema_overrides={"n": pl.Int64}),
        pl.DataFrame({"part": "k", "x": per_k["k"].cast(pl.Float64), "width": 1.0, "n": per_k["n"].cast(pl.Int64)}),
        _bins(cands["reference"], "reference"), _bins(cands["response_chars"], "chars")])


def head(cands: pl.DataFrame) -> pl.DataFrame:
    return cands.head(HEAD)


def pool_summary(db: str | os.PathLike | None, pool: str) -> pl.DataFrame:
    """summary of the pool's candidates: (part, x, width, n) counts, prompts per k, binned references
    and response lengths."""
    return summary(pool_candidates(db, pool))


def pool_head(db: str | os.PathLike | None, pool: str) -> pl.DataFrame:
    """The pool's first HEAD candidates (the ones the Pool page lists), as pool_candidates lists them."""
    return head(pool_candidates(db, pool))


