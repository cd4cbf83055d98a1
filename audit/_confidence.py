"""Confidence calibration of a judge against human pairwise labels
(docs/metrics.md#agreement-with-humans-calibrate, Confidence). Pure: frames and arrays in, numbers out.

A call's p is the judge's probability that the response in slot A is better. From its label
distribution (`distribution`): (the mass of labels with a positive margin + half the mass of
zero-margin labels) / the distribution's total mass; a call asked several times keeps its
lowest-numbered sample that has a distribution. Without any distribution in the cell but with
repeated calls (`samples`): the same shares over the call's parsed samples. A cell whose calls
were asked once and carry no distribution has no p.

On a labelled pair (oriented x = a_id, y = b_id, human ties left out), p is turned to the
label's orientation (1 - p when x sat in slot B) and y = 1 when the humans said A, 0 when B.
Bins: bin = min(floor(10 p), 9) on p rounded to 12 decimals (so 1 - 0.9 lands in [0.1, 0.2)).
ECE = sum_b (n_b / N) |mean(y)_b - mean(p)_b|; Brier = mean((p - y)^2); the reliability diagram
lists the non-empty bins. ECE after recalibration: isotonic (increasing) regression by
pool-adjacent-violators, fitted on the other folds' judgements and applied to each fold's (linear
interpolation between the fitted points, clipped at the ends), over min(5, prompts) folds of
prompts dealt in a seeded shuffle; null with fewer than two prompts.
"""

from __future__ import annotations

import numpy as np
import polars as pl

N_BINS = 10
FOLDS = 5
CELL = ["judge", "format", "decoding"]
CALL = [*CELL, "prompt_idx", "a_idx", "b_idx"]
RELIABILITY = pl.List(pl.Struct({"lo": pl.Float64, "hi": pl.Float64, "n": pl.Int64, "mean_p": pl.Float64,
                                 "mean_y": pl.Float64}))
CONFIDENCE_SCHEMA = {"n_prob": pl.Int64, "probability_source": pl.String, "ece": pl.Float64, "brier": pl.Float64,
                     "ece_isotonic": pl.Float64, "reliability": RELIABILITY}


def distribution_p(call: np.ndarray, values: np.ndarray, probs: np.ndarray, n_calls: int) -> np.ndarray:
    """Per call, P(slot A better) from its label distribution, given one entry per (call, label):
    the label's margin value and its probability. NaN for a call with no mass."""
    call = np.asarray(call, dtype=np.int64)
    values, probs = np.asarray(values, dtype=float), np.asarray(probs, dtype=float)
    favour = np.where(values > 0, probs, 0.0) + np.where(values == 0, probs / 2, 0.0)
    total = np.bincount(call, weights=probs, minlength=n_calls)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, np.bincount(call, weights=favour, minlength=n_calls) / total, np.nan)


def sample_p(call: np.ndarray, values: np.ndarray, n_calls: int) -> np.ndarray:
    """Per call, the share of its parsed samples (value not NaN) preferring slot A, a tie counting
    half. NaN for a call with no parsed sample."""
    call = np.asarray(call, dtype=np.int64)
    values = np.asarray(values, dtype=float)
    parsed = ~np.isnan(values)
    favour = np.where(values > 0, 1.0, 0.0) + np.where(values == 0, 0.5, 0.0)
    n = np.bincount(call[parsed], minlength=n_calls)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, np.bincount(call[parsed], weights=favour[parsed], minlength=n_calls) / n, np.nan)


def cell_source(cell: pl.DataFrame) -> str | None:
    """A cell's probability source from its sample rows: `distribution` when any carries a label
    distribution, else `samples` when any call was asked more than once, else None."""
    if cell["dist_probs"].null_count() < cell.height:
        return "distribution"
    return "samples" if cell.height and cell["sample"].max() > 0 else None


def call_probabilities(samples: pl.DataFrame) -> pl.DataFrame:
    """samples: judge, format, decoding, prompt_idx, a_idx, b_idx, sample, value (null unless
    parsed), dist_values, dist_probs (the label distribution as margin values and probabilities,
    null without one) -> one row per call with a p: CALL columns, source, p (slot A better)."""
    out = []
    for _, cell in samples.sort([*CALL, "sample"]).group_by(CELL, maintain_order=True):
        source = cell_source(cell)
        if source == "distribution":
            first = cell.filter(pl.col("dist_probs").is_not_null()).unique(CALL, keep="first", maintain_order=True)
            calls = first.select(CALL).with_row_index("call")
            flat = first.with_row_index("call").select("call", "dist_values", "dist_probs") \
                .explode("dist_values", "dist_probs")
            p = distribution_p(flat["call"].to_numpy(), flat["dist_values"].to_numpy(),
                               flat["dist_probs"].to_numpy(), calls.height)
        elif source == "samples":
            calls = cell.select(CALL).unique(maintain_order=True).with_row_index("call")
            rows = cell.join(calls, on=CALL)
            p = sample_p(rows["call"].to_numpy(), rows["value"].fill_null(np.nan).to_numpy(), calls.height)
        else:
            continue
        out.append(calls.drop("call").with_columns(pl.lit(source).alias("source"), pl.Series("p", p))
                   .filter(pl.col("p").is_not_nan()))
    schema = {"judge": pl.String, "format": pl.String, "decoding": pl.String, "prompt_idx": pl.Int64,
              "a_idx": pl.Int64, "b_idx": pl.Int64, "source": pl.String, "p": pl.Float64}
    return pl.concat([o.cast(schema) for o in out]) if out else pl.DataFrame(schema=schema)


def labelled(probs: pl.DataFrame, pairs: pl.DataFrame) -> pl.DataFrame:
    """Calls with a p on labelled pairs without a human tie, in the pair's orientation. probs:
    call_probabilities' columns; pairs: prompt_idx, lo, hi, x, human (0 = A, 1 = B, 2 = tie).
    Columns: judge, format, decoding, source, prompt_idx, p (x is better), y."""
    on = probs.with_columns(pl.min_horizontal("a_idx", "b_idx").alias("lo"),
                            pl.max_horizontal("a_idx", "b_idx").alias("hi")) \
        .join(pairs.select("prompt_idx", "lo", "hi", "x", "human"), on=["prompt_idx", "lo", "hi"]) \
        .filter(pl.col("human") < 2)
    p = pl.when(pl.col("a_idx") == pl.col("x")).then(pl.col("p")).otherwise(1 - pl.col("p"))
    return on.select(*CELL, "source", "prompt_idx", p.alias("p"), (1 - pl.col("human")).cast(pl.Float64).alias("y"))


def bins(p: np.ndarray) -> np.ndarray:
    """bin = min(floor(10 p), 9), on p rounded to 12 decimals."""
    return np.minimum(np.floor(np.round(np.asarray(p, dtype=float), 12) * N_BINS), N_BINS - 1).astype(np.int64)


def reliability(p: np.ndarray, y: np.ndarray) -> list[dict]:
    """The non-empty bins: lo, hi, n, mean_p, mean_y."""
    p, y = np.asarray(p, dtype=float), np.asarray(y, dtype=float)
    b = bins(p)
    n = np.bincount(b, minlength=N_BINS)
    sum_p = np.bincount(b, weights=p, minlength=N_BINS)
    sum_y = np.bincount(b, weights=y, minlength=N_BINS)
    return [{"lo": k / N_BINS, "hi": (k + 1) / N_BINS, "n": int(n[k]), "mean_p": float(sum_p[k] / n[k]),
             "mean_y": float(sum_y[k] / n[k])} for k in range(N_BINS) if n[k]]


def ece(p: np.ndarray, y: np.ndarray) -> float:
    """Expected calibration error over ten equal-width bins: sum_b (n_b / N) |mean(y)_b - mean(p)_b|."""
    rows = reliability(p, y)
    total = sum(r["n"] for r in rows)
    return float(sum(r["n"] / total * abs(r["mean_y"] - r["mean_p"]) for r in rows))


def brier(p: np.ndarray, y: np.ndarray) -> float:
    """mean((p - y)^2)."""
    return float(np.mean((np.asarray(p, dtype=float) - np.asarray(y, dtype=float)) ** 2))


def isotonic_fit(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Increasing least-squares fit by pool-adjacent-violators: (the distinct x in order, the fitted
    value at each). Equal x are pooled first (their mean y, weighted by their count)."""
    ux, inv = np.unique(np.asarray(x, dtype=float), return_inverse=True)
    weight = np.bincount(inv, minlength=ux.size).astype(float)
    mean = np.bincount(inv, weights=np.asarray(y, dtype=float), minlength=ux.size) / weight
    level, mass, width = [], [], []          # the blocks so far: mean, weight, how many distinct x
    for m, w in zip(mean, weight):
        level.append(m), mass.append(w), width.append(1)
        while len(level) > 1 and level[-2] > level[-1]:      # a violator: pool the last two blocks
            w2, w1 = mass.pop(), mass.pop()
            m2, m1 = level.pop(), level.pop()
            k = width.pop() + width.pop()
            level.append((m1 * w1 + m2 * w2) / (w1 + w2)), mass.append(w1 + w2), width.append(k)
    return ux, np.repeat(level, width)


def isotonic_predict(fit: tuple[np.ndarray, np.ndarray], x: np.ndarray) -> np.ndarray:
    """The fit at x: linear between the fitted points, clipped to the first and last outside them."""
    return np.interp(np.asarray(x, dtype=float), *fit)


def cross_fitted(p: np.ndarray, y: np.ndarray, prompt: np.ndarray, rng: np.random.Generator,
                 folds: int = FOLDS) -> np.ndarray | None:
    """Isotonic predictions for every judgement, each from a fit on the other folds' judgements;
    folds of prompts (min(folds, prompts) of them) dealt from a seeded shuffle. None with fewer
    than two prompts."""
    prompts, which = np.unique(prompt, return_inverse=True)
    if prompts.size < 2:
        return None
    k = min(folds, prompts.size)
    fold = (np.argsort(rng.permutation(prompts.size)) % k)[which]
    out = np.empty(len(p))
    for f in range(k):
        test = fold == f
        out[test] = isotonic_predict(isotonic_fit(p[~test], y[~test]), p[test])
    return out


def cell_confidence(p: np.ndarray, y: np.ndarray, prompt: np.ndarray, source: str | None,
                    rng: np.random.Generator) -> dict:
    """One cell's keys: n_prob, probability_source, ece, brier, ece_isotonic, reliability (all null
    without a source; the metrics null when no judgement has a p)."""
    if source is None:
        return dict.fromkeys(CONFIDENCE_SCHEMA)
    p, y = np.asarray(p, dtype=float), np.asarray(y, dtype=float)
    if p.size == 0:
        return {**dict.fromkeys(CONFIDENCE_SCHEMA), "n_prob": 0, "probability_source": source}
    fitted = cross_fitted(p, y, np.asarray(prompt), rng)
    return {"n_prob": int(p.size), "probability_source": source, "ece": ece(p, y), "brier": brier(p, y),
            "ece_isotonic": None if fitted is None else ece(fitted, y), "reliability": reliability(p, y)}
