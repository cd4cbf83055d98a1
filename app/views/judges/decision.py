"""The Judges page's decision in words: per cell, what its verdicts are worth in human labels, whether
it passes the alternative annotator test at ε and what ±H would cost (audit.decisions, each number with
its n; "too few labels to say" where that is the truth). ±H (0.05) and ε (0.2) are the page's fields,
kept in the address. Frames in, lines out."""

from __future__ import annotations

import polars as pl
import streamlit as st

from app import data, url_state


def lines(found: pl.DataFrame) -> list[str]:
    return [f"**{r['judge']} / {r['format']} / {r['decoding']}**: {r['decision']}" for r in found.to_dicts()]


def show(pool: str) -> None:
    st.subheader("The decision, per cell")
    left, right = st.columns(2)
    h = left.number_input("±H, the half-width to price", 0.005, 0.5, data.HALF_WIDTH, 0.005, format="%.3f",
                          key=url_state.DECISION_H, bind="query-params",
                          help="The labels still needed, and their price, for an interval of ±H (`judgeaudit plan`)")
    eps = right.number_input("ε, the judge's advantage for its lower cost", 0.0, 0.5, data.EPSILON, 0.05,
                             format="%.2f", key=url_state.DECISION_EPSILON, bind="query-params",
                             help="The alternative annotator test's ε (`judgeaudit alt-test --epsilon`)")
    h, eps = round(h, 4), round(eps, 4)      # a step of 0.005 leaves float noise in the last bits
    found = data.decisions(pool, h, eps)
    if found.height == 0:
        return
    st.caption("May the judge stand in for the annotators, and what would it cost to be sure? The verdicts' "
               f"worth in labels as What labels are worth computes it, the alternative annotator test (`judgeaudit "
               f"alt-test`, ε = {eps:g}) and the labels still needed for ±{h:g} by the cheapest plan (`judgeaudit "
               "plan`, a label priced by `[prices] human_label` in judgeaudit.toml).")
    for line in lines(found):
        st.markdown("- " + line)
