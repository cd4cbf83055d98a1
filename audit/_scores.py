"""Candidate scores per (judge, format) cell, as a dense matrix over the pool's candidates."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from ._db import connect, db_path, numpy, pool_id, query
from ._metrics import ROUND


@dataclass
class Scores:
    """S[c, i] = normalised score of candidate i (cand_idx order) in cell c; NaN = no score. A cell
    is (judge, format, decoding, score), score `label` or `expected` (see _with_expected_cells).

    `cells` lists the cells (row c of S) with their call counts (cell_calls.sql); `order` sorts
    candidates by (prompt, position).
    """
    cells: pl.DataFrame
    S: np.ndarray
    prompt: np.ndarray
    position: np.ndarray
    reference: np.ndarray    # NaN where missing
    order: np.ndarray


def cell_scores(pairing: str, lo: float, hi: float, a: np.ndarray, b: np.ndarray, swapped: np.ndarray,
                value: np.ndarray, n: int) -> np.ndarray:
    """Each candidate's mean score over its parsed calls in one cell, rounded; NaN without one.

    pointwise: (v - lo) / (hi - lo); anchored: the same over forward calls (candidate in slot A
    against the anchor); tournament: sigma(v) as Response A, 1 - sigma(v) as Response B, over its
    matches against other candidates.
    """
    if pairing == "tournament":   # self-comparisons carry no information about a candidate
        match = a != b
        if not match.all():
            a, b, value = a[match], b[match], value[match]
        sig = 1.0 / (1.0 + np.exp(-value))
        count = np.bincount(a, minlength=n) + np.bincount(b, minlength=n)
        total = np.bincount(a, weights=sig, minlength=n) + np.bincount(b, weights=1.0 - sig, minlength=n)
    else:
        keep = ~swapped if pairing == "anchored" else slice(None)
        idx, val = a[keep], (value[keep] - lo) / (hi - lo)
        count = np.bincount(idx, minlength=n)
        if count.max(initial=0) <= 1:  # one call per candidate (the usual case): no mean to take
            out = np.full(n, np.nan)
            out[idx] = np.round(val, ROUND)
            return out
        total = np.bincount(idx, weights=val, minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.round(total / count, ROUND)


def _with_expected_cells(cells: pl.DataFrame) -> pl.DataFrame:
    """A cell is (judge, format, decoding, score): every (judge, format, decoding) gives a `label`
    cell (the parsed labels' values) and, for a pointwise format whose calls carry a label
    distribution, an `expected` cell (the probability-weighted value over the format's labels),
    with its own distinct values, ties and agreement. The expected cell keeps the format's name."""
    cells = cells.with_columns(pl.lit("label").alias("score"))
    extra = cells.filter((pl.col("pairing") == "pointwise") & (pl.col("n_expected") > 0)).with_columns(
        pl.col("n_expected").alias("n_parsed"),
        pl.lit(False).alias("scale_0_100"), pl.lit(None).cast(cells["nominal_levels"].dtype)
        .alias("nominal_levels"), pl.lit("expected").alias("score"))
    return pl.concat([cells, extra]).sort("judge", "format", "decoding", "score",
                                          descending=[False, False, False, True])   # label first


def multiples_of_5_share(values: np.ndarray) -> float | None:
    """The share of (parsed, 0-100) values that are multiples of 5; None without any."""
    fifths = values / 5.0       # exact for multiples of 5 (np.fmod is several times slower)
    return float(np.count_nonzero(fifths == np.floor(fifths)) / values.size) if values.size else None


def load_scores(con, pool_id: int) -> Scores:
    cells = _with_expected_cells(query(con, "cell_calls", pool_id=pool_id))
    cand = numpy(con, "candidates", pool_id=pool_id)
    n = cand["cand_idx"].size
    if not np.array_equal(cand["cand_idx"], np.arange(n)):   # unordered rows: place them by cand_idx
        order = np.argsort(cand["cand_idx"])
        cand = {k: v[order] for k, v in cand.items()}
    prompt, position, reference = cand["prompt_idx"], cand["position"], cand["reference"]
    S = np.full((cells.height, n), np.nan)
    mult5 = []
    for c, cell in enumerate(cells.iter_rows(named=True)):
        calls = numpy(con, "cell_values", pool_id=pool_id, judge_id=cell["judge_id"],
                      format_id=cell["format_id"], decoding=cell["decoding"],
                      expected=cell["score"] == "expected")
        S[c] = cell_scores(cell["pairing"], cell["value_lo"], cell["value_hi"], calls["a_idx"],
                           calls["b_idx"], calls["swapped"], calls["value"], n)
        mult5.append(multiples_of_5_share(calls["value"]) if cell["scale_0_100"] else None)
    cells = cells.with_columns(pl.Series("mult5_share", mult5, dtype=pl.Float64)).drop("scale_0_100")
    return Scores(cells, S, prompt, position, reference, listing_order(prompt, position))


def listing_order(prompt: np.ndarray, position: np.ndarray) -> np.ndarray:
    """Candidate indices sorted by (prompt, position); a pool imported in listing order already is."""
    dp = np.diff(prompt)
    if np.all((dp > 0) | ((dp == 0) & (np.diff(position) > 0))):
        return np.arange(prompt.size)
    return np.lexsort((position, prompt))


_last: tuple | None = None
_lock = threading.Lock()


def _file_state(path: Path) -> tuple:
    wal = path.with_name(path.name + ".wal")
    return tuple((f.stat().st_mtime_ns, f.stat().st_size) if f.exists() else None for f in (path, wal))


def scores_for(db, pool: str) -> Scores:
    """load_scores for a pool by name, reusing the last result while the database file is unchanged
    (the diagnostics, histograms and curation views of one page all start from the same scores)."""
    global _last
    path = db_path(db).resolve()
    with _lock:
        key = (str(path), _file_state(path) if path.exists() else None, pool)
        if _last is not None and _last[0] == key:
            return _last[1]
    with connect(db) as con:
        sc = load_scores(con, pool_id(con, pool))
    with _lock:
        _last = (key, sc)
    return sc
