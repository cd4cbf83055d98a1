"""The Judges page's decision in words: per cell, what its verdicts are worth in human labels, whether
it passes the alternative annotator test and what ±0.05 would cost (audit.decisions, each number with
its n; "too few labels to say" where that is the truth). Frames in, lines out."""

from __future__ import annotations

import polars as pl
import streamlit as st

from app import data


def lines(found: pl.DataFrame) -> list[str]:
    return [f"**{r['judge']} / {r['format']} / {r['decoding']}**: {r['decision']}" for r in found.to_dicts()]


def show(pool: str) -> None:
    found = data.decisions(pool)
    if found.height == 0:
        return
    st.subheader("The decision, per cell")
    st.caption("May the judge stand in for the annotators, and what would it cost to be sure? The verdicts' "
               "worth in labels as What labels are worth computes it, the alternative annotator test (`judgeaudit "
               "alt-test`, ε = 0.2) and the labels still needed for ±0.05 by the cheapest plan (`judgeaudit plan`, "
               "a label priced by `[prices] human_label` in judgeaudit.toml).")
    for line in lines(found):
        st.markdown("- " + line)
