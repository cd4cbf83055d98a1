"""Agreement of a judge with human labels (docs/metrics.md#agreement-with-humans-calibrate).

A labelled pair is oriented as its first label row says (x = a_id, y = b_id). Its human label is
the plurality of its annotators' votes in that orientation (an even split between the leaders is
a tie). Every parsed comparative call on a labelled pair is one judgement, turned to the pair's
orientation: a positive margin says the response in slot A is better, negative slot B, zero a tie.
Per (judge, format, decoding) cell: raw agreement and Cohen's kappa over the categories A, B, tie,
kappa = (p_o - p_e) / (1 - p_e), with a 95% percentile bootstrap over pairs (seeded); the same
without ties (only judgements where neither the humans nor the judge said tie, categories A and
B); the confusion table (rows: humans A, B, tie; columns: judge A, B, tie).

Human-human agreement, over the pairs with two or more annotators, is the ceiling a judge is held
to: every ordered pair of two different annotators' votes on the same pair is one comparison
(raw agreement, and kappa with pooled marginals, as `cohen_kappa_score` on those two lists).

An acceptance threshold on kappa passes a cell when kappa_lo >= threshold, fails it when
kappa_hi < threshold, and is inconclusive otherwise. The labelled pairs needed for an interval of
width w are n_pairs * (observed width / w)^2 (the width shrinks as 1/sqrt(pairs)).
"""

from __future__ import annotations

import math
import os

import numpy as np
import polars as pl

from ._bias import cell_rng
from ._confidence import CONFIDENCE_SCHEMA, call_probabilities, cell_confidence, cell_source, labelled
from ._read import reading

CATEGORIES = ("A", "B", "tie")
CODE = {c: k for k, c in enumerate(CATEGORIES)}
HUMAN_COLUMNS = ["n_pairs", "n_votes", "n_annotators", "n_comparisons", "agreement", "kappa", "kappa_lo",
                 "kappa_hi"]


def kappa(confusion: np.ndarray) -> np.ndarray | float:
    """Cohen's kappa of a (k, k) confusion table, or of each in a (B, k, k) batch; NaN where
    p_e = 1 or the table is empty."""
    c = np.asarray(confusion, dtype=float)
    single = c.ndim == 2
    c = c[None] if single else c
    n = c.sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        p_o = np.trace(c, axis1=1, axis2=2) / n
        p_e = (c.sum(axis=2) * c.sum(axis=1)).sum(axis=1) / n ** 2
        out = np.where(p_e < 1, (p_o - p_e) / (1 - p_e), np.nan)
    return float(out[0]) if single else out


def agreement(confusion: np.ndarray) -> np.ndarray | float:
    c = np.asarray(confusion, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.trace(c, axis1=-2, axis2=-1) / c.sum(axis=(-2, -1))
    return float(out) if np.ndim(out) == 0 else out


def oriented_pairs(labels: pl.DataFrame) -> tuple[pl.DataFrame, np.ndarray]:
    """Labels (prompt_idx, a_idx, b_idx, label, annotator) -> (pairs: pair, prompt_idx, x, y, lo, hi,
    n_votes, human (the plurality code); votes: (n_pairs, 3) counts of A, B, tie per pair)."""
    lab = labels.with_row_index("_row").with_columns(
        pl.min_horizontal("a_idx", "b_idx").alias("lo"), pl.max_horizontal("a_idx", "b_idx").alias("hi"))
    pairs = lab.sort("_row").group_by("prompt_idx", "lo", "hi", maintain_order=True) \
        .agg(pl.col("a_idx").first().alias("x"), pl.col("b_idx").first().alias("y")) \
        .with_row_index("pair")
    lab = lab.join(pairs, on=["prompt_idx", "lo", "hi"])
    code = lab["label"].replace_strict(CODE, return_dtype=pl.Int64).to_numpy()
    flipped = (lab["a_idx"] != lab["x"]).to_numpy()
    code = np.where(flipped & (code < 2), 1 - code, code)
    votes = np.bincount(lab["pair"].to_numpy() * 3 + code, minlength=pairs.height * 3).reshape(-1, 3)
    top = votes.max(axis=1, keepdims=True)
    human = np.where((votes == top).sum(axis=1) > 1, CODE["tie"], votes.argmax(axis=1))
    return pairs.with_columns(pl.Series("n_votes", votes.sum(axis=1)), pl.Series("human", human)), votes


def judgements(calls: pl.DataFrame, pairs: pl.DataFrame) -> pl.DataFrame:
    """The calls on labelled pairs, turned to the pair's orientation: judge, format, decoding, pair,
    human, verdict (codes 0 = A, 1 = B, 2 = tie)."""
    on = calls.with_columns(pl.min_horizontal("a_idx", "b_idx").alias("lo"),
                            pl.max_horizontal("a_idx", "b_idx").alias("hi")) \
        .join(pairs.select("pair", "prompt_idx", "lo", "hi", "x", "human"), on=["prompt_idx", "lo", "hi"])
    slot = pl.when(pl.col("value") > 0).then(0).when(pl.col("value") < 0).then(1).otherwise(2)
    verdict = pl.when((pl.col("a_idx") != pl.col("x")) & (slot < 2)).then(1 - slot).otherwise(slot)
    return on.select("judge", "format", "decoding", "pair", "human", verdict.alias("verdict"))


def _boot_kappas(per_pair: np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """Kappa of `n_boot` resamples of the pairs; per_pair is (n_pairs, k*k) confusion counts."""
    n, kk = per_pair.shape
    k = int(math.isqrt(kk))
    out = []
    chunk = max(1, 4_000_000 // max(n, 1))
    for first in range(0, n_boot, chunk):
        size = min(chunk, n_boot - first)
        weights = rng.multinomial(n, np.full(n, 1.0 / n), size=size).astype(float)
        out.append(kappa((weights @ per_pair).reshape(size, k, k)))
    return np.concatenate(out) if out else np.zeros(0)


def _interval(draws: np.ndarray) -> tuple[float | None, float | None]:
    draws = draws[~np.isnan(draws)]
    if draws.size == 0:
        return None, None
    lo, hi = np.percentile(draws, [2.5, 97.5])
    return float(lo), float(hi)


def decide(kappa_lo, kappa_hi, threshold) -> str | None:
    if threshold is None or kappa_lo is None:
        return None
    return "pass" if kappa_lo >= threshold else "fail" if kappa_hi < threshold else "inconclusive"


def pairs_needed(n_pairs: int, lo, hi, target_width: float | None) -> int | None:
    """Labelled pairs for a kappa interval `target_width` wide: width shrinks as 1/sqrt(pairs)."""
    if target_width is None or lo is None or not hi > lo or target_width <= 0:
        return None
    return int(math.ceil(n_pairs * ((hi - lo) / target_width) ** 2))


def cell_agreement(pair: np.ndarray, human: np.ndarray, verdict: np.ndarray, n_boot: int,
                   rng: np.random.Generator, threshold: float | None = None,
                   target_width: float | None = 0.2) -> dict:
    """One cell's agreement from its judgements (pair index, human code, judge code)."""
    _, local = np.unique(pair, return_inverse=True)
    n_pairs = int(local.max()) + 1 if local.size else 0
    per_pair = np.bincount(local * 9 + human * 3 + verdict, minlength=n_pairs * 9).reshape(n_pairs, 9).astype(float)
    conf = per_pair.sum(axis=0).reshape(3, 3)
    no_ties = per_pair.reshape(n_pairs, 3, 3)[:, :2, :2].reshape(n_pairs, 4)
    draws = _boot_kappas(per_pair, n_boot, rng)
    draws_nt = _boot_kappas(no_ties, n_boot, rng) if no_ties.sum() else np.zeros(0)
    lo, hi = _interval(draws)
    lo_nt, hi_nt = _interval(draws_nt)
    c2 = conf[:2, :2]
    return {"n": int(conf.sum()), "n_pairs": n_pairs, "agreement": agreement(conf), "kappa": kappa(conf),
            "kappa_lo": lo, "kappa_hi": hi, "n_no_ties": int(c2.sum()),
            "agreement_no_ties": agreement(c2) if c2.sum() else None,
            "kappa_no_ties": kappa(c2) if c2.sum() else None,
            "kappa_no_ties_lo": lo_nt, "kappa_no_ties_hi": hi_nt,
            "confusion": conf.astype(int).ravel().tolist(), "threshold": threshold,
            "decision": decide(lo, hi, threshold),
            "passes": None if threshold is None or lo is None else bool(lo >= threshold),
            "target_width": target_width, "n_pairs_needed": pairs_needed(n_pairs, lo, hi, target_width)}


def calibrate_frames(calls: pl.DataFrame, labels: pl.DataFrame, n_boot: int = 2000, seed: int = 0,
                     threshold: float | None = None, target_width: float | None = 0.2,
                     samples: pl.DataFrame | None = None) -> pl.DataFrame:
    """Pure: one row per (judge, format, decoding) cell with a judgement on a labelled pair.
    calls: judge, format, decoding, prompt_idx, a_idx, b_idx, value; labels: prompt_idx, a_idx,
    b_idx, label, annotator; samples (optional, for the confidence keys): the rows of
    audit/sql/calibration_samples.sql. Columns: those of `calibrate` (`confusion`: 9 counts,
    humans A, B, tie by rows)."""
    rows = []
    if labels.height and calls.height:
        pairs, _ = oriented_pairs(labels)
        judged = judgements(calls, pairs)
        probs = labelled(call_probabilities(samples), pairs) if samples is not None and samples.height else None
        for (judge, fmt, decoding), part in judged.sort("judge", "format", "decoding") \
                .group_by("judge", "format", "decoding", maintain_order=True):
            rng = cell_rng(seed, judge, fmt, decoding)     # by identity: other cells change no interval
            out = cell_agreement(part["pair"].to_numpy(), part["human"].to_numpy(), part["verdict"].to_numpy(),
                                 n_boot, rng, threshold, target_width)
            rows.append({"judge": judge, "format": fmt, "decoding": decoding, **out,
                         **_confidence(probs, samples, seed, judge, fmt, decoding)})
    schema = {"judge": pl.String, "format": pl.String, "decoding": pl.String, "n": pl.Int64, "n_pairs": pl.Int64,
              "agreement": pl.Float64, "kappa": pl.Float64, "kappa_lo": pl.Float64, "kappa_hi": pl.Float64,
              "n_no_ties": pl.Int64, "agreement_no_ties": pl.Float64, "kappa_no_ties": pl.Float64,
              "kappa_no_ties_lo": pl.Float64, "kappa_no_ties_hi": pl.Float64, "confusion": pl.List(pl.Int64),
              "threshold": pl.Float64, "decision": pl.String, "passes": pl.Boolean, "target_width": pl.Float64,
              "n_pairs_needed": pl.Int64, **CONFIDENCE_SCHEMA}
    return pl.DataFrame(rows, schema=schema).with_columns(pl.selectors.float().fill_nan(None))


def _confidence(probs: pl.DataFrame | None, samples: pl.DataFrame | None, seed: int, *cell: str) -> dict:
    """The cell's confidence keys (audit/_confidence.py), from its labelled calls with a p; a cell
    with probabilities but none on a non-tie labelled pair has n_prob 0."""
    if probs is None:
        return cell_confidence([], [], [], None, None)
    mine = probs.filter(pl.col("judge") == cell[0], pl.col("format") == cell[1], pl.col("decoding") == cell[2])
    source = mine["source"][0] if mine.height else cell_source(
        samples.filter(pl.col("judge") == cell[0], pl.col("format") == cell[1], pl.col("decoding") == cell[2]))
    return cell_confidence(mine["p"].to_numpy(), mine["y"].to_numpy(), mine["prompt_idx"].to_numpy(), source,
                           cell_rng(seed, *cell, "isotonic"))


def human_agreement(labels: pl.DataFrame, n_boot: int = 2000, seed: int = 0) -> pl.DataFrame:
    """Pure: one row, the agreement between annotators over the pairs with two or more votes.
    Columns: HUMAN_COLUMNS (n_comparisons = ordered pairs of two annotators' votes on one pair)."""
    row = {"n_pairs": 0, "n_votes": 0, "n_annotators": 0, "n_comparisons": 0, "agreement": None,
           "kappa": None, "kappa_lo": None, "kappa_hi": None}
    if labels.height:
        _, votes = oriented_pairs(labels)
        multi = votes[votes.sum(axis=1) >= 2].astype(float)
        if multi.shape[0]:
            # per pair: S[k, l] = c_k c_l off the diagonal, c_k (c_k - 1) on it (ordered annotator pairs)
            per_pair = (multi[:, :, None] * multi[:, None, :] - np.einsum("pk,kl->pkl", multi, np.eye(3))) \
                .reshape(-1, 9)
            conf = per_pair.sum(axis=0).reshape(3, 3)
            lo, hi = _interval(_boot_kappas(per_pair, n_boot, np.random.default_rng([seed, 99])))
            row.update(n_pairs=int(multi.shape[0]), n_votes=int(multi.sum()), n_comparisons=int(conf.sum()),
                       agreement=agreement(conf), kappa=kappa(conf), kappa_lo=lo, kappa_hi=hi)
        row["n_annotators"] = labels["annotator"].n_unique()
    schema = {"n_pairs": pl.Int64, "n_votes": pl.Int64, "n_annotators": pl.Int64, "n_comparisons": pl.Int64,
              "agreement": pl.Float64, "kappa": pl.Float64, "kappa_lo": pl.Float64, "kappa_hi": pl.Float64}
    return pl.DataFrame([row], schema=schema).with_columns(pl.selectors.float().fill_nan(None))


def _load(db, pool: str, labels: pl.DataFrame | None):
    """(calls, labels, samples): with the stored labels, only the calls on their pairs (the others would
    be dropped by `judgements`); with labels given, every comparative call."""
    with reading(db) as read:
        pid = read.pool_id(pool)
        calls = read.frame("calibration_calls" if labels is not None else "calibration_labelled_calls", pool_id=pid)
        samples = read.frame("calibration_samples", pool_id=pid)
        if labels is None:
            labels = read.frame("labels", pool_id=pid)
    return calls, labels, samples


def calibrate(db: str | os.PathLike | None, pool: str, labels: pl.DataFrame | None = None, n_boot: int = 2000,
              seed: int = 0, threshold: float | None = None, target_width: float | None = 0.2) -> pl.DataFrame:
    """Agreement with human labels per (judge, comparative format, decoding) cell of the pool.

    `labels` (prompt_idx, a_idx, b_idx, label, annotator), or the pool's stored labels. Columns:
    judge, format, decoding, n (judgements), n_pairs, agreement, kappa, kappa_lo, kappa_hi,
    n_no_ties, agreement_no_ties, kappa_no_ties, kappa_no_ties_lo, kappa_no_ties_hi, confusion (9
    counts: rows humans A, B, tie; columns judge A, B, tie), threshold, decision (pass | fail |
    inconclusive), passes (kappa_lo >= threshold), target_width, n_pairs_needed; and the judge's
    confidence against the labels (audit/_confidence.py; all null in a cell whose calls carry no
    label distribution and were asked once): n_prob, probability_source (distribution |
    samples), ece, brier, ece_isotonic, reliability (list of lo, hi, n, mean_p, mean_y).
    """
    calls, labels, samples = _load(db, pool, labels)
    return calibrate_frames(calls, labels, n_boot, seed, threshold, target_width, samples)


def human_ceiling(db: str | os.PathLike | None, pool: str, labels: pl.DataFrame | None = None,
                  n_boot: int = 2000, seed: int = 0) -> pl.DataFrame:
    """Human-human agreement over the pool's pairs labelled by several annotators: one row with
    n_pairs, n_votes, n_annotators, n_comparisons, agreement, kappa, kappa_lo, kappa_hi."""
    if labels is None:
        with reading(db) as read:
            labels = read.frame("labels", pool_id=read.pool_id(pool))
    return human_agreement(labels, n_boot, seed)


def stored_labels(db: str | os.PathLike | None, pool: str) -> pl.DataFrame:
    """The pool's stored labels: prompt_idx, a_idx, b_idx, label, annotator, source, line."""
    with reading(db) as read:
        return read.frame("labels", pool_id=read.pool_id(pool))
