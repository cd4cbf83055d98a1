"""Variance: how much of each diagnostic is the format, the judge, or their interaction."""

import polars as pl
import streamlit as st

from app import charts, data, tables

pool = data.page_pool("Variance")
v = data.result("variance", pool)
if v.height == 0:
    judges = sorted(data.result("cells", pool)["judge"].unique().to_list())
    st.info(f"Variance splits each diagnostic into what the format, the judge and their interaction explain, so "
            f"it needs **at least two judges** that share at least two formats. Pool '{pool}' has "
            f"{len(judges)} judge{'' if len(judges) == 1 else 's'}" + (f" ({', '.join(judges)})" if judges else "")
            + ": score it with another judge in the same formats (a simulated judge takes seconds).")
    st.page_link("views/score/page.py", label="Score with another judge", icon=":material/play_arrow:")
    st.stop()
groups = v.select("decoding", "score").unique(maintain_order=True).rows()
pick = st.radio("Decoding · score", groups, horizontal=True, format_func=" · ".join) if len(groups) > 1 else groups[0]
v = v.filter((pl.col("decoding") == pick[0]) & (pl.col("score") == pick[1]))     # one bar per diagnostic
full = v.filter(pl.col("dropped_judge").is_null())
st.caption(f"Two-way decomposition (format × judge, one value per cell) on the formats every judge used, "
           f"{pick[0]} decoding, {pick[1]} scores: each bar's three shares are the table's row and sum to 1.")
st.altair_chart(charts.share_bars(full), width="stretch")
tables.show(full.drop("dropped_judge"))
st.subheader("Leave one judge out")
tables.show(v.filter(pl.col("dropped_judge").is_not_null()))
