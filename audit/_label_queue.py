"""Which items to ask a person about next (docs/command-line.md#judgeaudit-label-queue), in plain numpy.

`random`: every item of the frame (the cell's judged items the annotator has not labelled) equally
likely, pi = n/M. `active` (active statistical inference, Zrnic & Candès 2024): uniform until the
annotator has 40 labels in the cell; then an item's inclusion probability is proportional to the
root of the mean squared residual (Y − λf)² of the labels so far in its bin of f (ten equal-width
bins of [0, 1]; a bin with fewer than 5 labels takes the mean over all labels), floored at a tenth
of the mean rate over the frame. The root is the optimal rate for a mean: the variance of a
weighted estimate, Σ e_i²/pi_i, is least for pi_i ∝ |e_i|. Where the judge errs alike in every bin
the rates are equal and the queue is uniform; the floor keeps every item's weight 1/pi bounded.

The draw is systematic sampling with probability proportional to pi (Madow 1949): the frame in a
seeded random order, a seeded start u in [0, 1), and the items whose cumulative pi crosses
u, u + 1, ..., u + n − 1. It takes exactly n items, each with probability pi (no item twice).
"""

from __future__ import annotations

import numpy as np

from ._estimate import tuned_lambda

WARM_UP = 40        # labels in the cell before an active queue follows the residuals
BINS = 10
MIN_PER_BIN = 5
FLOOR = 0.1         # of the mean rate


def bins(f: np.ndarray) -> np.ndarray:
    """The bin of each prediction in [0, 1]: min(⌊10 f⌋, 9)."""
    return np.minimum((np.clip(np.asarray(f, dtype=float), 0.0, 1.0) * BINS).astype(int), BINS - 1)


def residual_rates(f_frame: np.ndarray, f_lab: np.ndarray, y_lab: np.ndarray) -> np.ndarray:
    """Each frame item's rate √(mean (Y − λf)² in its bin), floored at a tenth of the mean rate."""
    f_lab, y_lab = np.asarray(f_lab, dtype=float), np.asarray(y_lab, dtype=float)
    lam = tuned_lambda(y_lab, f_lab, np.concatenate([f_lab, np.asarray(f_frame, dtype=float)]))
    sq = (y_lab - lam * f_lab) ** 2
    b = bins(f_lab)
    count = np.bincount(b, minlength=BINS)
    total = np.bincount(b, weights=sq, minlength=BINS)
    with np.errstate(invalid="ignore", divide="ignore"):
        msr = np.where(count >= MIN_PER_BIN, total / np.maximum(count, 1), sq.mean())
    rate = np.sqrt(msr)[bins(f_frame)]
    mean = rate.mean()
    if not np.isfinite(mean) or mean <= 0:
        return np.ones(rate.size)
    return np.maximum(rate, FLOOR * mean)


def capped(rate: np.ndarray, n: int) -> np.ndarray:
    """Inclusion probabilities n·rate/Σrate, with those above 1 set to 1 and the rest rescaled."""
    pi = np.zeros(rate.size)
    fixed = np.zeros(rate.size, dtype=bool)
    for _ in range(rate.size + 1):
        left = n - fixed.sum()
        free = ~fixed
        pi[free] = left * rate[free] / rate[free].sum()
        over = free & (pi >= 1.0)
        if not over.any():
            break
        fixed |= over
        pi[fixed] = 1.0
    return pi


def inclusion(f_frame: np.ndarray, n: int, f_lab: np.ndarray | None = None, y_lab: np.ndarray | None = None,
              strategy: str = "random") -> tuple[np.ndarray, bool]:
    """(pi over the frame, summing to min(n, M); whether it followed the residuals)."""
    m = np.asarray(f_frame).size
    n = min(int(n), m)
    if m == 0:
        return np.zeros(0), False
    follow = strategy == "active" and f_lab is not None and np.asarray(f_lab).size >= WARM_UP
    rate = residual_rates(f_frame, f_lab, y_lab) if follow else np.ones(m)
    return capped(rate, n), follow


def systematic_draw(pi: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Indices into pi of a systematic PPS draw (each item with probability pi), in the random
    order the draw walked the frame (the order the annotator sees them)."""
    order = rng.permutation(pi.size)
    u = rng.random()
    if pi.size == 0:
        return order
    cum = np.cumsum(pi[order])
    n = int(round(cum[-1]))
    cum[-1] = n                         # Σ pi = n up to rounding: the last point must fall inside
    hit = np.searchsorted(cum, u + np.arange(n), side="right")   # pi <= 1: each item at most once
    return order[hit]
