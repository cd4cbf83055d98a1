"""The Formats page's repeats section: what asking each call N times does (sample 0 against the
mean of the samples, app/views/formats/repeats.py) and how consistent the samples are (flip rate
and Krippendorff's α, audit.consistency through app/data.py)."""

from __future__ import annotations

import polars as pl
import streamlit as st

from app import data
from app.tables import view as table_view    # the one table helper
from app.views.formats.repeats import (CONSISTENCY_HELP, consistency_sentence, repeat_consistency, repeat_effect,
                                       repeats_sentence)


def show(pool: str, judge: str, every: pl.DataFrame) -> None:
    effect = repeat_effect(every.filter(pl.col("judge") == judge))   # cells whose calls were asked N times
    if not effect.height:
        return
    st.subheader("Does repeating break the coin flips?")
    st.markdown(repeats_sentence(effect) or "")
    st.caption("Each metric for one sample (sample 0) beside the mean of the samples (each call scored by "
               "the mean of its parsed samples).")
    st.dataframe(**table_view(effect), hide_index=True, width="stretch")
    cons = data.result("consistency", pool)
    sentence = consistency_sentence(cons, judge)
    if sentence:
        st.subheader("Are the samples consistent?")
        with st.container(key="formats_consistency"):
            st.markdown(sentence)
        table = repeat_consistency(cons, judge)
        shown = table_view(table)      # "–" for a missing α, numbers as the other tables write them
        shown["column_config"].update({c: st.column_config.Column(c, help=h) for c, h in CONSISTENCY_HELP.items()
                                       if c in table.columns})
        st.dataframe(**shown, hide_index=True, width="stretch")
