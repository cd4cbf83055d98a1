"""Curation: which candidates a judge x format keeps at a retention rate. Pure polars, frame in,
frame out; the selection is made the way it would be in practice, ties at the cut-off broken by a
seeded coin, and marked, because those selections say nothing about quality."""

from __future__ import annotations

import numpy as np
import polars as pl


def select_top(scores: pl.DataFrame, rate: float, seed: int = 0) -> pl.DataFrame:
    """Keep the top `rate` share of scored candidates (at least one).

    `scores` needs cand_idx and s. Adds: kept (bool), tie_broken (kept or dropped only by the
    seeded tie-break among candidates sharing the cut-off score).
    """
    if not 0 < rate <= 1:
        raise ValueError("rate must be in (0, 1]")
    n = scores.height
    if n == 0:
        return scores.with_columns(pl.lit(False).alias("kept"), pl.lit(False).alias("tie_broken"))
    keep = max(1, int(round(rate * n)))
    key = np.random.default_rng(seed).random(n)
    ranked = scores.with_columns(pl.Series("_key", key)).sort(["s", "_key"], descending=[True, True]) \
        .with_row_index("_rank")
    cut = ranked["s"][keep - 1]
    ranked = ranked.with_columns((pl.col("_rank") < keep).alias("kept"))
    split = ranked.filter(pl.col("s") == cut)["kept"].n_unique() > 1   # the cut runs through a tie
    return ranked.with_columns((pl.lit(split) & (pl.col("s") == cut)).alias("tie_broken")) \
        .drop("_rank", "_key").sort("cand_idx")


def preview(scores: pl.DataFrame, judge: str, rate: float, seed: int = 0) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Per format of one judge: subset size and tie-broken selections; and the overlap (Jaccard)
    of the kept sets between each pair of formats.

    `scores` as audit.candidate_scores returns it. Returns (summary, overlap) with columns
    format, n_scored, n_kept, n_tie_broken_kept, share_tie_broken; and format_a, format_b, jaccard.
    """
    rows, kept_sets = [], {}
    for fmt in sorted(scores.filter(pl.col("judge") == judge)["format"].unique().to_list()):
        sel = select_top(scores.filter((pl.col("judge") == judge) & (pl.col("format") == fmt)), rate, seed)
        kept = sel.filter("kept")
        kept_sets[fmt] = set(kept["cand_idx"].to_list())
        n_tb = int(kept["tie_broken"].sum())
        rows.append({"format": fmt, "n_scored": sel.height, "n_kept": kept.height, "n_tie_broken_kept": n_tb,
                     "share_tie_broken": n_tb / kept.height if kept.height else None})
    pairs = [{"format_a": a, "format_b": b,
              "jaccard": len(kept_sets[a] & kept_sets[b]) / max(len(kept_sets[a] | kept_sets[b]), 1)}
             for i, a in enumerate(kept_sets) for b in list(kept_sets)[i + 1:]]
    return (pl.DataFrame(rows, schema={"format": pl.String, "n_scored": pl.Int64, "n_kept": pl.Int64,
                                       "n_tie_broken_kept": pl.Int64, "share_tie_broken": pl.Float64}),
            pl.DataFrame(pairs, schema={"format_a": pl.String, "format_b": pl.String, "jaccard": pl.Float64}))
