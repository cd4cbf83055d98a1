"""What labels are worth: per cell, the interval from human labels alone beside the prediction-powered
(PPI++) one that adds the judge's verdicts, and what those verdicts are worth in human labels
(docs/metrics.md#what-human-labels-are-worth-estimate). On a pool with human votes on pairs (the demo's
mtbench), each system's win rate against a baseline, with and without the judges."""

import polars as pl
import streamlit as st

from app import data
from app import tables
from app.views.trust.worth import best_per_format, headline, interval_chart, interval_rows, unvalued

pool = data.page_pool("What labels are worth")
a, b, c = st.columns([2, 2, 1])
target = a.radio("Estimate", ["winrate", "accept"], horizontal=True,
                 format_func={"winrate": "win rate against a baseline (pair labels)",
                              "accept": "share of responses a human accepts (accept labels)"}.get)
systems = data.systems(pool) if target == "winrate" else []
baseline = b.selectbox("Baseline", [None] + systems, format_func=lambda s: "the most labelled system" if s is None else s,
                       disabled=target != "winrate")
alpha = c.number_input("alpha", 0.01, 0.5, 0.05, 0.01, help="the intervals cover 1 - alpha")
cells = data.result("estimate", pool, target, baseline, alpha)
labelled = cells.filter(pl.col("n_labelled") > 0)
if labelled.height == 0:
    st.info("No human label on an item the judges scored: label some on the Label page, or import a labels "
            "file on the Calibration page (`judgeaudit import-labels`).")
    st.stop()
if target == "winrate":
    st.caption(f"θ = P(a human prefers the system to **{cells['baseline'][0]}** on a prompt both answered), "
               "a tie half.")
best = best_per_format(cells)
line = headline(best, pool)
if line:
    st.success(line)
st.altair_chart(interval_chart(interval_rows(labelled), "θ (95% interval)" if alpha == 0.05 else "θ"),
                width="stretch")
st.caption("Each row: the interval from the human labels alone (classical, population sd) and the PPI++ interval "
           "that adds every verdict of the cell, tuned λ; items drawn by an active queue weigh 1/pi. "
           "Worth (labels) = human labels × (classical half-width / PPI++ half-width)².")
st.subheader("Per format: the most a cell's verdicts are worth")
why = unvalued(labelled)     # no empty table: why no cell can be valued
if why:
    st.info(why)
else:
    st.dataframe(**tables.view(best), hide_index=True, width="stretch")
with st.expander("Every cell"):
    st.dataframe(**tables.view(cells.drop("target")), hide_index=True, width="stretch")
