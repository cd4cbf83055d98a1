"""Scores on the human scale (docs/metrics.md#scores-on-the-human-scale): a cell's scores mapped to the
probability that a human agrees, by isotonic regression on the human labels, cross-fitted over folds
of prompts, with a check per system that the map carries over.

Two targets, one per kind of human label:
- `accept` (accept labels): an item is a labelled candidate of a pointwise cell; x = the cell's
  normalised score of it (the mean over its parsed samples), y = the mean over its annotators of
  accept 1 / reject 0; the map gives P(a human accepts).
- `prefer` (pair labels): an item is a labelled pair (lo_idx < hi_idx) the cell judged; x = the
  cell's preference for lo_idx, in [0, 1]: comparative, the mean over its parsed calls in either
  order of 1 / ½ / 0 as a call favours lo_idx / ties / favours hi_idx; pointwise, (1 + s_lo − s_hi)/2
  of the two normalised scores; y = the mean over annotators of 1 / ½ / 0 in favour of lo_idx. Each
  pair enters the fit in both orientations, (x, y) and (1 − x, 1 − y), so the map is the same
  whichever candidate is called lo (m(1 − x) = 1 − m(x)); the map gives P(a human prefers).

The map: increasing least-squares (pool-adjacent-violators, equal x pooled first) on every labelled
item, linear between its points and clipped at its ends: `map_score`, `map_p`, with n = labelled
items. Cross-fitted: each item's `mapped` value comes from the fit on the other folds' items, folds
being min(5, prompts) groups of prompts dealt from a seeded shuffle (per cell, seeded by the cell's
identity); with fewer than two prompts there is no cross-fitted value. Equal to scikit-learn's
IsotonicRegression(out_of_bounds="clip") on the same folds (tests/audit/test_human_scale.py).

Carry-over, per system (candidate_id): the residual of an item is human − mapped (for a pair, turned
to the system's side: y − m for lo's system, −(y − m) for hi's); `residual` = their mean over the
system's items, with a normal 95% interval (sample sd, ddof 1) from MIN_ITEMS items on (null below:
too few to say); `flagged` when the interval excludes 0: the map does not hold for that system.
"""

from __future__ import annotations

import os

import numpy as np
import polars as pl

from ._bias import cell_rng
from ._confidence import isotonic_fit, isotonic_predict
from ._read import reading
from ._words import MIN_N

FOLDS = 5
MIN_ITEMS = MIN_N       # the one "too few to say" rule: fewer items leave a system's interval unsaid
Z = 1.959963984540054   # the normal 97.5% point
CELL = ["judge", "format", "decoding"]
TARGETS = ("accept", "prefer")
CARRY = pl.List(pl.Struct({"system": pl.String, "n": pl.Int64, "residual": pl.Float64, "lo": pl.Float64,
                           "hi": pl.Float64, "flagged": pl.Boolean}))
HUMAN_SCALE_SCHEMA = {"judge": pl.String, "format": pl.String, "decoding": pl.String, "target": pl.String,
                      "n": pl.Int64, "n_prompts": pl.Int64, "map_score": pl.List(pl.Float64),
                      "map_p": pl.List(pl.Float64), "brier_raw": pl.Float64, "brier_mapped": pl.Float64,
                      "carry_over": CARRY, "n_flagged": pl.Int64}


def prompt_folds(prompt: np.ndarray, rng: np.random.Generator, folds: int = FOLDS) -> np.ndarray | None:
    """Each item's fold: its prompt's place in a seeded shuffle of the distinct prompts, modulo
    min(folds, prompts). None with fewer than two prompts."""
    prompts, which = np.unique(np.asarray(prompt), return_inverse=True)
    if prompts.size < 2:
        return None
    k = min(folds, prompts.size)
    return (np.argsort(rng.permutation(prompts.size)) % k)[which]


def cross_fit(x: np.ndarray, y: np.ndarray, fold: np.ndarray, mirror: bool = False) -> np.ndarray:
    """Each item's value of the isotonic map fitted on the other folds' items (with `mirror`, each
    training item also enters as (1 − x, 1 − y))."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    out = np.empty(x.size)
    for f in np.unique(fold):
        test = fold == f
        out[test] = isotonic_predict(fit_map(x[~test], y[~test], mirror), x[test])
    return out


def fit_map(x: np.ndarray, y: np.ndarray, mirror: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The isotonic map (its distinct x, the fitted value at each) of the items (and their mirror)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if mirror:
        x, y = np.concatenate([x, 1.0 - x]), np.concatenate([y, 1.0 - y])
    return isotonic_fit(x, y)


def carry_over(system: np.ndarray, residual: np.ndarray) -> list[dict]:
    """Per system (sorted): n items, their mean residual, its normal 95% interval (ddof 1) from
    MIN_ITEMS items on, and whether that interval excludes 0."""
    system, residual = np.asarray(system, dtype=object), np.asarray(residual, dtype=float)
    rows = []
    for s in sorted(set(system.tolist())):
        r = residual[system == s]
        mean = float(r.mean())
        lo = hi = None
        if r.size >= MIN_ITEMS:
            half = Z * float(r.std(ddof=1)) / np.sqrt(r.size)
            lo, hi = mean - half, mean + half
        rows.append({"system": s, "n": int(r.size), "residual": mean, "lo": lo, "hi": hi,
                     "flagged": None if lo is None else bool(lo > 0 or hi < 0)})
    return rows


def cell_map(x: np.ndarray, y: np.ndarray, prompt: np.ndarray, rng: np.random.Generator,
             mirror: bool = False) -> dict:
    """One cell's map: map_score, map_p (fitted on every item), n, n_prompts, mapped (each item's
    cross-fitted value, None with one prompt), brier_raw and brier_mapped (of x and of mapped against y)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    score, p = fit_map(x, y, mirror)
    fold = prompt_folds(prompt, rng)
    mapped = None if fold is None else cross_fit(x, y, fold, mirror)
    return {"n": int(x.size), "n_prompts": int(np.unique(prompt).size), "map_score": score.tolist(),
            "map_p": p.tolist(), "mapped": mapped, "brier_raw": float(np.mean((x - y) ** 2)),
            "brier_mapped": None if mapped is None else float(np.mean((mapped - y) ** 2))}


def human_scale_frames(accept: pl.DataFrame, prefer: pl.DataFrame, seed: int = 0) -> pl.DataFrame:
    """Pure: one row per (cell, target) with labelled items (the module's doc), from the items of each
    target: accept (judge, format, decoding, prompt_idx, cand_idx, system, x, y) and prefer (judge,
    format, decoding, prompt_idx, lo_idx, hi_idx, lo_system, hi_system, x, y), each sorted by cell and
    prompt. Columns: HUMAN_SCALE_SCHEMA's."""
    rows = []
    for target, items in (("accept", accept), ("prefer", prefer)):
        for (judge, fmt, dec), g in items.group_by(CELL, maintain_order=True):
            rng = cell_rng(seed, judge, fmt, dec, "human scale", target)
            x, y = g["x"].to_numpy(), g["y"].to_numpy()
            out = cell_map(x, y, g["prompt_idx"].to_numpy(), rng, mirror=target == "prefer")
            mapped = out.pop("mapped")
            carry = []
            if mapped is not None:
                r = y - mapped
                if target == "accept":
                    carry = carry_over(g["system"].to_numpy(), r)
                else:       # each pair speaks for both its systems, turned to each one's side
                    carry = carry_over(np.concatenate([g["lo_system"].to_numpy(), g["hi_system"].to_numpy()]),
                                       np.concatenate([r, -r]))
            rows.append({"judge": judge, "format": fmt, "decoding": dec, "target": target, **out,
                         "carry_over": carry, "n_flagged": sum(bool(c["flagged"]) for c in carry)})
    rows.sort(key=lambda r: (r["judge"], r["format"], r["decoding"], r["target"]))
    return pl.DataFrame(rows, schema=HUMAN_SCALE_SCHEMA)


ACCEPT_ITEMS = {"judge": pl.String, "format": pl.String, "decoding": pl.String, "prompt_idx": pl.Int64,
                "cand_idx": pl.Int64, "system": pl.String, "x": pl.Float64, "y": pl.Float64}
PREFER_ITEMS = {"judge": pl.String, "format": pl.String, "decoding": pl.String, "prompt_idx": pl.Int64,
                "lo_idx": pl.Int64, "hi_idx": pl.Int64, "lo_system": pl.String, "hi_system": pl.String,
                "x": pl.Float64, "y": pl.Float64}


def human_scale(db: str | os.PathLike | None, pool: str, seed: int = 0) -> pl.DataFrame:
    """The pool's scores on the human scale, one row per (judge, format, decoding, target) with
    labelled items (docs/metrics.md#scores-on-the-human-scale). Columns: judge, format, decoding,
    target (accept | prefer), n (labelled items), n_prompts, map_score and map_p (the isotonic map's
    points, fitted on every item), brier_raw (of the score itself against the human value),
    brier_mapped (of the cross-fitted map's; null with one prompt), carry_over (per system: system,
    n, residual, lo, hi, flagged), n_flagged.

    DuckDB builds the items (human_scale_accept_items.sql, human_scale_prefer_items.sql), reading only
    the labelled candidates' and pairs' verdicts: a kind of label the pool lacks reads none."""
    with reading(db) as read:
        pid = read.pool_id(pool)
        held = read.frame("label_counts", pool_id=pid).row(0, named=True)
        accept = read.frame("human_scale_accept_items", pool_id=pid) if held["accepts"] else None
        prefer = read.frame("human_scale_prefer_items", pool_id=pid) if held["pairs"] else None
    accept = pl.DataFrame(schema=ACCEPT_ITEMS) if accept is None else accept.cast(ACCEPT_ITEMS)
    prefer = pl.DataFrame(schema=PREFER_ITEMS) if prefer is None else prefer.cast(PREFER_ITEMS)
    return human_scale_frames(accept, prefer, seed)


def calibrated_values(scale: pl.DataFrame, judge: str, fmt: str, decoding: str | None,
                      values: pl.DataFrame) -> pl.DataFrame | None:
    """values (.., value = a normalised score) with value replaced by P(a human accepts) under the
    cell's accept map; None when the cell has no accept map."""
    one = scale.filter((pl.col("judge") == judge) & (pl.col("format") == fmt) & (pl.col("target") == "accept")
                       & (pl.col("decoding") == decoding))
    if one.height == 0:
        return None
    row = one.row(0, named=True)
    fit = (np.asarray(row["map_score"], dtype=float), np.asarray(row["map_p"], dtype=float))
    return values.with_columns(pl.Series("value", isotonic_predict(fit, values["value"].to_numpy()), pl.Float64))


def human_items(db: str | os.PathLike | None, pool: str, kind: str) -> pl.DataFrame:
    """The pool's human-labelled items of one kind, each with its human value (the mean over its
    annotators). kind 'pointwise' (accept labels): prompt_idx, a_idx (the candidate), b_idx (null),
    y (accept 1, reject 0); 'comparative' (pair labels): prompt_idx, a_idx < b_idx, y (1 / ½ / 0 in
    favour of a_idx). Sorted by prompt_idx, a_idx, b_idx."""
    with reading(db) as read:
        pid = read.pool_id(pool)
        if kind == "pointwise":
            votes = read.frame("human_accept_votes", pool_id=pid)
            out = votes.group_by("prompt_idx", "cand_idx").agg(pl.col("y").mean()) \
                .select("prompt_idx", pl.col("cand_idx").alias("a_idx"), pl.lit(None, pl.Int64).alias("b_idx"), "y")
        else:
            votes = read.frame("human_pair_votes", pool_id=pid)
            out = votes.group_by("prompt_idx", "lo_idx", "hi_idx").agg(pl.col("y").mean()) \
                .select("prompt_idx", pl.col("lo_idx").alias("a_idx"), pl.col("hi_idx").alias("b_idx"), "y")
    return out.cast({"prompt_idx": pl.Int64, "a_idx": pl.Int64, "b_idx": pl.Int64, "y": pl.Float64}) \
        .sort("prompt_idx", "a_idx", "b_idx")
