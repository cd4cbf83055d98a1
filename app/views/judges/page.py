"""Judges: the leaderboard of the pool's judges and juries (one row per judge × format × decoding),
and agreement with humans against cost per 1,000 verdicts with the Pareto front marked."""

import streamlit as st

from app import data
from app import tables
from app.views.judges import decision
from app.views.judges.board import board_table, front_chart, front_reasons, jury_size_lines

pool = data.page_pool("Judges")
board = data.judges_board(pool)
if board.height == 0:
    st.info("No verdicts in this pool yet: score it on the Score page, or import verdicts.")
    st.stop()
juries = data.juries(pool)
a, b, c = st.columns(3)
a.metric("cells", board.height, help="judge × format × decoding, juries included")
b.metric("juries", juries.height, help="define one on the Score page, or with `judgeaudit jury`")
c.metric("on the front", int(board["on_front"].sum()),
         help="no other cell agrees with humans at least as often for no more money")

st.subheader("Agreement with humans against cost")
chart = front_chart(board)
if chart is not None:
    st.altair_chart(chart, width="stretch")
    st.caption("Each point a cell; the dashed line joins the Pareto front: cells no other beats on both "
               "agreement and cost per 1,000 verdicts.")
for line in front_reasons(board):
    st.caption("– off the chart: " + line)

st.subheader("Leaderboard")
st.dataframe(**tables.view(board_table(board)), hide_index=True, width="stretch")
st.caption("agreement, kappa (95% bootstrap interval over pairs) and ECE as on the Calibration page; b as on "
           "Slot bias; length excess (judge − humans, standardised length coefficient) and flip rate as on "
           "Rankings and Formats; cost from the stored token counts and the prices per million tokens in "
           "judgeaudit.toml ([prices.JUDGE] input, output); a jury pays for its members' calls and waits for "
           "its slowest. \"–\": missing, the reason in the last column.")
if juries.height:
    st.caption("Juries: " + "; ".join(f"**{r['judge']}** = {r['vote']} of {', '.join(r['members'])}"
                                      for r in juries.to_dicts()))
    for line in jury_size_lines(data.result("jury_sizes", pool)):
        st.caption("– " + line)

decision.show(pool)      # per cell: worth in labels, the alternative annotator test at ε, the price of ±H
