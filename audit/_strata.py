"""Stratified prediction-powered estimates (docs/metrics.md#stratified-estimates-estimate---strata), in
plain numpy over audit/_estimate.py's PPI++: the items are split into strata (a field of theirs, or
bins of the judge's score), PPI++ with its own tuned λ_k runs within each stratum, and the strata's
estimates are combined with weights N_k / N, the stratum's share of the items (stratified PPI, Fisch
et al. 2024):

    θ̂ = Σ_k (N_k / N)·θ̂_k,    se² = Σ_k (N_k / N)²·se_k².

Where the judge errs differently from stratum to stratum (its residual Y − λf has another mean, or its
scores another slope), the within-stratum rectifiers vary less than the pooled one, so the interval is
narrower; where it does not, the strata cost a little (one λ each).

A stratum needs labelled items to be estimated: the strata with fewer than MIN_STRATUM_LABELS labels
are pooled into one (`rest`), and a rest that still has fewer joins the stratum with the most labels.
The labelled items' weights (audit/_estimate.py: m / (M·pi) for a queue's item) are rescaled to mean 1
within each stratum, so each stratum's rectifier is a mean over its own labels (post-stratification).
"""

from __future__ import annotations

import math

import numpy as np

from ._estimate import ppi_mean, z_value

SCORE_BINS = 5                 # score-bin strata: five equal-width bins of the normalised score
MIN_STRATUM_LABELS = 10
REST = "rest"


def score_bins(f: np.ndarray) -> np.ndarray:
    """The bin of each score in [0, 1]: min(⌊5f⌋, 4) (f = 1 in the top bin), as text."""
    f = np.asarray(f, dtype=float)
    return np.minimum(np.floor(np.round(f, 12) * SCORE_BINS), SCORE_BINS - 1).astype(int).astype(str)


def merge_strata(s_lab: np.ndarray, s_all: np.ndarray, min_labels: int = MIN_STRATUM_LABELS) -> dict:
    """{stratum: the stratum it is estimated in}: a stratum with fewer than min_labels labelled items
    goes to REST; a REST with fewer than min_labels goes to the stratum with the most labels (ties: by
    name)."""
    names = sorted(set(np.asarray(s_all, dtype=str)))
    counts = {k: int(np.sum(np.asarray(s_lab, dtype=str) == k)) for k in names}
    big = [k for k in names if counts[k] >= min_labels]
    out = {k: (k if k in big else REST) for k in names}
    rest = sum(counts[k] for k in names if k not in big)
    if big and any(v == REST for v in out.values()) and rest < min_labels:
        top = min(big, key=lambda k: (-counts[k], k))
        out = {k: (top if v == REST else v) for k, v in out.items()}
    return out


def stratified_ppi_mean(y: np.ndarray, f: np.ndarray, f_u: np.ndarray, s_lab: np.ndarray, s_all: np.ndarray,
                        alpha: float = 0.05, w: np.ndarray | None = None,
                        min_labels: int = MIN_STRATUM_LABELS) -> dict:
    """{value, lo, hi, half_width, strata: [{stratum, n_labelled, n_items, weight, value, lambda}]}:
    PPI++ within each stratum (s_lab: the labelled items' strata, s_all: f_u's), combined by N_k / N.
    Without a label, every number is None."""
    y, f, f_u = (np.asarray(a, dtype=float) for a in (y, f, f_u))
    if y.size == 0 or f_u.size == 0:
        return {"value": None, "lo": None, "hi": None, "half_width": None, "strata": []}
    w = np.ones(y.size) if w is None else np.asarray(w, dtype=float)
    into = merge_strata(s_lab, s_all, min_labels)
    lab = np.array([into[k] for k in np.asarray(s_lab, dtype=str)])
    every = np.array([into[k] for k in np.asarray(s_all, dtype=str)])
    z, value, var, parts = z_value(alpha), 0.0, 0.0, []
    for k in sorted(set(every)):
        mine, items = lab == k, every == k
        share = items.sum() / f_u.size
        wk = w[mine] / w[mine].mean()
        est = ppi_mean(y[mine], f[mine], f_u[items], alpha, w=None if np.all(wk == 1) else wk)
        value += share * est["value"]
        var += share ** 2 * (est["half_width"] / z) ** 2
        parts.append({"stratum": k, "n_labelled": int(mine.sum()), "n_items": int(items.sum()),
                      "weight": float(share), "value": est["value"], "lambda": est["lambda"]})
    hw = z * math.sqrt(var)
    return {"value": value, "lo": value - hw, "hi": value + hw, "half_width": hw, "strata": parts}
