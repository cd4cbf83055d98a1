"""Drift: the verdicts of one judge (its latest version) against another version of it, stored under
another judge name, on the same calls: the share changed, the mean score change, the calls that moved."""

import streamlit as st

from app import data, tables

pool = data.page_pool("Drift")
judges = sorted(data.result("cells", pool)["judge"].unique().to_list())
if len(judges) < 2:
    st.info("Drift compares two versions of a judge: re-run it under another --judge-name first.")
    st.stop()
left, right = st.columns(2)
judge = left.selectbox("Judge (the newer version)", judges)
against = right.selectbox("Against (the stored earlier version)", [j for j in judges if j != judge])
cells = data.result("drift", pool, judge, against)
if cells.height == 0:
    st.info(f"{judge} and {against} share no call in this pool.")
    st.stop()
st.caption("A judge version is (reported model id, template hash, decoding settings). Changed = another label "
           "(or parse status); mean |change| of the normalised score over calls scored by both.")
tables.show(cells)
moved = data.drift_items(pool, judge, against)
n_moved = int(cells["n_moved"].sum())
st.subheader(f"Calls that moved ({n_moved:,})")
if moved.height < n_moved:
    st.caption(f"The first {moved.height:,} by call; `judgeaudit drift --pool {pool} --judge {judge} --against "
               f"{against} --json` lists them all.")
tables.show(moved)
