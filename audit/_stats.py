"""Tests shared by the probes (audit) and the downstream contrasts (train.contrasts): Holm's
step-down adjustment and McNemar's paired test. One implementation of each."""

from __future__ import annotations

import numpy as np
from scipy import stats

EXACT_BELOW = 25      # discordant pairs under which McNemar's exact binomial test is used


def holm(p) -> list[float]:
    """Holm's step-down adjusted p-values, in the input order: sorted ascending,
    p_(i) * (m - i + 1), running maximum, capped at 1 (ties keep their input order)."""
    p = np.asarray(p, dtype=float)
    m = p.size
    order = np.argsort(p, kind="stable")
    out = np.empty(m)
    out[order] = np.minimum(1.0, np.maximum.accumulate(p[order] * (m - np.arange(m))))
    return out.tolist()


def mcnemar(b: int, c: int) -> dict:
    """McNemar's test on the discordant counts b (baseline right, other wrong) and c (the reverse):
    p_exact = two-sided binomial test of min(b, c) in b + c at 1/2 (scipy.stats.binomtest);
    p_cc = chi-square (1 df) of the continuity-corrected max(|b - c| - 1, 0)^2 / (b + c);
    p = the exact one when b + c < 25, else the corrected one. No discordant pair: p = 1."""
    n = b + c
    if n == 0:
        return {"p_exact": 1.0, "p_cc": 1.0, "p": 1.0, "test": "exact"}
    p_exact = float(stats.binomtest(min(b, c), n, 0.5).pvalue)
    chi2 = max(abs(b - c) - 1, 0) ** 2 / n
    p_cc = float(stats.chi2.sf(chi2, 1))
    exact = n < EXACT_BELOW
    return {"p_exact": p_exact, "p_cc": p_cc, "p": p_exact if exact else p_cc, "test": "exact" if exact else "chi2_cc"}
