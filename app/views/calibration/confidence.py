"""The Calibration page's confidence section: the reliability diagram of the cells whose verdicts
carry a probability (a label distribution, or the share of samples)."""

from __future__ import annotations

import polars as pl
import streamlit as st

from app import charts_trust
from app import tables
from app.reading import MIN_BIN

NO_PROBABILITIES = (
    "No label probabilities in these cells, so no reliability diagram. To get them, score the pairs with "
    "constrained decoding and logprobs (`--decoding constrained`: the label distribution is stored where the "
    "judge returns one, as the bundled `local:smollm2` does), or ask each call several times "
    "(`--samples N --temperature T`): p is then the share of samples preferring a response.")
READING = (
    "Each point: a bin of judgements by the judge's probability that the labelled pair's first response "
    "is better (10 equal-width bins, adjacent ones merged until each holds at least {min_n} judgements, so "
    "no point rests on one or two; the larger, the more judgements), against the share the humans "
    "preferred it; on the dashed diagonal the judge is calibrated. ECE (over the 10 bins, unmerged) and "
    "ECE after isotonic recalibration: fitted on 4 of 5 folds of prompts, scored on the fifth.")


def confidence_section(cells: pl.DataFrame) -> None:
    st.subheader("Confidence")
    probs = cells.filter(pl.col("probability_source").is_not_null())
    if probs.height == 0:
        st.info(NO_PROBABILITIES)
        return
    st.altair_chart(charts_trust.reliability_diagram(probs), width="content")
    st.caption(READING.format(min_n=MIN_BIN))
    tables.show(probs.select("judge", "format", "decoding", "probability_source", "n_prob", "ece", "brier",
                             "ece_isotonic"))
