"""The Slot bias page's q_i against the reference gap, binned per cell."""

from __future__ import annotations

import polars as pl

from app.reading import binned_means


def bias_bins(items: pl.DataFrame, n_bins: int = 6) -> pl.DataFrame:
    """q_i against the reference gap of audit.bias_items' frame, binned per cell (judge / format
    [/ decoding]): cell, ref_gap, q_i (mean), lo, hi, n (app.reading.binned_means)."""
    items = items.drop_nulls("ref_gap")
    caption = pl.col("judge") + " / " + pl.col("format")
    if items.height and items["decoding"].n_unique() > 1:
        caption = caption + " / " + pl.col("decoding")
    return binned_means(items.with_columns(caption.alias("cell")), "ref_gap", "q_i", "cell", n_bins)
