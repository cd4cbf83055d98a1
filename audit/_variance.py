"""The format x judge variance decomposition of each diagnostic: how much of a metric's spread
over the audit cells the format explains, how much the judge, how much neither."""

from __future__ import annotations

import os

import polars as pl

from . import _metrics as m
from ._cells import audit_cells

VARIANCE_METRICS = ("tie_prob", "d1", "d2", "distinct", "top_tied", "spearman", "tau_a", "tau_b",
                    "somers_d", "top1_expected", "parse_rate")


def variance_table(cells: pl.DataFrame, metrics=VARIANCE_METRICS) -> pl.DataFrame:
    """Two-way (format x judge, no replication) decomposition of each diagnostic, on the largest
    complete grid: formats scored by every judge. It runs within one (decoding, score) pair and
    never mixes two: an expected-score cell is not one more format, and the same format read
    greedily and constrained is not two. Rows with dropped_judge set repeat it without that judge
    (leave-one-judge-out).

    Columns: decoding, score, metric, dropped_judge, n_judges, n_formats, share_format,
    share_judge, share_residual, ss_total.
    """
    rows = []
    if "decoding" not in cells.columns:   # a grid given by hand: one (decoding, score) pair
        cells = cells.with_columns(pl.lit("greedy").alias("decoding"))
    if "score" not in cells.columns:
        cells = cells.with_columns(pl.lit("label").alias("score"))
    groups = sorted(cells.group_by("decoding", "score"), key=lambda g: (g[0][0], g[0][1] != "label"))
    for (decoding, score), group in groups:
        judges = sorted(group["judge"].unique().to_list())
        for metric in metrics:
            wide = group.filter(pl.col(metric).is_not_null()) \
                .pivot(on="format", index="judge", values=metric)
            for dropped in [None, *judges]:
                part = wide.filter(pl.col("judge") != dropped) if dropped else wide
                fmts = [f for f in part.columns if f != "judge" and part[f].null_count() == 0]
                if part.height < 2 or len(fmts) < 2:
                    continue
                table = part.select(fmts).to_numpy().astype(float)
                rows.append({"decoding": decoding, "score": score, "metric": metric, "dropped_judge": dropped,
                             "n_judges": part.height, "n_formats": len(fmts), **m.two_way_shares(table)})
    return pl.DataFrame(rows, schema={"decoding": pl.String, "score": pl.String, "metric": pl.String,
                                      "dropped_judge": pl.String, "n_judges": pl.Int64, "n_formats": pl.Int64,
                                      "share_format": pl.Float64, "share_judge": pl.Float64,
                                      "share_residual": pl.Float64, "ss_total": pl.Float64})


def variance(db: str | os.PathLike | None, pool: str, seed: int = 0) -> pl.DataFrame:
    """variance_table over the pool's audit cells, sample 0 of each call (aggregate `single`; see
    there for the columns)."""
    return variance_table(audit_cells(db, pool, seed).filter(pl.col("aggregate") == "single"))
