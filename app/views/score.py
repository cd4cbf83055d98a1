"""Score: launch a scoring run (a `judgeaudit score` process), follow its progress, cancel it."""

import json
import os
import subprocess
import sys
from pathlib import Path

import streamlit as st

from app import data, score_form
from ingest import UserError
from ingest._progress import progress_dir, run_key
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
    cmd = [sys.executable, "-m", "app.cli", *argv]
    log = progress_dir(data.db_file()) / f"{run_key(pool, judge_name)}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as out:   # the run keeps its own copy of the file; ours closes here
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                                env=dict(os.environ))
    st.session_state["scoring"] = {"pid": proc.pid, "judge": judge_name, "log": str(log)}


@st.fragment(run_every=1.0)
def follow() -> None:
    job = st.session_state.get("scoring")
    if not job:
        st.caption("No run launched from this page yet.")
        return
    folder = progress_dir(data.db_file())
    record_path = folder / f"{run_key(pool, job['judge'])}.json"
    record = json.loads(record_path.read_text()) if record_path.exists() else None
    if record is None:
        st.info("Starting (loading the judge)...")
    else:
        total = max(record["total"], 1)
        st.progress(record["done"] / total, text=f"{record['done']}/{record['total']} calls · "
                    f"{record['rate']:.1f}/s · failed {record['failed']} · unparsed {record['unparsed']} · "
                    f"{record['status']}")
        if record["failures"]:
            st.write("Failures (reasons):")
            st.code("\n".join(sorted(set(record["failures"]))))
    if st.button("Cancel run"):
        (folder / f"{run_key(pool, job['judge'])}.cancel").touch()
    log = Path(job["log"])
    if log.exists():
        tail = log.read_text(errors="replace")[-2000:]
        if tail.strip():
            st.code(tail)


follow()
