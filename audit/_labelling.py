"""Label queues read from the store (docs/command-line.md#judgeaudit-label-queue and the Label page): the
frame a new queue draws from, the draw itself (audit/_label_queue.py), and a queue as the Label page
shows it.

The frame is the cell's judged items the annotator has neither labelled nor has pending in another
of their queues: for `--kind accept` the candidates a pointwise cell scored (f = the normalised
score); for `--kind pair` the pairs a comparative cell judged (f = its preference for the pair's
lower cand_idx, audit/_worth.py), or, for a pointwise cell, every pair of two candidates of one
prompt that it scored (f = 1 / ½ / 0 as the first's score is above / equal to / below the
second's). Without a cell, every candidate or every pair of a prompt's candidates, uniformly.
An active queue follows the residuals of the annotator's own labels in the cell.
"""

from __future__ import annotations

import os

import numpy as np
import polars as pl

from ._read import AuditError, reading
from ._label_queue import inclusion, systematic_draw
from ._worth import read_estimate_inputs

KINDS = ("pair", "accept")
STRATEGIES = ("random", "active")
ITEM_COLUMNS = ["prompt_idx", "a_idx", "b_idx", "cand_idx", "pi", "prompt_id", "a_id", "b_id", "candidate_id"]


def _all_pairs(cands: pl.DataFrame) -> pl.DataFrame:
    c = cands.select("prompt_idx", "cand_idx")
    return c.join(c, on="prompt_idx", suffix="_2").filter(pl.col("cand_idx") < pl.col("cand_idx_2")) \
        .select("prompt_idx", pl.col("cand_idx").alias("lo_idx"), pl.col("cand_idx_2").alias("hi_idx"))


def queue_frame(d: dict, kind: str, cell: tuple | None) -> pl.DataFrame:
    """The items a queue may draw (before leaving out the annotator's): for a pair, prompt_idx,
    lo_idx, hi_idx, f; for a candidate, prompt_idx, cand_idx, f (f null without a cell)."""
    cands = d["cands"]
    if cell is None:
        if kind == "accept":
            return cands.select("prompt_idx", "cand_idx", pl.lit(None, pl.Float64).alias("f"))
        return _all_pairs(cands).with_columns(pl.lit(None, pl.Float64).alias("f"))
    judge, fmt, dec = cell
    sel = (pl.col("judge") == judge) & (pl.col("format") == fmt) & (pl.col("decoding") == dec)
    points, pairs = d["points"].filter(sel), d["pairs"].filter(sel)
    if points.height == 0 and pairs.height == 0:
        raise AuditError(f"no parsed verdicts of judge '{judge}', format '{fmt}', decoding '{dec}' in this pool")
    if kind == "accept":
        if points.height == 0:
            raise AuditError(f"format '{fmt}' is comparative: an accept queue needs a pointwise cell (or none)")
        return points.join(cands.select("cand_idx", "prompt_idx"), on="cand_idx").select("prompt_idx", "cand_idx", "f")
    if pairs.height:
        return pairs.select("prompt_idx", "lo_idx", "hi_idx", "f")
    s = points.select("cand_idx", pl.col("f").round(12))
    return _all_pairs(cands).join(s.rename({"cand_idx": "lo_idx", "f": "f_lo"}), on="lo_idx") \
        .join(s.rename({"cand_idx": "hi_idx", "f": "f_hi"}), on="hi_idx") \
        .with_columns(pl.when(pl.col("f_lo") > pl.col("f_hi")).then(1.0)
                      .when(pl.col("f_lo") < pl.col("f_hi")).then(0.0).otherwise(0.5).alias("f")) \
        .select("prompt_idx", "lo_idx", "hi_idx", "f").sort("prompt_idx", "lo_idx", "hi_idx")


def annotator_labels(d: dict, kind: str, annotator: str) -> pl.DataFrame:
    """The annotator's labels: key columns (lo_idx, hi_idx | cand_idx) and y (toward lo_idx for a pair)."""
    if kind == "accept":
        return d["accept_votes"].filter(pl.col("annotator") == annotator).select("cand_idx", "y")
    return d["pair_votes"].filter(pl.col("annotator") == annotator).select("lo_idx", "hi_idx", "y")


def plan_queue(d: dict, n: int, kind: str, strategy: str, cell: tuple | None, annotator: str,
               seed: int) -> tuple[pl.DataFrame, int, bool]:
    """(items in the order shown: ITEM_COLUMNS; the frame's size; whether pi followed the residuals)."""
    if kind not in KINDS or strategy not in STRATEGIES:
        raise AuditError(f"--kind {kind} --strategy {strategy}: use pair|accept and random|active")
    if strategy == "active" and cell is None:
        raise AuditError("--strategy active needs the cell whose errors it follows: --judge, --format (and --decoding)")
    if n < 1:
        raise AuditError(f"--n {n}: ask for at least one item")
    key = ["cand_idx"] if kind == "accept" else ["lo_idx", "hi_idx"]
    frame = queue_frame(d, kind, cell)
    mine = annotator_labels(d, kind, annotator)
    queued = d["queued"].filter(pl.col("kind") == kind).select(key)
    frame = frame.join(mine.select(key), on=key, how="anti").join(queued, on=key, how="anti")
    if frame.height == 0:
        raise AuditError(f"annotator '{annotator}' has labelled (or has queued) every {kind} item of this "
                         f"{'cell' if cell else 'pool'}: nothing left to ask")
    lab = mine.join(queue_frame(d, kind, cell).select(*key, "f"), on=key) if cell else mine.head(0)
    f_frame = frame["f"].fill_null(0.5).to_numpy()
    pi, followed = inclusion(f_frame, n, lab["f"].to_numpy() if cell else None,
                             lab["y"].to_numpy() if cell else None, strategy)
    take = systematic_draw(pi, np.random.default_rng(seed))
    chosen = frame[take].with_columns(pl.Series("pi", pi[take]))
    sys_of = dict(zip(d["cands"]["cand_idx"], d["cands"]["candidate_id"]))
    pid_of = dict(zip(d["cands"]["prompt_idx"], d["cands"]["prompt_id"]))
    if kind == "accept":
        items = chosen.select("prompt_idx", pl.lit(None, pl.Int64).alias("a_idx"), pl.lit(None, pl.Int64).alias("b_idx"),
                              "cand_idx", "pi")
    else:
        items = chosen.select("prompt_idx", pl.col("lo_idx").alias("a_idx"), pl.col("hi_idx").alias("b_idx"),
                              pl.lit(None, pl.Int64).alias("cand_idx"), "pi")
    items = items.with_columns(
        pl.col("prompt_idx").replace_strict(pid_of, return_dtype=pl.String).alias("prompt_id"),
        pl.col("a_idx").replace_strict(sys_of, default=None, return_dtype=pl.String).alias("a_id"),
        pl.col("b_idx").replace_strict(sys_of, default=None, return_dtype=pl.String).alias("b_id"),
        pl.col("cand_idx").replace_strict(sys_of, default=None, return_dtype=pl.String).alias("candidate_id"))
    return items.select(ITEM_COLUMNS), frame.height, followed


def draw_label_queue(db: str | os.PathLike | None, pool: str, n: int, kind: str = "pair",
                     strategy: str = "random", judge: str | None = None, format: str | None = None,
                     decoding: str | None = None, annotator: str = "me", seed: int = 0) -> dict:
    """A queue drawn for `annotator` (nothing stored; the store's save_label_queue keeps it):
    {items: a frame of ITEM_COLUMNS in the order shown, pi = each item's inclusion probability;
    n_frame: the items it chose among; active: whether pi followed the residuals; decoding: the
    cell's decoding (resolved when not given)}."""
    d = read_estimate_inputs(db, pool)
    with reading(db) as read:
        d["queued"] = read.frame("annotator_queued", pool_id=read.pool_id(pool), annotator=annotator)
    cell = None
    if judge is not None or format is not None:
        if judge is None or format is None:
            raise AuditError("a cell needs both --judge and --format")
        if decoding is None:
            decs = sorted(set(d["points"].filter((pl.col("judge") == judge) & (pl.col("format") == format))["decoding"])
                          | set(d["pairs"].filter((pl.col("judge") == judge) & (pl.col("format") == format))["decoding"]))
            decoding = "greedy" if "greedy" in decs or not decs else decs[0]
        cell = (judge, format, decoding)
    items, n_frame, followed = plan_queue(d, n, kind, strategy, cell, annotator, seed)
    return {"items": items, "n_frame": n_frame, "active": followed, "decoding": decoding}
