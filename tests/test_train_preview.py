"""Curation preview (train/curate.py): one summary row per format with its documented columns, and
share_tie_broken = n_tie_broken / n_selected (undefined, null, when nothing is selected)."""

import polars as pl

from tests.test_curate import frames
from train.curate import preview

COLUMNS = ["policy", "judge", "format", "decoding", "score", "rate", "seed", "n_eligible", "n_selected",
           "n_pick_tied", "n_cut_tied", "n_tie_broken", "n_heldout_prompts", "cut_value", "share_tie_broken"]


def test_preview_columns_and_share_of_tie_broken_picks():
    pool, scores = frames({0: [5, 1], 1: [4, 4], 2: [3, 3], 3: [1, 5]})
    pv = preview(pool, scores, "j", 0.5, seed=3, holdout_share=None)
    assert pv.columns == COLUMNS and pv.height == 1
    row = pv.to_dicts()[0]
    assert (row["policy"], row["judge"], row["seed"], row["rate"], row["n_eligible"], row["n_selected"]) == \
        ("judge", "j", 3, 0.5, 4, 2)
    assert row["share_tie_broken"] == row["n_tie_broken"] / 2
    # every prompt held out: nothing to select, no share
    pool, scores = frames({0: [5, 1], 1: [4, 2]}, heldout={0, 1})
    row = preview(pool, scores, "j", 0.5, holdout_share=None).to_dicts()[0]
    assert row["n_selected"] == 0 and row["share_tie_broken"] is None and row["n_heldout_prompts"] == 2
