"""Repeat consistency per (judge, format, decoding) cell: does a judge asked the same call again
give the same answer? (docs/metrics.md#repeat-consistency.)

A unit is a call without its sample index (prompt, slot A, slot B); its values are the parsed
values of its samples. Over the units with >= 2 parsed samples: the flip rate, the pairwise
agreement, Krippendorff's alpha (coincidence matrix) with a percentile bootstrap over units, the
samples a mean of k would need for alpha 0.8 (Spearman-Brown), and the expected agreement of two
independent draws from sample 0's label distribution.

The pool is read once for every cell, aggregated in DuckDB (consistency_units.sql): only the calls
asked more than once, as value counts per unit, never one row per verdict.

Pure numpy below `consistency`; tests/audit/test_consistency.py checks each number against the textbook
example and a brute-force implementation of the definitions, tests/audit/test_consistency_units.py the
aggregated reading against the per-call one it replaced.
"""

from __future__ import annotations

import math
import os

import numpy as np
import polars as pl
from scipy import sparse

from ._bias import cell_rng
from ._read import reading

CONSISTENCY_COLUMNS = {
    "judge": pl.String, "format": pl.String, "decoding": pl.String, "level": pl.String,
    "samples": pl.Int64, "n_items": pl.Int64, "flip_rate": pl.Float64, "agreement": pl.Float64,
    "alpha": pl.Float64, "alpha_lo": pl.Float64, "alpha_hi": pl.Float64,
    "samples_for_alpha_08": pl.Int64, "expected_agreement": pl.Float64}
N_BOOT = 2000
TARGET = 0.8
_CHUNK = 2_000_000    # bootstrap weights held at once (resamples x units)


def scale_level(n_levels: int | None) -> str:
    """Krippendorff's metric for a format with n_levels label values (or range size): `nominal`
    for two (binary), `interval` for more than ten (numeric100), else `ordinal`."""
    if n_levels is None or n_levels <= 2:
        return "nominal"
    return "interval" if n_levels > 10 else "ordinal"


def pairable(unit: np.ndarray, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The parsed values (not NaN) of the units with at least two of them, and their dense unit
    ids (0..U-1), in unit order."""
    keep = ~np.isnan(value)
    unit, value = unit[keep], value[keep]
    if unit.size == 0:
        return np.zeros(0, np.int64), value
    _, inverse, counts = np.unique(unit, return_inverse=True, return_counts=True)
    keep = counts[inverse] >= 2
    _, dense = np.unique(unit[keep], return_inverse=True)
    return dense.astype(np.int64), value[keep]


def unit_counts(unit: np.ndarray, code: np.ndarray, n_levels: int) -> np.ndarray:
    """counts[u, c] = values of unit u at level c (units dense 0..U-1)."""
    n_units = int(unit.max()) + 1 if unit.size else 0
    return np.bincount(unit * n_levels + code, minlength=n_units * n_levels).reshape(n_units, n_levels)


def flip_and_agreement(counts: np.ndarray) -> tuple[float, float]:
    """flip_rate = share of units whose values are not all equal; agreement = mean over units of
    equal pairs / pairs (counts: units x levels, every unit with >= 2 values)."""
    m = counts.sum(axis=1)
    flips = np.count_nonzero(counts.max(axis=1) < m)
    agree = (counts * (counts - 1)).sum(axis=1) / (m * (m - 1))
    return float(flips / counts.shape[0]), float(agree.mean())


def coincidence_parts(counts: np.ndarray):
    """Each unit's share of the coincidence matrix, sparse: (unit, c * L + k, weight) with weight
    = n_uc (n_uk - [c = k]) / (m_u - 1); o[c, k] sums them over units."""
    n_units, n_levels = counts.shape
    u, c = np.nonzero(counts)
    # every pair of levels present in the same unit (units hold few distinct values)
    start = np.searchsorted(u, np.arange(n_units))
    size = np.diff(np.append(start, u.size))
    rep = np.repeat(np.arange(u.size), size[u])               # entry (u, c) once per level of u
    first = np.repeat(start[u], size[u])
    offset = np.arange(rep.size) - np.repeat(np.cumsum(size[u]) - size[u], size[u])
    other = first + offset                                      # entry (u, k)
    uu, cc, kk = u[rep], c[rep], c[other]
    m = counts.sum(axis=1)
    weight = counts[uu, cc] * (counts[uu, kk] - (cc == kk)) / (m[uu] - 1)
    return uu, cc * n_levels + kk, weight


def alpha_from_coincidences(o: np.ndarray, values: np.ndarray, level: str) -> np.ndarray:
    """Krippendorff's alpha = 1 - D_o / D_e = 1 - (n - 1) Σ o_ck δ²_ck / Σ n_c n_k δ²_ck for
    coincidence matrices o (..., L, L) over the sorted level values; NaN where D_e = 0 (fewer than
    two distinct values). δ²: nominal [c != k]; interval (v_c - v_k)²; ordinal (Σ_{g=c..k} n_g -
    (n_c + n_k) / 2)², which is (mid_k - mid_c)² with mid_g = Σ_{h<=g} n_h - n_g / 2."""
    n_c = o.sum(axis=-1)
    n = n_c.sum(axis=-1)
    if level == "nominal":
        delta = 1.0 - np.eye(values.size)
    elif level == "interval":
        delta = (values[:, None] - values[None, :]) ** 2
    else:
        mid = np.cumsum(n_c, axis=-1) - n_c / 2.0
        delta = (mid[..., :, None] - mid[..., None, :]) ** 2
    observed = (o * delta).sum(axis=(-2, -1))
    expected = (n_c[..., :, None] * n_c[..., None, :] * delta).sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(expected > 0, 1.0 - (n - 1) * observed / np.where(expected > 0, expected, 1.0), np.nan)


def krippendorff_alpha(unit: np.ndarray, value: np.ndarray, level: str) -> float:
    """Krippendorff's alpha of (unit, value) observations (NaN = missing); NaN when undefined."""
    unit, value = pairable(np.asarray(unit), np.asarray(value, float))
    values, code = np.unique(value, return_inverse=True)
    if values.size < 2:
        return float("nan")
    uu, flat, weight = coincidence_parts(unit_counts(unit, code, values.size))
    o = np.bincount(flat, weights=weight, minlength=values.size ** 2).reshape(values.size, values.size)
    return float(alpha_from_coincidences(o, values, level))


def bootstrap_alpha(counts: np.ndarray, values: np.ndarray, level: str, n_boot: int,
                    rng: np.random.Generator) -> tuple[float, float]:
    """95% percentile interval of alpha over n_boot resamples of the units (with replacement);
    resamples where alpha is undefined are left out (NaN, NaN when all are)."""
    n_units, n_levels = counts.shape
    uu, flat, weight = coincidence_parts(counts)
    # P[u, c * L + k] = unit u's share of o[c, k]; a resample's o = (times drawn per unit) @ P
    parts = sparse.csr_matrix((weight, (uu, flat)), shape=(n_units, n_levels * n_levels))
    alphas = []
    step = max(1, _CHUNK // max(n_units, n_levels * n_levels))
    for start in range(0, n_boot, step):
        b = min(step, n_boot - start)
        draws = rng.integers(0, n_units, size=(b, n_units))
        times = np.bincount((draws + n_units * np.arange(b)[:, None]).ravel(),
                            minlength=b * n_units).reshape(b, n_units)
        o = np.asarray((parts.T @ times.T).T).reshape(b, n_levels, n_levels)
        alphas.append(alpha_from_coincidences(o, values, level))
    alphas = np.concatenate(alphas)
    alphas = alphas[~np.isnan(alphas)]
    if alphas.size == 0:
        return float("nan"), float("nan")
    lo, hi = np.percentile(alphas, [2.5, 97.5])
    return float(lo), float(hi)


def samples_for_alpha(alpha: float, target: float = TARGET) -> int | None:
    """Spearman-Brown: the smallest k with k α / (1 + (k - 1) α) >= target (1 when α >= target,
    None when α <= 0 or undefined). Solving gives k >= target (1 - α) / (α (1 - target))."""
    if alpha is None or math.isnan(alpha) or alpha <= 0:
        return None
    if alpha >= target:
        return 1
    k = max(1, math.ceil(target * (1 - alpha) / (alpha * (1 - target)) - 1e-9))
    while k * alpha / (1 + (k - 1) * alpha) < target - 1e-12:   # guard the float edge
        k += 1
    return k


def cell_statistics(counts: np.ndarray, values: np.ndarray, samples: int, purity_sum: float, purity_n: int,
                    level: str, n_boot: int, rng: np.random.Generator) -> dict:
    """The statistics of one cell from its units' value counts (counts[u, c]: unit u's parsed samples
    at values[c], the sorted distinct values, one row per unit with >= 2 of them, in unit order),
    the most samples of any unit, and the sum and count of the purities of those units' sample 0
    (consistency_row's keys; None where undefined)."""
    row = dict.fromkeys(["flip_rate", "agreement", "alpha", "alpha_lo", "alpha_hi",
                         "samples_for_alpha_08", "expected_agreement"])
    row["samples"], row["n_items"] = int(samples), int(counts.shape[0])
    if not row["n_items"]:
        return row
    row["flip_rate"], row["agreement"] = flip_and_agreement(counts)
    if purity_n:
        row["expected_agreement"] = float(purity_sum / purity_n)
    if values.size >= 2:
        uu, flat, weight = coincidence_parts(counts)
        o = np.bincount(flat, weights=weight, minlength=values.size ** 2).reshape(values.size, values.size)
        alpha = float(alpha_from_coincidences(o, values, level))
        lo, hi = bootstrap_alpha(counts, values, level, n_boot, rng)
        row.update(alpha=alpha, alpha_lo=lo, alpha_hi=hi, samples_for_alpha_08=samples_for_alpha(alpha))
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}


def consistency_row(unit: np.ndarray, sample: np.ndarray, value: np.ndarray, purity: np.ndarray,
                    level: str, n_boot: int, rng: np.random.Generator) -> dict:
    """The statistics of one cell from its stored samples: unit (a call without its sample index),
    sample index, parsed value (NaN unless parsed), purity Σ p² of the sample's normalised label
    distribution (NaN without one). Keys: samples, n_items, flip_rate, agreement, alpha, alpha_lo,
    alpha_hi, samples_for_alpha_08, expected_agreement (None where undefined)."""
    samples = int(np.bincount(unit).max()) if unit.size else 0
    items, kept = pairable(unit, value)
    values, code = np.unique(kept, return_inverse=True)
    n_items = int(items.max()) + 1 if items.size else 0
    counts = unit_counts(items, code, values.size) if n_items else np.zeros((0, values.size), np.int64)
    first = np.zeros(0, bool)
    if n_items:
        parsed = ~np.isnan(value)
        many = np.bincount(unit[parsed], minlength=int(unit.max()) + 1) >= 2     # the n_items units
        first = (sample == 0) & many[unit] & ~np.isnan(purity)
    return cell_statistics(counts, values, samples, float(purity[first].sum()) if first.any() else 0.0,
                           int(first.sum()), level, n_boot, rng)


def unit_tables(rows: dict) -> dict:
    """{(judge_id, format_id, decoding): [counts, values, samples, purity_sum, purity_n]} from
    consistency_units' rows (numpy columns) for each cell with a repeated call: its units with >= 2
    parsed samples as counts per sorted distinct value (cell_statistics' arguments but the level and
    the bootstrap's). A cell without one has a sample per call: 1 sample, no unit."""
    cell = rows["part"] == "cell"
    out = {(j, f, d): [np.zeros((0, 0), np.int64), np.zeros(0), int(n), 0.0, 0]
           for j, f, d, n in zip(rows["judge_id"][cell], rows["format_id"][cell], rows["decoding"][cell],
                                 rows["n"][cell])}
    vals = ~cell
    if not vals.any():
        return out
    j, f, d = rows["judge_id"][vals], rows["format_id"][vals], rows["decoding"][vals]
    p, a, b = (np.asarray(rows[k][vals], np.int64) for k in ("prompt_idx", "a_idx", "b_idx"))
    value, n = np.asarray(rows["value"][vals], float), rows["n"][vals].astype(np.int64)
    psum, pn = rows["purity_sum"][vals].astype(float), rows["purity_n"][vals].astype(np.int64)
    new_cell = np.r_[True, (j[1:] != j[:-1]) | (f[1:] != f[:-1]) | (d[1:] != d[:-1])]
    new_unit = new_cell | np.r_[True, (p[1:] != p[:-1]) | (a[1:] != a[:-1]) | (b[1:] != b[:-1])]
    starts = np.flatnonzero(new_cell)
    for lo, hi in zip(starts, np.r_[starts[1:], j.size]):
        unit = np.cumsum(new_unit[lo:hi]) - 1
        parsed = ~np.isnan(value[lo:hi])
        values, code = np.unique(value[lo:hi][parsed], return_inverse=True)
        counts = np.zeros((int(unit[-1]) + 1, values.size), np.int64)
        np.add.at(counts, (unit[parsed], code), n[lo:hi][parsed])
        entry = out[(j[lo], f[lo], d[lo])]
        entry[:2] = counts, values
        entry[3:] = float(psum[lo:hi].sum()), int(pn[lo:hi].sum())
    return out


def consistency(db: str | os.PathLike | None, pool: str, seed: int = 0, n_boot: int = N_BOOT) -> pl.DataFrame:
    """One row per (judge, format, decoding) cell of the pool, in that order.

    Columns: judge, format, decoding, level (nominal | ordinal | interval, from the format's number
    of label values), samples (the most samples of any call), n_items (calls with >= 2 parsed
    samples), flip_rate, agreement, alpha, alpha_lo, alpha_hi (95% percentile bootstrap over units,
    n_boot resamples seeded by seed and the cell), samples_for_alpha_08 (Spearman-Brown),
    expected_agreement (mean Σ p² of sample 0's label distribution; null without distributions).
    """
    rows = []
    with reading(db) as read:
        pid = read.pool_id(pool)
        cells = read.frame("cell_calls", pool_id=pid)
        tables = unit_tables(read.numpy("consistency_units", pool_id=pid)) if cells.height else {}
    for cell in cells.iter_rows(named=True):
        level = scale_level(cell["nominal_levels"])
        rng = cell_rng(seed, cell["judge"], cell["format"], cell["decoding"])
        none = (np.zeros((0, 0), np.int64), np.zeros(0), 1, 0.0, 0)        # no repeated call: 1 sample, no item
        counts, values, samples, purity_sum, purity_n = tables.get(
            (cell["judge_id"], cell["format_id"], cell["decoding"]), none)
        stats = cell_statistics(counts, values, samples, purity_sum, purity_n, level, n_boot, rng)
        rows.append({"judge": cell["judge"], "format": cell["format"], "decoding": cell["decoding"],
                     "level": level, **stats})
    return pl.DataFrame(rows, schema=CONSISTENCY_COLUMNS)
