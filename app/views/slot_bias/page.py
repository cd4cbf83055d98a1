"""Slot bias: q and b with intervals per judge and comparative format, consistency, self-TIE,
tournament first/last-listed selections vs 1/k, qᵢ against the reference gap."""

import polars as pl
import streamlit as st

from app import charts, data, tables
from app.views.slot_bias.bins import bias_bins

pool = data.page_pool("Slot bias")
b = data.result("bias", pool)
if b.height == 0:
    st.info("No comparative verdicts in this pool.")
    st.stop()
st.caption("From items judged in both orders: q = the quality signal (half the difference of the two "
           "margins), b = the pull towards slot A (half their sum). 95% bootstrap intervals over items.")
tables.show(b)
seen = b.filter(pl.col("n_pairs") > 0)
if seen.height:
    # one above the other, full width: every row names its judge, format and decoding in full
    st.altair_chart(charts.interval_chart(seen, "b", "b_lo", "b_hi", "slot bias b (margin units)"), width="stretch")
    st.altair_chart(charts.interval_chart(seen, "q", "q_lo", "q_hi", "quality signal q (margin units)"),
                    width="stretch")
else:
    st.info("No item was judged in both orders: score with --swap-sample to measure slot bias.")

pos = data.result("positions", pool)
if pos.height:
    st.subheader("Tournament selections by listing position")
    st.caption("How often the selected candidate is the first- or last-listed one, against 1/k.")
    tables.show(pos)

bins = bias_bins(data.result("bias_items", pool))
if bins.height:
    st.subheader("qᵢ against the reference gap")
    st.caption("Each item's quality signal qᵢ, averaged within bins of the reference gap r_x − r_y (each "
               "distinct gap when there are few, else sextiles), with 95% intervals (mean ± 1.96 s/√n; none "
               "for a single item); point size = items. A judge that reads quality rises from left to right.")
    names = bins["cell"].unique(maintain_order=True).to_list()
    chosen = st.multiselect(f"Cells ({len(names)}; up to 6 at once, so the lines stay apart)", names,
                            default=names[:4], max_selections=6, key="slot_bias_cells")
    if chosen:
        st.altair_chart(charts.binned_means_chart(bins.filter(pl.col("cell").is_in(chosen)), "ref_gap", "q_i",
                                                  "cell", "reference gap r_x − r_y", "mean qᵢ"), width="stretch")
