"""Curate & Train: what a judge x format would keep at a retention rate, and how much of it is a
coin flip. (Fine-tuning from here comes with the training work.)"""

import altair as alt
import streamlit as st

import train
from app import data

pool = data.page_pool("Curate & Train")
scores = data.candidate_scores(pool)
if scores.height == 0:
    st.info("No scores in this pool yet.")
    st.stop()
a, b, c = st.columns(3)
judge = a.selectbox("Judge", sorted(scores["judge"].unique().to_list()), key="curate_judge")
rate = b.slider("Retention rate", 0.05, 1.0, 0.25, 0.05)
seed = c.number_input("Tie-break seed", 0, 10_000, 0)
cands = data.pool_candidates(pool)
fmts = sorted(scores.filter(scores["judge"] == judge)["format"].unique().to_list())
summary = train.preview(cands, scores, judge, rate, int(seed))
overlap = train.overlap(cands, scores, judge, fmts, [rate], int(seed))
st.caption("Candidates kept at this rate (top scores), and how many of them were kept only by the seeded "
           "tie-break at the cut-off score: those selections are coin flips.")
st.dataframe(summary, hide_index=True, width="stretch")
if overlap.height:
    st.subheader("Overlap of the kept sets between formats (Jaccard)")
    st.altair_chart(alt.Chart(overlap.to_pandas()).mark_rect().encode(
        x=alt.X("format_a:N"), y=alt.Y("format_b:N"), color=alt.Color("jaccard:Q", scale=alt.Scale(domain=[0, 1])),
        tooltip=[alt.Tooltip("format_a:N"), alt.Tooltip("format_b:N"), alt.Tooltip("jaccard:Q")]
    ).properties(height=300), width="stretch")
