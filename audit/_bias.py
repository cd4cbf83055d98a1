"""Slot (position) bias of comparative formats, from items seen in both orders
(docs/metrics.md#slot-bias-bias)."""

from __future__ import annotations

import hashlib
import os

import numpy as np
import polars as pl

from . import _metrics as m
from ._read import reading

BIAS_COLUMNS = ["judge", "format", "decoding", "pairing", "n_calls", "n_reverse_calls", "n_pairs", "q",
                "q_lo", "q_hi", "b", "b_lo", "b_hi", "consistency", "self_tie_rate", "n_self",
                "q_gap_corr"]


def cell_rng(seed: int, *identity: str) -> np.random.Generator:
    """The bootstrap generator of one cell, seeded by the user's seed and the cell's identity
    (judge, format, decoding), so adding or removing another cell changes no cell's interval."""
    digest = hashlib.sha256("\x1f".join(identity).encode("utf-8")).digest()
    return np.random.default_rng([seed, *np.frombuffer(digest[:16], dtype=np.uint32).tolist()])


def item_bias(v_fwd: np.ndarray, v_rev: np.ndarray, n_boot: int, rng: np.random.Generator) -> dict:
    """q_i = (v_fwd - v_rev) / 2 (quality), b_i = (v_fwd + v_rev) / 2 (slot A bias); their means
    with 95% percentile-bootstrap intervals over items, and both-order consistency:
    sign(v_fwd) = -sign(v_rev) (a tie in both orders is consistent, in one order only is not)."""
    q = (v_fwd - v_rev) / 2.0
    b = (v_fwd + v_rev) / 2.0
    out = {"n_pairs": int(q.size), "q": float(q.mean()), "b": float(b.mean()),
           "consistency": float(np.mean(np.sign(v_fwd) == -np.sign(v_rev)))}
    boots = m.bootstrap_means(np.column_stack((q, b)), n_boot, rng)
    (q_lo, b_lo), (q_hi, b_hi) = np.percentile(boots, [2.5, 97.5], axis=0)
    out.update(q_lo=float(q_lo), q_hi=float(q_hi), b_lo=float(b_lo), b_hi=float(b_hi))
    return out


def bias_items(db: str | os.PathLike | None, pool: str) -> pl.DataFrame:
    """One row per item seen in both orders: judge, format, decoding, prompt_idx, x, y (x = the
    anchored candidate or the earlier-listed one), v_fwd, v_rev, q_i, b_i, ref_gap (r_x - r_y)."""
    with reading(db) as read:
        items = read.frame("bias_items", pool_id=read.pool_id(pool))
    return items.with_columns(((pl.col("v_fwd") - pl.col("v_rev")) / 2).alias("q_i"),
                              ((pl.col("v_fwd") + pl.col("v_rev")) / 2).alias("b_i"))


def bias(db: str | os.PathLike | None, pool: str, seed: int = 0, n_boot: int = 2000) -> pl.DataFrame:
    """One row per (judge, comparative format, decoding) cell of the pool.

    Columns: judge, format, decoding (greedy | constrained), pairing, n_calls, n_reverse_calls,
    n_pairs (items with a parsed verdict in both orders), q, q_lo, q_hi, b, b_lo, b_hi (means and
    seeded 95% percentile-bootstrap intervals, the seed derived from the cell's identity), consistency,
    self_tie_rate (TIE share among parsed self-comparison calls), n_self (self-comparison calls),
    q_gap_corr (Pearson correlation of q_i with the reference gap r_x - r_y). Nulls where undefined.
    """
    with reading(db) as read:
        pid = read.pool_id(pool)
        cells = read.frame("comparative_cells", pool_id=pid)
        items = read.frame("bias_items", pool_id=pid)
    rows = []
    for cell in cells.iter_rows(named=True):
        row = {k: cell[k] for k in ("judge", "format", "decoding", "pairing", "n_calls", "n_reverse_calls")}
        row["n_self"] = cell["n_self"]
        parsed = cell["n_self_parsed"]
        row["self_tie_rate"] = cell["n_self_tie"] / parsed if parsed else None
        part = items.filter((pl.col("judge") == cell["judge"]) & (pl.col("format") == cell["format"])
                            & (pl.col("decoding") == cell["decoding"]))
        row["n_pairs"] = part.height
        if part.height:
            rng = cell_rng(seed, cell["judge"], cell["format"], cell["decoding"])
            v_fwd, v_rev = part["v_fwd"].to_numpy(), part["v_rev"].to_numpy()
            row.update(item_bias(v_fwd, v_rev, n_boot, rng))
            gap = part["ref_gap"].to_numpy().astype(float)
            ok = ~np.isnan(gap)
            if ok.sum() >= 2:
                row["q_gap_corr"] = m.pearson(((v_fwd - v_rev) / 2)[ok], gap[ok])
        rows.append(row)
    schema = {"judge": pl.String, "format": pl.String, "decoding": pl.String, "pairing": pl.String,
              "n_calls": pl.Int64,
              "n_reverse_calls": pl.Int64, "n_pairs": pl.Int64, "q": pl.Float64,
              "q_lo": pl.Float64, "q_hi": pl.Float64, "b": pl.Float64, "b_lo": pl.Float64,
              "b_hi": pl.Float64, "consistency": pl.Float64, "self_tie_rate": pl.Float64,
              "n_self": pl.Int64, "q_gap_corr": pl.Float64}
    return pl.DataFrame(rows, schema=schema).select(BIAS_COLUMNS) \
        .with_columns(pl.selectors.float().fill_nan(None))
