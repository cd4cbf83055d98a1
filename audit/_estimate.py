"""Prediction-powered estimates of a mean (docs/metrics.md#what-human-labels-are-worth-estimate), in
plain numpy: the same formulas as ppi-python 0.2.3 (`classical_mean_ci`, `ppi_mean_pointestimate`,
`ppi_mean_ci` with `lam=None`), which the tests check them against, plus weights for labels drawn
with unequal inclusion probabilities.

Notation: Y (n,) human values of the labelled items, f (n,) the judge's predictions on them, f_u
(N,) its predictions on the items the estimate is about; w (n,) the labelled items' weights.

classical: mean(wY) ± z·sd(wY)/√n, sd the population one (ddof 0); w = 1 is ppi-python's.

PPI++ (Angelopoulos, Duchi & Zrnic 2023): θ̂(λ) = λ·mean(f_u) + mean(w·(Y − λf)), with variance
λ²·var(f_u)/N + var(w·(Y − λf))/n (population variances). λ is tuned as ppi-python tunes it: with
the λ = 1 estimate θ₁ as the centre, g = w(Y − θ₁), ĝ = w(f − θ₁), ĝ_u = f_u − θ₁,
λ = 2·cov(g, ĝ) / (2·(1 + n/N)·var([ĝ, ĝ_u])) (cov over n, var with ddof 1 over the n + N
values), clipped to [0, 1].

Weights (active inference, Zrnic & Candès 2024). An item drawn with inclusion probability pi from
a frame of M items by a draw of size m stands for the frame's items in proportion 1/pi; as an
importance-sampling (Hansen–Hurwitz) weight against a uniform draw of the same size it is
w = m / (M·pi), whose expectation over the draw is 1, so mean(w·(Y − λf)) is unbiased for the
frame's mean residual and var(w·(Y − λf))/n is its variance. A uniform draw has pi = m/M, w = 1,
and the estimator is PPI++ exactly. Unlike ppi-python, the weights are used as given (ppi-python
rescales them to mean 1 in the sample, a ratio estimator whose variance its formula leaves out);
weights that already have mean 1 give ppi-python's numbers.

effective_labels = n × (classical half-width / PPI half-width)²: the labels a classical interval
would need to be as narrow as the PPI one (a half-width falls as 1/√n).
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np


def z_value(alpha: float) -> float:
    """The two-sided normal quantile for level 1 − alpha."""
    return NormalDist().inv_cdf(1 - alpha / 2)


def classical_mean(y: np.ndarray, alpha: float = 0.05, w: np.ndarray | None = None) -> dict:
    """{value, lo, hi, half_width} of the mean of w·y (w = 1 by default) with a normal interval
    (population sd)."""
    y = np.asarray(y, dtype=float)
    n = y.size
    if n == 0:
        return {"value": None, "lo": None, "hi": None, "half_width": None}
    y = y if w is None else np.asarray(w, dtype=float) * y
    value = float(y.mean())
    hw = z_value(alpha) * float(y.std()) / math.sqrt(n)
    return {"value": value, "lo": value - hw, "hi": value + hw, "half_width": hw}


def tuned_lambda(y: np.ndarray, f: np.ndarray, f_u: np.ndarray, w: np.ndarray | None = None) -> float:
    """PPI++'s power-tuning λ in [0, 1] (ppi-python's `_calc_lam_glm` for a mean, with weights w)."""
    y, f, f_u = (np.asarray(a, dtype=float) for a in (y, f, f_u))
    w = np.ones(y.size) if w is None else np.asarray(w, dtype=float)
    n, big_n = y.size, f_u.size
    centre = f_u.mean() + (w * (y - f)).mean()
    g, gh = w * (y - centre), w * (f - centre)
    cov = 2.0 * ((g - g.mean()) * (gh - gh.mean())).sum() / n
    var = np.var(np.concatenate([gh, f_u - centre]), ddof=1)
    if not np.isfinite(var) or var <= 0:
        return 0.0
    return float(np.clip(cov / (2.0 * (1.0 + n / big_n) * var), 0.0, 1.0))


def ppi_mean(y: np.ndarray, f: np.ndarray, f_u: np.ndarray, alpha: float = 0.05,
             w: np.ndarray | None = None, lam: float | None = None) -> dict:
    """{value, lo, hi, half_width, lambda}: PPI++ with λ tuned (or `lam`), labelled items weighted by w."""
    y, f, f_u = (np.asarray(a, dtype=float) for a in (y, f, f_u))
    if y.size == 0 or f_u.size == 0:
        return {"value": None, "lo": None, "hi": None, "half_width": None, "lambda": None}
    w = np.ones(y.size) if w is None else np.asarray(w, dtype=float)
    lam = tuned_lambda(y, f, f_u, w) if lam is None else float(lam)
    rect = w * (y - lam * f)
    value = float(lam * f_u.mean() + rect.mean())
    se = math.sqrt((lam * f_u).var() / f_u.size + rect.var() / y.size)
    hw = z_value(alpha) * se
    return {"value": value, "lo": value - hw, "hi": value + hw, "half_width": hw, "lambda": lam}


def effective_labels(n: int, classical_hw: float | None, ppi_hw: float | None) -> float | None:
    """n × (classical half-width / PPI half-width)²; None when either is missing or 0 (a classical
    interval of no width: the labels do not vary, so there is no width for the verdicts to narrow)."""
    if not n or classical_hw is None or ppi_hw is None or ppi_hw <= 0 or classical_hw <= 0:
        return None
    return n * (classical_hw / ppi_hw) ** 2


def hansen_hurwitz(pi: np.ndarray, m: np.ndarray, frame: np.ndarray) -> np.ndarray:
    """The weight m / (M·pi) of items drawn with inclusion probability pi by draws of size m from
    frames of M items (1 for a uniform draw, pi = m/M)."""
    return np.asarray(m, dtype=float) / (np.asarray(frame, dtype=float) * np.asarray(pi, dtype=float))
