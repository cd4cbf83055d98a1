"""The dashboard: page config, the shared sidebar (database and pool), and the page list."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from app import auth, data, url_state

st.set_page_config(page_title="judgeaudit", page_icon=":material/balance:", layout="wide")
auth.gate()   # a login before any page when one is configured; refuses beyond localhost without one

seeded = data.ensure_demo(str(data.database().path))
pools = data.pools()
with st.sidebar:        # below the page list: the pool first, so that it shows without scrolling
    names = pools["name"].to_list() if pools.height else []
    default, key = url_state.default_pool(names, data.DEFAULT_POOL), url_state.POOL   # key: also the URL's name
    if key not in st.session_state:           # a new session (a reload, a bookmark, a shared link)
        st.session_state["pool_notice"] = url_state.pool_notice(st.query_params.get(key), names, default)
    if names:
        if st.session_state.get("next_pool") in names:      # a page asked to switch (e.g. after an upload)
            st.session_state[key] = st.session_state.pop("next_pool")
        elif key not in st.session_state:      # a new session opens on the URL's pool, if the database holds it
            st.session_state[key] = url_state.opening_pool(st.query_params.get(key), names, default)
        elif st.session_state[key] not in names:   # its pool was removed
            st.session_state[key] = default
        st.selectbox("Pool", names, key=key, on_change=lambda: st.session_state.pop("pool_notice", None))
        # the address always names the pool (a widget bound to ?pool= would leave out its default pool,
        # and a copied link would then open whatever pool the recipient's default is)
        if st.query_params.get(key) != st.session_state[key]:
            st.query_params[key] = st.session_state[key]
    else:
        st.info("No pool yet: upload one on the Pool page.")
    if st.session_state.get("pool_notice"):
        st.warning(st.session_state["pool_notice"])
    st.caption(f"**judgeaudit** · database `{data.database().path}`")
    if seeded:
        st.caption("Seeded with the bundled demo: " + ", ".join(seeded))

views = Path(__file__).with_name("views")


def _page(folder: str, title: str, icon: str, **kw) -> st.Page:
    """A page: app/views/FOLDER/page.py, at the address /FOLDER."""
    return st.Page(str(views / folder / "page.py"), title=title, icon=f":material/{icon}:", url_path=folder, **kw)


page = st.navigation({                        # sections, always expanded: every page shows in the sidebar
    "Start": [_page("overview", "Overview", "dashboard", default=True), _page("pool", "Pool", "upload_file"),
              _page("score", "Score", "play_arrow")],
    "Audit": [_page("formats", "Formats", "bar_chart"), _page("slot_bias", "Slot bias", "swap_horiz"),
              _page("rankings", "Rankings", "format_list_numbered"), _page("variance", "Variance", "functions")],
    "Trust": [_page("calibration", "Calibration", "fact_check"), _page("drift", "Drift", "difference"),
              _page("probes", "Probes & mitigations", "science"),
              _page("label", "Label", "edit_note"), _page("trust", "What labels are worth", "verified"),
              _page("judges", "Judges", "groups"), _page("align", "Align", "tune")],
    "Curate & train": [_page("curate", "Curate & Train", "content_cut"),
                       _page("evaluate", "Evaluate", "leaderboard")],
    "Report": [_page("report", "Report", "description")],
}, expanded=True)
page.run()
