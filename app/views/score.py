"""Score: launch a scoring run (a `judgeaudit score` process), follow its progress, cancel it."""

import json
import os
import subprocess
import sys
from pathlib import Path

import streamlit as st

from app import data
from ingest._progress import progress_dir, run_key
from ingest.formats import BUILTIN

pool = data.page_pool("Score")

with st.form("score"):
    provider = st.radio("Judge", ["openai", "local", "fake"], horizontal=True,
                        format_func={"openai": "OpenAI-compatible endpoint", "local": "bundled SmolLM2 (in-process)",
                                     "fake": "simulated judge"}.get)
    model = st.text_input("Model (OpenAI) or name (simulated)", value="sim")
    endpoint = st.text_input("Base URL (OpenAI)", value="http://localhost:8000/v1")
    key_env = st.text_input("API key variable (its NAME; the key stays in the environment)", value="")
    formats = st.multiselect("Formats", list(BUILTIN), default=["binary", "likert5", "numeric100"])
    schedule = st.selectbox("Tournament schedule", ["listing", "balanced", "both"])
    a, b = st.columns(2)
    concurrency = a.number_input("Concurrency", 1, 256, 8)
    swap = b.text_input("Swap sample (N or all)", value="0")
    launch = st.form_submit_button("Launch")

if launch:
    spec = {"openai": f"openai:{model}@{endpoint}", "local": "local:smollm2", "fake": f"fake:{model}"}[provider]
    cmd = [sys.executable, "-m", "app.cli", "score", "--pool", pool, "--judge", spec,
           "--formats", ",".join(formats), "--schedule", schedule, "--concurrency", str(concurrency),
           "--swap-sample", swap.strip() or "0", "--db", str(data.db_file()), "--json"]
    if key_env.strip():
        cmd += ["--api-key-env", key_env.strip()]
    judge_name = {"openai": model, "local": "smollm2", "fake": model.split("?")[0]}[provider]
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
