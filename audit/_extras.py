"""Further views on the scores: effective levels for any alpha, subsampling stability, tournament
listing-position selection, and the format x judge variance decomposition."""

from __future__ import annotations

import os

import numpy as np
import polars as pl

from . import _metrics as m
from ._bias import cell_rng
from ._cells import PoolView, audit_cells
from ._scores import scores_for

IDENTITY = {"judge": pl.String, "format": pl.String, "decoding": pl.String, "score": pl.String}
VARIANCE_METRICS = ("tie_prob", "d1", "d2", "distinct", "top_tied", "spearman", "tau_a", "tau_b",
                    "somers_d", "top1_expected", "parse_rate")


def _identity(cell: dict) -> dict:
    return {k: cell[k] for k in IDENTITY}


def _distribution(row: np.ndarray) -> np.ndarray:
    """Counts of each distinct score value among a cell's scored candidates, in value order."""
    return m.levels(row[~np.isnan(row)])[1]


def effective_levels(db: str | os.PathLike | None, pool: str,
                     alphas: tuple[float, ...] = (0, 0.5, 1, 2, float("inf"))) -> pl.DataFrame:
    """One row per (judge, format, decoding, score, alpha): D_alpha = exp(H_alpha) of the score
    distribution.

    Columns: judge, format, decoding, score, alpha, d_alpha, n_candidates. alpha 0 = distinct values, 1 = exp of
    Shannon entropy (D1), 2 = 1 / tie probability (D2), inf = 1 / largest share.
    """
    sc = scores_for(db, pool)
    rows = []
    for c, cell in enumerate(sc.cells.iter_rows(named=True)):
        counts = _distribution(sc.S[c])
        p = counts / counts.sum() if counts.size else counts.astype(float)
        for a in alphas:
            rows.append({**_identity(cell), "alpha": float(a),
                         "d_alpha": m.renyi_levels(p, a), "n_candidates": int(counts.sum())})
    return pl.DataFrame(rows, schema={**IDENTITY, "alpha": pl.Float64,
                                      "d_alpha": pl.Float64, "n_candidates": pl.Int64})


def stability(db: str | os.PathLike | None, pool: str, n_boot: int = 200, fraction: float = 1 / 3,
              seed: int = 0) -> pl.DataFrame:
    """Subsampling stability of the level counts: per cell, `n_boot` subsamples of
    floor(n * fraction) scored candidates without replacement (multivariate hypergeometric draws
    from the value counts, exact and O(levels) each).

    Columns: judge, format, decoding, score, metric (distinct | d1 | d2), full (on all candidates), sub_size,
    mean, sd (over subsamples), shift (mean - full).
    """
    sc = scores_for(db, pool)
    rows = []
    for c, cell in enumerate(sc.cells.iter_rows(named=True)):
        counts = _distribution(sc.S[c])
        n = int(counts.sum())
        size = int(n * fraction)
        if size < 1:
            continue
        rng = cell_rng(seed, *(cell[k] for k in IDENTITY))   # by identity: other cells change nothing
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
            rows.append({**_identity(cell), "metric": metric,
                         "full": full[metric], "sub_size": size, "mean": float(values.mean()),
                         "sd": float(values.std(ddof=1)) if n_boot > 1 else float("nan"),
                         "shift": float(values.mean() - full[metric])})
    return pl.DataFrame(rows, schema={**IDENTITY, "metric": pl.String,
                                      "full": pl.Float64, "sub_size": pl.Int64, "mean": pl.Float64,
                                      "sd": pl.Float64, "shift": pl.Float64})


def position_selection(db: str | os.PathLike | None, pool: str, seed: int = 0) -> pl.DataFrame:
    """Tournament cells: how often the selected (top-scored, seeded tie-break) candidate of a
    prompt is its first- or last-listed one, against the uniform rate 1/k.

    Columns: judge, format, decoding, n_prompts (with >= 2 scored candidates), first_rate, last_rate,
    uniform_rate (mean of 1/k).
    """
    sc = scores_for(db, pool)
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


def variance_table(cells: pl.DataFrame, metrics=VARIANCE_METRICS) -> pl.DataFrame:
    """Two-way (format x judge, no replication) decomposition of each diagnostic, on the largest
    complete grid: formats scored by every judge. It runs within one kind of cell, a (decoding,
    score) pair, and never mixes kinds: an expected-score cell is not one more format, and the
    same format read greedily and constrained is not two. Rows with dropped_judge set repeat it
    without that judge (leave-one-judge-out).

    Columns: decoding, score, metric, dropped_judge, n_judges, n_formats, share_format,
    share_judge, share_residual, ss_total.
    """
    rows = []
    if "decoding" not in cells.columns:   # a grid given by hand: one kind
        cells = cells.with_columns(pl.lit("greedy").alias("decoding"))
    if "score" not in cells.columns:
        cells = cells.with_columns(pl.lit("label").alias("score"))
    kinds = sorted(cells.group_by("decoding", "score"), key=lambda g: (g[0][0], g[0][1] != "label"))
    for (decoding, score), kind in kinds:
        judges = sorted(kind["judge"].unique().to_list())
        for metric in metrics:
            wide = kind.filter(pl.col(metric).is_not_null()) \
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
    """variance_table over the pool's audit cells (see there for the columns)."""
    return variance_table(audit_cells(db, pool, seed))
