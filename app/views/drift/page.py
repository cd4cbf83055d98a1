"""Drift: the verdicts of one judge (its latest version) against another version of it, stored under
another judge name, on the same calls: the share changed, the mean score change, the calls that moved.
It opens on the first two judges that share calls (audit.first_pair, the pair `judgeaudit derive`
stores), offers only judges that share calls, and says so when none do."""

import streamlit as st

from app import data, judge_picker, tables, url_state
from audit import plural

pool = data.page_pool("Drift")
pairs = data.result("drift_pairs", pool)   # judge, against, n_shared: the judges that answered the same calls
if pairs.height == 0:
    st.info("No two judges of this pool answered the same call (the same format, decoding, prompt, "
            "candidates and sample), so there is nothing to compare. Drift compares two versions of a judge on "
            "the same calls: re-run a judge on this pool under another --judge-name first.")
    st.stop()
judges = pairs["judge"].unique(maintain_order=True).to_list()
left, right = st.columns(2)
judge = judge_picker.judge_select(left, "Judge (the newer version)", judges, url_state.DRIFT_JUDGE)
shared = dict(pairs.filter(pairs["judge"] == judge).select("against", "n_shared").iter_rows())
against = judge_picker.judge_select(right, "Against (the stored earlier version)", list(shared), url_state.DRIFT_AGAINST)
right.caption(f"{plural(shared[against], 'call')} answered by both (only judges that share calls are offered)")
cells = data.result("drift", pool, judge, against)
if cells.height == 0:
    st.info(f"{judge}'s latest version shares no call with {against} in this pool.")
    st.stop()
st.caption("A judge version is (reported model id, template hash, decoding settings). Changed = another label "
           "(or parse status); mean |change| of the normalised score over calls scored by both.")
same = cells["n_moved"].to_list() == cells["n_changed"].to_list()
tables.show(cells.drop("n_moved") if same else cells)       # a moved count equal to the changed one says nothing new
moved = data.drift_items(pool, judge, against)
n_moved = int(cells["n_moved"].sum())
st.subheader(f"Calls that moved ({n_moved:,})")
if moved.height < n_moved:
    st.caption(f"The first {moved.height:,} by call; `judgeaudit drift --pool {pool} --judge {judge} --against "
               f"{against} --json` lists them all.")
tables.show(moved)
