"""Score: launch a scoring run (a background `judgeaudit score` run), follow its progress, stop it."""

import streamlit as st

from app import data, score_form
from app.runs_panel import runs_panel
from ingest import UserError
from ingest.formats import BUILTIN

pool = data.page_pool("Score")
try:
    configured = data.endpoints()  # from the server's judgeaudit.toml: the only endpoints that get a key
except UserError as exc:
    st.error(str(exc))
    configured = {}
choices = score_form.providers(configured)
provider = st.radio("Judge", choices, horizontal=True, format_func=score_form.PROVIDERS.get,
                    index=0 if configured else choices.index("fake"))

with st.form("score"):
    endpoint, model, base_url = None, "", ""
    if provider == "endpoint":
        pairs = [(name, m) for name, ep in configured.items() for m in ep.models]
        endpoint, model = st.selectbox("Endpoint and model", pairs,
                                       format_func=lambda p: f"{p[0]} · {p[1]} ({configured[p[0]].base_url})")
    elif provider == "custom":
        st.caption("No API key is ever sent to an endpoint typed here; keys go only to the endpoints "
                   "configured on the server (judgeaudit.toml beside the database).")
        base_url = st.text_input("Base URL", value="http://localhost:8000/v1")
        model = st.text_input("Model")
    elif provider == "fake":
        model = st.text_input("Simulated judge name", value="sim")
    formats = st.multiselect("Formats", list(BUILTIN), default=["binary", "likert5", "numeric100"])
    schedule = st.selectbox("Tournament schedule", ["listing", "balanced", "both"])
    a, b = st.columns(2)
    concurrency = a.number_input("Concurrency", 1, 256, 8)
    swap = b.text_input("Swap sample (N or all)", value="0")
    launch = st.form_submit_button("Launch")

argv = None
if launch:
    form = score_form.ScoreForm(pool, provider, formats, endpoint, model, base_url, schedule, concurrency, swap)
    try:
        argv, judge_name = score_form.score_argv(form, str(data.db_file()), configured)
    except UserError as exc:
        st.error(str(exc))
if argv:
    try:    # refused while a run of the same pool and judge is alive (a double click included)
        run_id = data.launch_run("score", argv, pool=pool, key=f"score:{pool}:{judge_name}")
        st.success(f"Started run {run_id}: it goes on if this page is closed or reloaded.")
    except UserError as exc:
        st.error(str(exc))

st.subheader("Runs")
runs_panel("score", pool)
