"""Formats: the diagnostics table across judges x formats, and the slot-bias table."""

import streamlit as st

from app import data

pool = st.session_state.get("pool")
st.header("Formats")
if not pool:
    st.stop()

cells = data.cells(pool)
st.subheader(f"Diagnostics per judge × format — pool `{pool}`")
st.caption("distinct = values used; tie_prob = chance two candidates share a score; D1/D2 = "
           "effective levels; top_tied = share of prompts whose best score is shared; τa counts "
           "ties against the judge, τb forgives them, top1_expected is the exact chance a "
           "random tie-break picks a reference-best candidate.")
st.dataframe(cells, hide_index=True, use_container_width=True)

bias = data.bias(pool)
if bias.height:
    st.subheader("Slot bias (comparative formats)")
    st.caption("q = quality signal, b = slot-A bias, from items judged in both orders (95% bootstrap "
               "intervals); consistency = same preferred candidate in both orders.")
    st.dataframe(bias, hide_index=True, use_container_width=True)
