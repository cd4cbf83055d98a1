"""The anchor of a prompt (docs/glossary.md#what-is-judged): the candidate at index floor(k/2) after
sorting the prompt's k candidates by reference, ascending, ties by listing order."""

from __future__ import annotations

import numpy as np
import polars as pl


def reference_anchors(candidates: pl.DataFrame) -> pl.DataFrame:
    """(prompt_idx, anchor_idx) for every prompt whose candidates all carry a reference.

    `candidates` needs prompt_idx, cand_idx, position, reference.
    """
    ranked = candidates.sort("prompt_idx", "reference", "position").with_columns(
        pl.int_range(pl.len()).over("prompt_idx").alias("_rank"),
        pl.len().over("prompt_idx").alias("_k"),
        pl.col("reference").is_not_null().all().over("prompt_idx").alias("_complete"))
    return ranked.filter(pl.col("_complete") & (pl.col("_rank") == pl.col("_k") // 2)) \
        .select("prompt_idx", pl.col("cand_idx").alias("anchor_idx"))


def seeded_anchors(candidates: pl.DataFrame, prompt_idx: list[int] | np.ndarray, seed: int) -> pl.DataFrame:
    """(prompt_idx, anchor_idx): a seeded uniform choice for prompts without usable references."""
    rng = np.random.default_rng(seed)
    sub = candidates.filter(pl.col("prompt_idx").is_in(list(prompt_idx))).sort("prompt_idx", "position")
    keys = rng.random(sub.height)
    return sub.with_columns(pl.Series("_key", keys)) \
        .sort("prompt_idx", "_key").group_by("prompt_idx", maintain_order=True).first() \
        .select("prompt_idx", pl.col("cand_idx").alias("anchor_idx"))
