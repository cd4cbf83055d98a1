"""A student's agreement with its teacher and with the human labels, on the held-out prompts, each a
proportion with a 95% Wilson score interval (docs/scoring.md#distilled-judges).

- With the teacher: the share of held-out candidates on which the student gives the teacher's answer.
- With the human labels, two kinds (each pointwise cell can be held to both):
  - `accept` (accept / reject of one candidate): the side of the humans is the mean of their votes
    (accept 1, reject 0), accept above ½, reject below, an even split left out; a cell accepts a
    candidate when its normalised score is ½ or more (a binary format's own answer, a scale's upper
    half: the rule of the alternative annotator test).
  - `pair` (A / B / tie on two candidates of a prompt): the humans' side is the mean of their votes
    (A 1, tie ½, B 0), A above ½, B below, tie at ½; a cell's side is that of the higher normalised
    score of the two, tie when they are equal.
  The teacher's agreement on the same items is given beside the student's.

The Wilson interval of k agreements in n: (p + z²/2n ± z √(p(1 − p)/n + z²/4n²)) / (1 + z²/n), with
p = k / n and z the normal's 97.5% point. It treats the n items as independent; candidates of one
prompt are not quite (they share the prompt), so with few held-out prompts it is narrower than a
bootstrap over prompts would be. Below MIN_N items there is no interval: too few to say.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from audit import MIN_N, too_few

Z95 = 1.959963984540054      # the standard normal's 97.5% point (scipy.stats.norm.ppf(0.975))


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of the proportion k / n (n > 0), without continuity correction."""
    p = k / n
    centre = p + z * z / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    den = 1 + z * z / n
    # at k = 0 (k = n) the bound is 0 (1) exactly; the arithmetic leaves a rounding error of 1e-17
    return (0.0 if k == 0 else (centre - half) / den), (1.0 if k == n else (centre + half) / den)


def proportion(hits: np.ndarray) -> dict:
    """{n, k, share, lo, hi} of a boolean array: the share of True with its Wilson interval (None
    below MIN_N (audit's) items, or for none)."""
    hits = np.asarray(hits, dtype=bool)
    n, k = int(hits.size), int(hits.sum())
    lo, hi = wilson(k, n) if not too_few(n) else (None, None)
    return {"n": n, "k": k, "share": k / n if n else None, "lo": lo, "hi": hi}


def _side(y: np.ndarray) -> np.ndarray:
    """1, 0, -1 as the humans' mean vote is above, at or below ½."""
    return np.sign(np.round(np.asarray(y, dtype=float) - 0.5, 12)).astype(int)


def human_agreement(values: dict[str, dict[int, float]], accept: pl.DataFrame, pairs: pl.DataFrame) -> dict:
    """Each scorer's agreement with the human labels on the items all its candidates are scored on.

    values: scorer (e.g. 'student', 'teacher') -> {cand_idx: normalised score}; accept, pairs: as
    audit.human_items returns them (a_idx, b_idx, y). Returns {'accept': {..}, 'pair': {..}}, each
    {n_items, then per scorer its proportion (n, k, share, lo, hi)}; the items are the labelled ones
    whose candidates every scorer scored (an accept item with an even split of votes left out)."""
    scorers = list(values)
    out = {}
    keep = accept.filter(pl.col("y") != 0.5)
    a = keep["a_idx"].to_list()
    seen = [i for i, c in enumerate(a) if all(c in values[s] for s in scorers)]
    human = _side(keep["y"].to_numpy()[seen]) > 0
    out["accept"] = {"n_items": len(seen), **{s: proportion(
        (np.array([values[s][a[i]] for i in seen]) >= 0.5) == human) for s in scorers}}
    lo_idx, hi_idx = pairs["a_idx"].to_list(), pairs["b_idx"].to_list()
    seen = [i for i in range(len(lo_idx)) if all(lo_idx[i] in values[s] and hi_idx[i] in values[s] for s in scorers)]
    human = _side(pairs["y"].to_numpy()[seen])
    out["pair"] = {"n_items": len(seen), **{s: proportion(
        np.sign(np.array([values[s][lo_idx[i]] - values[s][hi_idx[i]] for i in seen], dtype=float)).astype(int)
        == human) for s in scorers}}
    return out


def interval_text(share, lo, hi) -> str:
    """'0.812 (95% CI 0.700–0.890)', or the share alone where there is no interval."""
    if share is None:
        return "–"
    return f"{share:.3f}" + (f" (95% CI {lo:.3f}–{hi:.3f})" if lo is not None else "")


def humans_text(humans: dict | None) -> list[str]:
    """One line per kind of human label: the student's and the teacher's agreement, with intervals and
    n; 'too few labels' with n where there are fewer than MIN_N items."""
    if not humans:
        return ["human labels: none read when the student was trained"]
    lines = []
    for kind, what in (("accept", "accept labels"), ("pair", "pair labels")):
        h = humans[kind]
        if too_few(h["n_items"]):
            lines.append(f"held-out agreement with the human {what}: too few labels (n = {h['n_items']}, "
                         f"at least {MIN_N} needed)")
            continue
        s, t = h["student"], h["teacher"]
        lines.append(f"held-out agreement with the human {what} (n = {h['n_items']}): student "
                     f"{interval_text(s['share'], s['lo'], s['hi'])}, teacher {interval_text(t['share'], t['lo'], t['hi'])}")
    return lines
