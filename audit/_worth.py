"""What a judge's verdicts are worth in human labels
(docs/metrics.md#what-human-labels-are-worth-estimate): per cell, the classical interval from the human
labels alone beside the PPI++ interval that adds the cell's verdicts.

Items and their values:
- `accept`: an item is a candidate; θ = the share of the pool's candidates a human accepts; Y = the
  mean over its annotators of accept 1 / reject 0; f = the cell's normalised score of the candidate
  (the mean over its parsed samples), pointwise cells only.
- `winrate`: per system s ≠ the baseline (systems are candidate_ids), an item is a prompt both
  answered; θ = P(a human prefers s to the baseline), a tie half; Y = the mean over annotators of
  1 / ½ / 0; f = the cell's preference for s: pointwise 1 / ½ / 0 as s's score (rounded to 12
  decimals) is above / equal to / below the baseline's; comparative, the mean over its parsed calls
  on the pair, in both orders, of 1 / ½ / 0 for a margin favouring s / tying / favouring the baseline.

The estimate is about every item with a prediction (f over all of them is the imputed part: for a
finite pool θ = mean(λf) + mean(Y − λf) over its items, and the labelled items are a sample of them);
the labelled items are those with a prediction and a label. A label that came through a queue carries
its item's inclusion probability and is weighted m / (M·pi) (audit/_estimate.py); an item labelled
from a file, or first labelled from one, counts as drawn uniformly (weight 1).
"""

from __future__ import annotations

import os

import numpy as np
import polars as pl

from ._read import AuditError, reading
from ._estimate import classical_mean, effective_labels, ppi_mean

ESTIMATE_COLUMNS = ["judge", "format", "decoding", "target", "system", "n_labelled", "n_unlabelled",
                    "classical_value", "classical_lo", "classical_hi", "ppi_value", "ppi_lo", "ppi_hi",
                    "ppi_lambda", "effective_labels"]
TARGETS = ("accept", "winrate")
CELL = ["judge", "format", "decoding"]


def human_values(votes: pl.DataFrame, key: list[str]) -> pl.DataFrame:
    """Per item (`key`): y = the mean over its annotators, n_annotators, and w = its weight (the
    design of its first label: m / (frame·pi) through a queue, 1 from a file)."""
    return votes.group_by(key, maintain_order=True).agg(
        pl.col("y").mean(), pl.col("annotator").n_unique().alias("n_annotators"),
        pl.col("pi").first(), pl.col("m").first(), pl.col("frame").first()
    ).with_columns(
        pl.when(pl.col("pi").is_null()).then(1.0)
        .otherwise(pl.col("m").cast(pl.Float64) / (pl.col("frame").cast(pl.Float64) * pl.col("pi"))).alias("w")
    ).drop("pi", "m", "frame")


def share(x: float | None) -> float | None:
    """x clipped to [0, 1], the range of a share (both targets are shares): a normal interval of a
    share near 0 or 1 reaches past it (1.05), which no share can be."""
    return None if x is None else min(1.0, max(0.0, float(x)))


def cell_estimate(f_all: np.ndarray, y: np.ndarray, f_lab: np.ndarray, w: np.ndarray, alpha: float) -> dict:
    """The estimate's numbers for one cell (pure): items' predictions f_all, the labelled items' y,
    f_lab and weights w. Values and interval ends are clipped to [0, 1] (`share`); effective_labels
    compares the half-widths before clipping (how much narrower the judge makes the interval), and
    classical_half_width (no column) is the classical one before clipping, for the stratified estimate's."""
    n = int(y.size)
    c = classical_mean(y, alpha, w=None if np.all(w == 1) else w)
    p = ppi_mean(y, f_lab, f_all, alpha, w=None if np.all(w == 1) else w) if n else ppi_mean([], [], [])
    return {"n_labelled": n, "n_unlabelled": int(f_all.size - n),
            "classical_value": share(c["value"]), "classical_lo": share(c["lo"]), "classical_hi": share(c["hi"]),
            "ppi_value": share(p["value"]), "ppi_lo": share(p["lo"]), "ppi_hi": share(p["hi"]),
            "ppi_lambda": p["lambda"], "effective_labels": effective_labels(n, c["half_width"], p["half_width"]),
            "classical_half_width": c["half_width"]}


def _rows(items: pl.DataFrame, alpha: float, extra: dict) -> list[dict]:
    """items: judge, format, decoding, f, y (null unlabelled), w -> one row per cell."""
    out = []
    for (judge, fmt, dec), g in items.group_by(CELL, maintain_order=True):
        lab = g.filter(pl.col("y").is_not_null())
        est = cell_estimate(g["f"].to_numpy(), lab["y"].to_numpy(), lab["f"].to_numpy(),
                            lab["w"].to_numpy(), alpha)
        out.append({"judge": judge, "format": fmt, "decoding": dec, **extra, **est})
    return out


def accept_items(points: pl.DataFrame, humans: pl.DataFrame) -> pl.DataFrame:
    """judge, format, decoding, cand_idx, f, y, w: every candidate a pointwise cell scored, with its
    human value where it has one."""
    return points.join(humans.select("cand_idx", "y", "w"), on="cand_idx", how="left")


def winrate_items(cands: pl.DataFrame, points: pl.DataFrame, pairs: pl.DataFrame, humans: pl.DataFrame,
                  baseline: str) -> pl.DataFrame:
    """judge, format, decoding, system, prompt_idx, f, y, w: per cell and system s ≠ baseline, each
    prompt both answered and the cell judged, f the cell's preference for s, y the humans'."""
    base = cands.filter(pl.col("candidate_id") == baseline).select("prompt_idx", pl.col("cand_idx").alias("b_idx"))
    sb = cands.filter(pl.col("candidate_id") != baseline).join(base, on="prompt_idx") \
        .select("prompt_idx", pl.col("candidate_id").alias("system"), pl.col("cand_idx").alias("s_idx"), "b_idx") \
        .with_columns(pl.min_horizontal("s_idx", "b_idx").alias("lo_idx"),
                      pl.max_horizontal("s_idx", "b_idx").alias("hi_idx"))
    score = points.select(*CELL, "cand_idx", pl.col("f").round(12))
    pw = sb.join(score.rename({"cand_idx": "s_idx", "f": "fs"}), on="s_idx") \
        .join(score.rename({"cand_idx": "b_idx", "f": "fb"}), on=[*CELL, "b_idx"]) \
        .with_columns(pl.when(pl.col("fs") > pl.col("fb")).then(1.0).when(pl.col("fs") < pl.col("fb")).then(0.0)
                      .otherwise(0.5).alias("f")).drop("fs", "fb")
    cp = sb.join(pairs.drop("prompt_idx"), on=["lo_idx", "hi_idx"]) \
        .with_columns(pl.when(pl.col("s_idx") == pl.col("lo_idx")).then(pl.col("f")).otherwise(1.0 - pl.col("f")))
    both = pl.concat([pw.select(*CELL, "system", "prompt_idx", "lo_idx", "hi_idx", "s_idx", "f"),
                      cp.select(*CELL, "system", "prompt_idx", "lo_idx", "hi_idx", "s_idx", "f")])
    h = humans.select("lo_idx", "hi_idx", pl.col("y").alias("y_lo"), "w")
    return both.join(h, on=["lo_idx", "hi_idx"], how="left").with_columns(
        pl.when(pl.col("s_idx") == pl.col("lo_idx")).then(pl.col("y_lo")).otherwise(1.0 - pl.col("y_lo")).alias("y")
    ).sort(*CELL, "system", "prompt_idx").drop("y_lo")


def default_baseline(cands: pl.DataFrame, pair_votes: pl.DataFrame) -> str | None:
    """The system in the most human-labelled pairs (ties: by name); without labels, the system that
    answered the most prompts."""
    sys_of = dict(zip(cands["cand_idx"], cands["candidate_id"]))
    counts: dict[str, int] = {}
    for lo, hi in pair_votes.select("lo_idx", "hi_idx").unique().iter_rows():
        for s in {sys_of[lo], sys_of[hi]}:
            counts[s] = counts.get(s, 0) + 1
    if not counts:
        counts = dict(cands.group_by("candidate_id").len().iter_rows())
    return min(counts, key=lambda s: (-counts[s], s)) if counts else None


def read_estimate_inputs(db: str | os.PathLike | None, pool: str) -> dict:
    """The frames an estimate reads: cands (pool_items), points, pairs, pair_votes, accept_votes."""
    with reading(db) as read:
        pid = read.pool_id(pool)
        return {"cands": read.frame("pool_items", pool_id=pid), "points": read.frame("point_predictions", pool_id=pid),
                "pairs": read.frame("pair_predictions", pool_id=pid),
                "pair_votes": read.frame("human_pair_votes", pool_id=pid),
                "accept_votes": read.frame("human_accept_votes", pool_id=pid)}


def estimate(db: str | os.PathLike | None, pool: str, target: str, baseline: str | None = None,
             alpha: float = 0.05) -> pl.DataFrame:
    """One row per cell (and, for `winrate`, per system s ≠ baseline) of the pool: ESTIMATE_COLUMNS.
    judge, format, decoding: the cell; target: 'accept' | 'winrate'; system: s (null for accept);
    n_labelled: items with a prediction and a human label; n_unlabelled: items with a prediction only;
    classical_value/lo/hi: the mean of the human values with a normal interval (population sd);
    ppi_value/lo/hi, ppi_lambda: PPI++ with the tuned λ (ppi-python's `ppi_mean_ci`, lam=None, on
    the same arrays, with every item's prediction as the unlabelled ones'); effective_labels:
    n_labelled × (classical half-width / PPI half-width)²."""
    if target not in TARGETS:
        raise AuditError(f"--target {target}: use accept or winrate")
    if not 0 < alpha < 1:
        raise AuditError(f"--alpha {alpha}: must be between 0 and 1")
    d = read_estimate_inputs(db, pool)
    if target == "accept":
        items = accept_items(d["points"], human_values(d["accept_votes"], ["cand_idx"]))
        rows = _rows(items, alpha, {"target": "accept", "system": None})
    else:
        systems = set(d["cands"]["candidate_id"])
        baseline = baseline if baseline is not None else default_baseline(d["cands"], d["pair_votes"])
        if baseline not in systems:
            raise AuditError(f"--baseline {baseline}: not a system (candidate_id) of pool '{pool}'; "
                             f"its systems: {', '.join(sorted(systems)[:20])}")
        humans = human_values(d["pair_votes"], ["lo_idx", "hi_idx"])
        items = winrate_items(d["cands"], d["points"], d["pairs"], humans, baseline)
        rows = []
        for (system,), g in items.group_by(["system"], maintain_order=True):
            rows += _rows(g, alpha, {"target": "winrate", "system": system, "baseline": baseline})
        rows.sort(key=lambda r: (r["judge"], r["format"], r["decoding"], r["system"]))
    cols = ESTIMATE_COLUMNS + (["baseline"] if target == "winrate" else [])
    schema = {c: pl.Float64 for c in cols} | {c: pl.String for c in ("judge", "format", "decoding", "target",
                                                                      "system", "baseline")} \
        | {"n_labelled": pl.Int64, "n_unlabelled": pl.Int64}
    return pl.DataFrame([{c: r.get(c) for c in cols} for r in rows], schema={c: schema[c] for c in cols})
