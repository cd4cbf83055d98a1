"""The dashboard: page config, the shared sidebar (database and pool), and the page list."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from app import auth, data

st.set_page_config(page_title="judgeaudit", page_icon=":material/balance:", layout="wide")
auth.gate()   # a login before any page when one is configured; refuses beyond localhost without one

seeded = data.ensure_demo(str(data.db_file()))
pools = data.pools()
with st.sidebar:
    st.title("judgeaudit")
    st.caption(f"Database: `{data.db_file()}`")
    if seeded:
        st.caption("Seeded with the bundled demo: " + ", ".join(seeded))
    names = pools["name"].to_list() if pools.height else []
    if names:
        if st.session_state.get("next_pool") in names:      # a page asked to switch (e.g. after an upload)
            st.session_state["pool"] = st.session_state.pop("next_pool")
        if st.session_state.get("pool") not in names:   # first launch: the five-format demo
            st.session_state["pool"] = data.DEFAULT_POOL if data.DEFAULT_POOL in names else names[0]
        st.selectbox("Pool", names, key="pool")
    else:
        st.info("No pool yet: upload one on the Pool page.")

views = Path(__file__).with_name("views")
page = st.navigation([
    st.Page(str(views / "overview.py"), title="Overview", icon=":material/dashboard:", default=True),
    st.Page(str(views / "pool.py"), title="Pool", icon=":material/upload_file:"),
    st.Page(str(views / "score.py"), title="Score", icon=":material/play_arrow:"),
    st.Page(str(views / "formats.py"), title="Formats", icon=":material/bar_chart:"),
    st.Page(str(views / "slot_bias.py"), title="Slot bias", icon=":material/swap_horiz:"),
    st.Page(str(views / "rankings.py"), title="Rankings", icon=":material/format_list_numbered:"),
    st.Page(str(views / "calibration.py"), title="Calibration", icon=":material/fact_check:"),
    st.Page(str(views / "drift.py"), title="Drift", icon=":material/difference:"),
    st.Page(str(views / "probes.py"), title="Probes & mitigations", icon=":material/science:"),
    st.Page(str(views / "variance.py"), title="Variance", icon=":material/functions:"),
    st.Page(str(views / "curate.py"), title="Curate & Train", icon=":material/content_cut:"),
    st.Page(str(views / "evaluate.py"), title="Evaluate", icon=":material/leaderboard:"),
    st.Page(str(views / "report.py"), title="Report", icon=":material/description:"),
])
page.run()
