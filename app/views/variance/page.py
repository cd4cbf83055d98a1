"""Variance: how much of each diagnostic is the format, the judge, or their interaction."""

import polars as pl
import streamlit as st

from app import charts, data
from app.reading import table_view

pool = data.page_pool("Variance")
v = data.variance(pool)
if v.height == 0:
    judges = sorted(data.cells(pool)["judge"].unique().to_list())
    st.info(f"Variance splits each diagnostic into what the format, the judge and their interaction explain, so "
            f"it needs **at least two judges** that share at least two formats. Pool '{pool}' has "
            f"{len(judges)} judge{'' if len(judges) == 1 else 's'}" + (f" ({', '.join(judges)})" if judges else "")
            + ": score it with another judge in the same formats (a simulated judge takes seconds).")
    st.page_link("views/score/page.py", label="Score with another judge", icon=":material/play_arrow:")
    st.stop()
full = v.filter(pl.col("dropped_judge").is_null())
st.caption("Two-way decomposition (format × judge, one value per cell) on the formats every judge used.")
st.altair_chart(charts.share_bars(full), width="stretch")
st.dataframe(**table_view(full), hide_index=True, width="stretch")
st.subheader("Leave one judge out")
st.dataframe(**table_view(v.filter(pl.col("dropped_judge").is_not_null())), hide_index=True, width="stretch")
