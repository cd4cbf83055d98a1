"""The alternative annotator test (docs/metrics.md#may-the-judge-replace-the-annotators-alt-test): may
a cell's verdicts stand in for the people who labelled the pool? As its authors define it (Calderon,
Reichart & Dror, ACL 2025), in plain numpy and scipy; the tests check it against the authors' own
function on the same annotations.

Items are those labelled by at least two annotators that the cell has a verdict on. For each annotator
h with at least `min_items` of them, h is left out; on each of h's items the judge's answer and h's
label are each scored against the labels of the remaining annotators (the alignment: the share of
them equal to it for categorical labels, `accuracy`, or minus the root mean squared difference for
numbers, `neg_rmse`). W_i = 1 when the judge's score is at least h's, H_i = 1 when h's is at least the
judge's (a tie counts for both). A one-sided one-sample t-test of H − W against ε (alternative
"less": the judge's advantage exceeds −ε) gives h's p-value; the Benjamini–Yekutieli procedure over
the annotators tested, at q = alpha, says which are rejected: the judge won against them. The winning
rate ω = rejected / tested; the average advantage probability ρ = the mean over the annotators tested
of mean(W). The judge passes when ω ≥ 0.5.
"""

from __future__ import annotations

import warnings
from typing import Hashable

import numpy as np
from scipy import stats

MIN_ITEMS = 30           # the authors' minimum of items per annotator (the t-test's normality)
MIN_ANNOTATORS = 2       # an item needs at least two annotators (one left out, one to align with)
PASS_RATE = 0.5
ALIGNMENTS = ("accuracy", "neg_rmse")


def alignment(answer, others: list, how: str = "accuracy") -> float:
    """How well `answer` represents the labels `others`: the share equal to it (`accuracy`), or minus
    the root mean squared difference (`neg_rmse`, for numeric labels)."""
    if how == "accuracy":
        return sum(answer == o for o in others) / len(others)
    if how == "neg_rmse":
        return -float(np.sqrt(np.mean([(answer - o) ** 2 for o in others])))
    raise ValueError(f"alignment {how!r}: use one of {', '.join(ALIGNMENTS)}")


def by_rejected(p_values, q: float) -> np.ndarray:
    """The Benjamini–Yekutieli step-up procedure at FDR q: a boolean per p-value, True where rejected.
    With m p-values sorted ascending, p_(k) is compared with k/m · q / H_m (H_m = Σ 1/i); every p-value
    up to the largest k that passes is rejected. A NaN p-value (a t-test with no spread) passes none."""
    p = np.asarray(p_values, dtype=float)
    m = p.size
    out = np.zeros(m, dtype=bool)
    if m == 0:
        return out
    order = np.argsort(p, kind="stable")               # NaNs sort last
    harmonic = float(np.sum(1.0 / np.arange(1, m + 1)))
    passes = p[order] <= np.arange(1, m + 1) / m * q / harmonic
    if passes.any():
        out[order[: int(np.flatnonzero(passes)[-1]) + 1]] = True
    return out


def one_sided_p(differences: np.ndarray, epsilon: float) -> float:
    """scipy's one-sample t-test of mean(H − W) against ε, alternative "less" (a constant sample has
    no spread: scipy's answer is kept, whatever its precision warning)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(stats.ttest_1samp(differences, epsilon, alternative="less").pvalue)


def alt_test_annotations(judge: dict[Hashable, object], humans: dict[str, dict[Hashable, object]],
                         epsilon: float = 0.2, q: float = 0.05, how: str = "accuracy",
                         min_items: int = MIN_ITEMS, min_annotators: int = MIN_ANNOTATORS) -> dict:
    """The test on plain annotations: `judge` maps item -> the judge's answer, `humans` annotator ->
    {item -> label}. Returns {n_items: items kept (≥ min_annotators annotators and a judge's answer),
    tested: [{annotator, n_items, p_value, advantage_probability, won}] in the order of `humans`,
    skipped: {annotator: n_items} (fewer than min_items), winning_rate, advantage_probability, passed}
    (the three null when no annotator was tested)."""
    who: dict[Hashable, list[str]] = {}
    for h, labels in humans.items():
        for item in labels:
            who.setdefault(item, []).append(h)
    kept = {i for i, hs in who.items() if len(hs) >= min_annotators and i in judge}
    tested, skipped, p_values = [], {}, []
    for h, labels in humans.items():
        items = [i for i in labels if i in kept]
        if len(items) < min_items:
            skipped[h] = len(items)
            continue
        w, hw = np.empty(len(items)), np.empty(len(items))
        for k, i in enumerate(items):
            others = [humans[o][i] for o in who[i] if o != h]
            s_judge, s_human = alignment(judge[i], others, how), alignment(labels[i], others, how)
            w[k], hw[k] = float(s_judge >= s_human), float(s_human >= s_judge)
        p_values.append(one_sided_p(hw - w, epsilon))
        tested.append({"annotator": h, "n_items": len(items), "p_value": p_values[-1],
                       "advantage_probability": float(w.mean())})
    for row, won in zip(tested, by_rejected(p_values, q)):
        row["won"] = bool(won)
    if not tested:
        return {"n_items": len(kept), "tested": [], "skipped": skipped, "winning_rate": None,
                "advantage_probability": None, "passed": None}
    rate = sum(r["won"] for r in tested) / len(tested)
    return {"n_items": len(kept), "tested": tested, "skipped": skipped, "winning_rate": rate,
            "advantage_probability": float(np.mean([r["advantage_probability"] for r in tested])),
            "passed": rate >= PASS_RATE}
