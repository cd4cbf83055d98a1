"""Aligning a judge with the human labels, the parts that compute (docs/metrics.md#aligning-a-judge-align):
the split, agreement, the search's choices within the call budget, the prompt-clustered bootstrap.
Pure: arrays, lists and a scoring callback in, numbers out.

- An item is a human-labelled candidate (pointwise format) or pair (comparative), with y its human
  value in favour of its first candidate. The judge's decision d: pointwise 1 when its normalised
  score is >= 0.5, else 0; comparative 1 / ½ / 0 as the margin favours slot A (the item's first
  candidate) / ties / favours slot B. Agreement of an item = 1 − |d − y| (accuracy for one annotator's
  label); an unparsed answer agrees 0. A candidate's agreement = the mean over its items.
- Split: the evaluation prompts are the pool's held-out prompts, then a seeded share of the other
  labelled prompts; the search sees only the rest (training prompts). The search's minibatch is a
  seeded set of training prompts (minibatch_prompts); demonstrations come from the other training prompts.
- Search, within BUDGET calls (one call = one item scored under one candidate): each instruction
  variant without demonstrations on the minibatch (the built-in wording first); then, with the best
  wording, each single demonstration the budget allows (seeded order) on the minibatch; the K best
  singles (ties by the seeded order) make the set, scored once more; the winner is the best of the
  wording alone and the set (a tie keeps the wording alone).
- Gain: after − before on the evaluation items; intervals are 95% percentiles of a bootstrap that
  resamples evaluation prompts (each statistic a ratio of sums over the resampled prompts' items).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

N_BOOT = 2000
MINIBATCH_PROMPTS = 12
MINIBATCH_ITEMS = 24


def minibatch_prompts(order: list[int], items_of: dict[int, int], budget: int, k: int = 1) -> set[int]:
    """The search's minibatch: training prompts in the seeded order, each taken while the minibatch
    stays within min(24, budget / (2k + 2)) items (the first always), at most 12 prompts and half the
    training prompts: room for the wording, about 2k single demonstrations and the set."""
    want = max(1, min(MINIBATCH_ITEMS, budget // (2 * k + 2)))
    cap = min(MINIBATCH_PROMPTS, max(1, len(order) // 2))
    chosen, n = [], 0
    for p in order[:cap]:
        if chosen and n + items_of.get(p, 0) > want:
            break
        chosen.append(p)
        n += items_of.get(p, 0)
    return set(chosen)


def judge_decision(kind: str, normalised: float | None) -> float | None:
    """d from an answer's normalised score (pointwise) or margin sign (comparative: pass the margin)."""
    if normalised is None:
        return None
    if kind == "pointwise":
        return 1.0 if normalised >= 0.5 else 0.0
    return 1.0 if normalised > 0 else 0.0 if normalised < 0 else 0.5


def agreement(d: float | None, y: float) -> float:
    """1 − |d − y|; 0 for an unparsed answer."""
    return 0.0 if d is None else 1.0 - abs(d - y)


def demonstration_answer(answers: dict[str, float], lo: float, hi: float, y: float) -> str:
    """The format's answer nearest the human value on its scale, lo + y (hi − lo) (ties: the higher)."""
    target = lo + y * (hi - lo)
    return min(answers, key=lambda k: (abs(answers[k] - target), -answers[k]))


def split_prompts(prompts: list[int], heldout: set[int], share: float, key: Callable[[int], bytes]) -> tuple[set, set]:
    """(training prompts, evaluation prompts): the held-out ones, then the round(share x n) others
    (halves up) with the smallest key, evaluate; the rest train."""
    rest = sorted(p for p in set(prompts) if p not in heldout)
    n = int(np.floor(share * len(rest) + 0.5)) if share > 0 else 0
    chosen = set(sorted(rest, key=key)[:n])
    return set(rest) - chosen, {p for p in set(prompts) if p in heldout} | chosen


def clustered_gain(prompt: np.ndarray, before: np.ndarray, after: np.ndarray, rng: np.random.Generator,
                   n_boot: int = N_BOOT) -> dict:
    """before, after, gain: {value, lo, hi}: the means over items, with 95% percentile intervals of a
    bootstrap over prompts (each resample: sums over the drawn prompts' items, divided by their count)."""
    prompt = np.asarray(prompt)
    before, after = np.asarray(before, dtype=float), np.asarray(after, dtype=float)
    ids, which = np.unique(prompt, return_inverse=True)
    n = np.bincount(which, minlength=ids.size).astype(float)
    sums = {k: np.bincount(which, weights=v, minlength=ids.size) for k, v in
            (("before", before), ("after", after), ("gain", after - before))}
    out = {}
    draws = rng.multinomial(ids.size, np.full(ids.size, 1.0 / ids.size), size=n_boot).astype(float) if ids.size else None
    for k, s in sums.items():
        value = float(s.sum() / n.sum()) if n.sum() else None
        lo = hi = None
        if draws is not None:
            stats = (draws @ s) / (draws @ n)
            lo, hi = (float(x) for x in np.percentile(stats, [2.5, 97.5]))
        out[k] = {"value": value, "lo": lo, "hi": hi}
    return out


def search(score: Callable[[int, list, list], np.ndarray], n_instructions: int, minibatch: list, demo_pool: list,
           k: int, budget: int) -> dict:
    """The built-in search (the module's doc). score(instruction index, demonstrations, items) -> the
    items' agreements (one call each). Returns {instruction, demonstrations, agreement, calls, trace}
    where trace lists each candidate scored: {phase, instruction, demonstrations, n, agreement}."""
    m = len(minibatch)
    calls, trace = 0, []

    def scored(phase: str, i: int, demos: list) -> float:
        nonlocal calls
        value = float(np.mean(score(i, demos, minibatch))) if m else 0.0
        calls += m
        trace.append({"phase": phase, "instruction": i, "demonstrations": list(demos), "n": m, "agreement": value})
        return value

    best_i, best = 0, scored("instructions", 0, [])
    for i in range(1, n_instructions):
        if calls + m > budget:
            break
        value = scored("instructions", i, [])
        if value > best:
            best_i, best = i, value
    winner = {"instruction": best_i, "demonstrations": [], "agreement": best}
    if k > 0 and demo_pool and m:
        room = (budget - calls) // m - 1            # one more minibatch for the set itself
        singles = []
        for order, demo in enumerate(demo_pool[:max(room, 0)]):
            singles.append((scored("demonstration", best_i, [demo]), -order, demo))
        if len(singles) >= k:
            chosen = [d for _, _, d in sorted(singles, key=lambda t: (t[0], t[1]), reverse=True)[:k]]
            value = scored("set", best_i, chosen) if k > 1 else max(s[0] for s in singles)
            if value > winner["agreement"]:
                winner = {"instruction": best_i, "demonstrations": chosen, "agreement": value}
    return {**winner, "calls": calls, "trace": trace}
