"""The dashboard: page config, the shared sidebar (database and pool), and the page list."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from app import data

st.set_page_config(page_title="judgeaudit", page_icon="⚖️", layout="wide")

seeded = data.ensure_demo(str(data.db_file()))
pools = data.pools()
with st.sidebar:
    st.title("judgeaudit")
    st.caption(f"Database: `{data.db_file()}`")
    if seeded:
        st.caption("Seeded with the bundled demo: " + ", ".join(seeded))
    if pools.height:
        st.selectbox("Pool", pools["name"].to_list(), key="pool")
    else:
        st.info("No pool yet: import one with `judgeaudit import-pool`.")

views = Path(__file__).with_name("views")
page = st.navigation([st.Page(str(views / "formats.py"), title="Formats", icon="📊", default=True)])
page.run()
