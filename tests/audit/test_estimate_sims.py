"""Simulations of a pool with a known θ (DESIGN.md 'Human labels and what they are worth'): the 95%
intervals of `estimate` cover θ in at least 93% of 200 seeded runs for random and active queues and
for a biased judge; an active queue needs fewer labels than a random one for a half-width of 0.04
where the judge's errors concentrate in some of its scores, and at most 1.1x where they do not.

A run draws labels in queues of 20 (the first 40 labels uniform, as `label-queue --strategy active`
does), each with the real draw (audit/_label_queue.py: inclusion probabilities, systematic PPS) and
weights m / (M·pi), and estimates with audit/_estimate.py. `python -m tests.audit.test_estimate_sims`
prints the figures with more runs.
"""

import time

import numpy as np
import pytest

from audit._estimate import hansen_hurwitz, ppi_mean
from audit._label_queue import inclusion, systematic_draw

LEVELS = np.array([0, 0.25, 0.5, 0.75, 1.0])          # a likert5 judge's normalised scores
SHARE = [0.15, 0.2, 0.3, 0.2, 0.15]


def pool(kind: str, rng: np.random.Generator, size: int = 3000):
    """(f, y): a judge's scores and the humans' accept (1) / reject (0) on `size` candidates.
    concentrated: right at the ends, a coin flip in the middle (its errors all at f = 0.5);
    uninformative: P(accept) = 0.4 + 0.2 f, so the residuals are alike at every score;
    biased: P(accept) = 0.6 f, the judge's mean (0.5) is above θ (0.3)."""
    f = rng.choice(LEVELS, size, p=SHARE)
    p = {"concentrated": np.select([f <= 0.25, f >= 0.75], [0.02, 0.98], 0.5),
         "uninformative": 0.4 + 0.2 * f, "biased": 0.6 * f}[kind]
    return f, (rng.random(size) < p).astype(float)


def label_run(f, y, strategy, rng, batch=20, stop_n=None, stop_hw=None, alpha=0.05):
    """Draw queues of `batch` until stop_n labels or a PPI half-width <= stop_hw: (estimate, labels)."""
    labelled, w = np.zeros(f.size, dtype=bool), np.zeros(f.size)
    while True:
        frame, done = np.flatnonzero(~labelled), np.flatnonzero(labelled)
        pi, _ = inclusion(f[frame], batch, f[done], y[done], strategy)
        take = systematic_draw(pi, rng)
        w[frame[take]] = hansen_hurwitz(pi[take], batch, frame.size)
        labelled[frame[take]] = True
        done = np.flatnonzero(labelled)
        est = ppi_mean(y[done], f[done], f, alpha, w=w[done])
        if (stop_n and done.size >= stop_n) or (stop_hw and est["half_width"] <= stop_hw) or done.size == f.size:
            return est, done.size


def coverage(kind: str, strategy: str, sims: int = 200, n: int = 200) -> float:
    """Share of `sims` seeded runs whose 95% interval (after n labels) holds the pool's θ."""
    hits = 0
    for s in range(sims):
        rng = np.random.default_rng(s)
        f, y = pool(kind, rng)
        est, _ = label_run(f, y, strategy, rng, batch=40, stop_n=n)
        hits += est["lo"] <= y.mean() <= est["hi"]
    return hits / sims


def labels_needed(kind: str, strategy: str, sims: int, hw: float = 0.04) -> float:
    """Mean over seeded runs of the labels drawn until the PPI half-width is <= hw (same pools for
    both strategies: seed s makes the same pool)."""
    out = []
    for s in range(sims):
        rng = np.random.default_rng(1000 + s)
        f, y = pool(kind, rng)
        out.append(label_run(f, y, strategy, np.random.default_rng(5000 + s), stop_hw=hw)[1])
    return float(np.mean(out))


@pytest.mark.parametrize("kind,strategy", [("concentrated", "random"), ("concentrated", "active"),
                                           ("uninformative", "active"), ("biased", "random"), ("biased", "active")])
def test_coverage_of_200_seeded_simulations(kind, strategy):
    assert coverage(kind, strategy) >= 0.93


def test_an_active_queue_needs_fewer_labels_where_the_errors_concentrate():
    active, random = labels_needed("concentrated", "active", 30), labels_needed("concentrated", "random", 30)
    assert active < 0.9 * random, (active, random)


def test_an_active_queue_needs_at_most_1_1x_where_the_errors_do_not_concentrate():
    active, random = labels_needed("uninformative", "active", 30), labels_needed("uninformative", "random", 30)
    assert active <= 1.1 * random, (active, random)


def test_the_biased_judges_mean_is_not_theta_and_ppi_still_covers():
    f, y = pool("biased", np.random.default_rng(0))
    assert f.mean() - y.mean() > 0.15                    # the judge alone would be far off


if __name__ == "__main__":
    t0 = time.time()
    for kind in ("concentrated", "uninformative", "biased"):
        for strategy in ("random", "active"):
            print(f"coverage {kind:13s} {strategy:6s} {coverage(kind, strategy):.3f}")
    for kind in ("concentrated", "uninformative"):
        a, r = labels_needed(kind, "active", 200), labels_needed(kind, "random", 200)
        print(f"labels for half-width 0.04, {kind}: active {a:.1f}, random {r:.1f}, ratio {a / r:.3f}")
    print(f"{time.time() - t0:.1f} s")
