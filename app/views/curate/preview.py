"""The Curate & Train page's preview of one curation: its counts, the selecting values around the
cut, response lengths kept and dropped, examples at the cut, and the overlap between formats."""

from __future__ import annotations

import polars as pl
import streamlit as st

from app import data
from app.tables import view as table_view
from app.views.curate import form as tf


def curation_preview(pool: str, cell: pl.DataFrame, policy: str, judge: str | None, fmt: str | None,
                     decoding: str | None, rate: float, seed: int) -> None:
    """The curation (data.curation) drawn: cell = the candidate scores of the chosen judge (all scores
    without one), for the overlap between its formats."""
    picks, s = data.curation(pool, policy, judge, fmt, decoding, rate, seed)
    m = st.columns(4)
    m[0].metric("Eligible prompts", s["n_eligible"], help=f"{s['n_heldout_prompts']} held-out prompts never selected")
    m[1].metric("Selected", s["n_selected"])
    m[2].metric("Tie-broken picks", f"{s['n_tie_broken'] / max(s['n_selected'], 1):.0%}",
                help=f"{s['n_pick_tied']} within a prompt, {s['n_cut_tied']} at the cut: coin flips, not quality")
    m[3].metric("Cut", "n/a" if s["cut_value"] is None else f"{s['cut_value']:.3g}")
    left, right = st.columns(2)
    left.altair_chart(tf.cut_histogram(picks, s["cut_value"], "selecting value (score, length or reference)"),
                      width="stretch")
    chars = data.pool_candidates(pool).select(pl.int_range(pl.len()).alias("cand_idx"),
                                              pl.col("response_chars").alias("chars"))
    right.altair_chart(tf.length_chart(picks.join(chars, on="cand_idx").select(
        pl.when("kept").then(pl.lit("kept")).otherwise(pl.lit("dropped")).alias("set"), "chars")), width="stretch")
    with st.expander("Kept and dropped examples at the cut, side by side"):
        for col, part in zip(st.columns(2), (picks.filter("kept").tail(3), picks.filter(~pl.col("kept")).head(3))):
            col.dataframe(**table_view(data.candidate_texts(pool, part["cand_idx"].to_list()).select(
                "prompt_id", "prompt", "response").with_columns(part["value"].alias("value"))), hide_index=True)
    if policy == "judge" and cell["format"].n_unique() > 1:
        fmts = sorted(cell["format"].unique().to_list())
        st.caption("Overlap of the selected examples between formats (Jaccard), at each rate")
        st.dataframe(**table_view(data.curation_overlap(pool, judge, fmts, decoding, [0.1, 0.25, 0.5], seed)),
                     hide_index=True)
