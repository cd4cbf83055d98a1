"""The per (judge, format, decoding, score, aggregate) diagnostics table: levels, ties and agreement
with the reference."""

from __future__ import annotations

import os

import numpy as np
import polars as pl

from . import _metrics as m
from ._scores import Scores, pool_scores

CELL_COLUMNS = [
    "judge", "format", "decoding", "score", "aggregate", "kind", "n_verdicts", "n_candidates", "n_prompts",
    "parse_rate", "nominal_levels", "distinct", "tie_prob", "d1", "d2", "mult5_share", "top_tied",
    "spearman", "tau_a", "tau_b", "somers_d", "top1", "top1_expected", "top1_uniform", "n_ranked_prompts",
]


def dense_groups(prompt: np.ndarray, min_size: int) -> tuple[np.ndarray, np.ndarray]:
    """For elements sorted by prompt: a mask of those whose prompt has >= min_size of them, and
    dense, contiguous group ids (0..G-1) for the kept elements."""
    if prompt.size == 0:
        return np.zeros(0, bool), np.zeros(0, np.int64)
    change = np.concatenate(([True], prompt[1:] != prompt[:-1]))
    gid = np.cumsum(change) - 1
    keep = np.bincount(gid)[gid] >= min_size
    kept = gid[keep]
    if kept.size == 0:
        return keep, kept
    return keep, np.cumsum(np.concatenate(([True], kept[1:] != kept[:-1]))) - 1


def _mean(values: np.ndarray) -> float:
    values = values[~np.isnan(values)]
    return float(values.mean()) if values.size else float("nan")


class PoolView:
    """The pool's candidates in (prompt, position) order, with what every cell shares:
    references as level codes, the seeded tie-break keys, and cached prompt layouts."""

    def __init__(self, sc: Scores, seed: int):
        self.order = sc.order
        self.identity = bool(np.all(np.diff(sc.order) == 1)) if sc.order.size else True
        self.prompt = sc.prompt[sc.order]
        self.n_prompts = int(np.count_nonzero(self.prompt[1:] != self.prompt[:-1]) + 1) if self.prompt.size else 0
        r = sc.reference[sc.order]
        self.has_r = ~np.isnan(r)
        self.r_values, _ = m.levels(r[self.has_r])
        self.r_code = m.level_codes(r, self.r_values)   # ranks and ties of r, as small integers
        self.key = m.tiebreak_key(sc.order.size, seed)[sc.order]
        self._cache: list[tuple[str, np.ndarray, object]] = []

    def scores(self, row: np.ndarray) -> np.ndarray:
        return row if self.identity else row[self.order]

    def _cached(self, tag: str, mask: np.ndarray, build):
        """build(), reused while cells select the same candidates (the usual case)."""
        for t, seen, value in self._cache:
            if t == tag and np.array_equal(seen, mask):
                return value
        value = build()
        self._cache = [entry for entry in self._cache if entry[0] != tag][-3:]
        self._cache.append((tag, mask, value))
        return value

    def tie_layout(self, valid: np.ndarray):
        """Groups of >= 2 scored candidates (for top_tied): (element indices, group ids)."""
        def build():
            idx = np.flatnonzero(valid)
            keep, g = dense_groups(self.prompt[idx], 2)
            return idx[keep], g
        return self._cached("tie", valid, build)

    def ranked(self, both: np.ndarray):
        """Groups of >= 2 candidates with score and reference: (element indices, PromptStats)."""
        def build():
            idx = np.flatnonzero(both)
            keep, g = dense_groups(self.prompt[idx], 2)
            idx = idx[keep]
            return idx, m.PromptStats(g, self.r_code[idx], self.key[idx])
        return self._cached("rank", both, build)

    def reference_ranks(self, both: np.ndarray) -> np.ndarray:
        """Average ranks of r over the candidates in `both`."""
        return self._cached("rr", both, lambda: m.ranks_of_codes(self.r_code[both], self.r_values.size))


def _cell_row(view: PoolView, s: np.ndarray) -> dict:
    valid = ~np.isnan(s)
    all_valid = bool(valid.all())
    sv = s if all_valid else s[valid]
    row = {"n_candidates": int(sv.size)}
    if sv.size == 0:
        return row
    pv = view.prompt if all_valid else view.prompt[valid]
    row["n_prompts"] = view.n_prompts if all_valid else int(np.count_nonzero(pv[1:] != pv[:-1]) + 1)
    values, counts = m.levels(sv)
    p = counts / counts.sum()
    row.update(distinct=int(values.size), tie_prob=float(np.sum(p ** 2)),
               d1=m.renyi_levels(p, 1), d2=1.0 / float(np.sum(p ** 2)))
    code = m.level_codes(s, values)  # order and ties of s as small integers (NaN: masked below)
    both = view.has_r if all_valid else valid & view.has_r
    every_scored_has_r = bool(both.all()) if all_valid else np.array_equal(both, valid)
    if not every_scored_has_r:  # otherwise the ranked groups below are the same groups
        idx, g = view.tie_layout(valid)
        if idx.size:
            row["top_tied"] = float(m.top_tied(g, code[idx]).mean())
    if both.any():
        row["spearman"] = m.rank_correlation(code[both], values.size, view.reference_ranks(both))
        idx, stats = view.ranked(both)
        if idx.size:
            st = stats.compute(code[idx])
            tau_a, tau_b, somers = m.kendall_variants(st["n0"], st["cd"], st["n1"], st["n2"])
            if every_scored_has_r:
                row["top_tied"] = float(st["top_tied"].mean())
            row.update(tau_a=_mean(tau_a), tau_b=_mean(tau_b), somers_d=_mean(somers),
                       top1=_mean(st["top1"]), top1_expected=_mean(st["top1_expected"]),
                       top1_uniform=_mean(st["top1_uniform"]), n_ranked_prompts=stats.n_groups)
    return row


def compute_cells(sc: Scores, seed: int = 0) -> pl.DataFrame:
    view = PoolView(sc, seed)
    rows = [_cell_row(view, view.scores(sc.S[c])) for c in range(sc.S.shape[0])]
    schema = {"n_candidates": pl.Int64, "n_prompts": pl.Int64, "distinct": pl.Int64,
              "tie_prob": pl.Float64, "d1": pl.Float64, "d2": pl.Float64, "top_tied": pl.Float64,
              "spearman": pl.Float64, "tau_a": pl.Float64, "tau_b": pl.Float64,
              "somers_d": pl.Float64, "top1": pl.Float64, "top1_expected": pl.Float64,
              "top1_uniform": pl.Float64, "n_ranked_prompts": pl.Int64}
    extra = pl.DataFrame(rows, schema=schema)
    defaults = {"n_candidates": 0, "n_prompts": 0, "distinct": 0, "n_ranked_prompts": 0}
    cells = sc.cells if "aggregate" in sc.cells.columns else sc.cells.with_columns(pl.lit("single").alias("aggregate"))
    out = pl.concat([cells, extra], how="horizontal").with_columns(
        (pl.col("n_parsed") / pl.col("n_verdicts")).alias("parse_rate"),
        pl.col("nominal_levels").cast(pl.Int64),
        *[pl.col(c).fill_null(v) for c, v in defaults.items()])
    return out.select(CELL_COLUMNS).with_columns(pl.selectors.float().fill_nan(None))


def audit_cells(db: str | os.PathLike | None, pool: str, seed: int = 0) -> pl.DataFrame:
    """One row per (judge, format, decoding, score, aggregate) cell of the pool, in that order.

    decoding: 'greedy' (the paper's protocol) or 'constrained' (to the format's labels); the same
    judge and format under both are two cells. score: 'label' (the parsed verdicts' values) or
    'expected' (the probability-weighted value over the format's labels, for pointwise calls that
    carry a label distribution; n_verdicts then counts the calls, parse_rate those with one).
    aggregate: 'single' (sample 0 of each call; every cell has it, and its n_verdicts and
    parse_rate count sample-0 calls) or, for a cell with repeated calls, also 'mean' (each call
    scored by the mean of its parsed samples' normalised scores; n_verdicts counts every sample).

    Columns: judge, format, decoding, score, aggregate, kind, n_verdicts, n_candidates, n_prompts, parse_rate,
    nominal_levels, distinct, tie_prob, d1, d2, mult5_share (0-100 scales only), top_tied, spearman,
    tau_a, tau_b, somers_d, top1 (seeded tie-break), top1_expected, top1_uniform, n_ranked_prompts
    (prompts with >= 2 candidates having both a score and a reference). Undefined values are null.
    """
    return compute_cells(pool_scores(db, pool, repeats=True), seed)
