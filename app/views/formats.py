"""Formats: per-format histograms for one judge, the diagnostics table, levels and ties, τ vs top-1."""

import polars as pl
import streamlit as st

from app import data, charts

pool = data.page_pool("Formats")
cells = data.cells(pool)
if cells.height == 0:
    st.info("No verdicts in this pool yet: score it on the Score page or import verdicts.")
    st.stop()

judges = sorted(cells["judge"].unique().to_list())
judge = st.selectbox("Judge", judges, key="formats_judge")
values = data.score_values(pool).filter(pl.col("judge") == judge)
st.subheader(f"Score histograms — {judge}")
st.caption("One panel per format (normalised score). On 0–100 scales, bars on multiples of 5 are darker.")
st.altair_chart(charts.histograms(values), width="stretch")

st.subheader("Diagnostics across judges × formats")
st.caption("★ marks the best format of each judge per column (fewest ties, most levels, best agreement).")
st.dataframe(charts.mark_best(cells), hide_index=True, width="stretch")

left, right = st.columns(2)
with left:
    st.subheader("Ties and effective levels")
    st.altair_chart(charts.level_bars(cells.filter(pl.col("judge") == judge)), width="stretch")
with right:
    st.subheader("τa vs τb vs top-1")
    st.altair_chart(charts.agreement_bars(cells.filter(pl.col("judge") == judge)), width="stretch")
st.info("Why τb flatters coarse formats: τb divides by the pairs the judge did *not* tie, so a binary "
        "judge that ties most pairs is scored only on the few it separates. τa keeps ties in the "
        "denominator, and top-1 (expected under random tie-breaking) shows what a selection actually "
        "gets when the top of a prompt is tied.")
