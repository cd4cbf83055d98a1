"""Score: launch a scoring run (a background `judgeaudit score` run), follow its progress, stop it."""

import streamlit as st

from app import data, judge_picker, score_form, url_state
from app.runs_panel import runs_panel
from app.views.score import help as score_help
from app.views.score.judge import judge_fields, show_test_call, test_call
from app.views.score.jury_form import jury_form
from ingest import UserError

pool = data.page_pool("Score")
configured = judge_picker.configured_endpoints()   # the server's judgeaudit.toml: the only endpoints that get a key
# No st.form: the call count and the estimate follow every change. Only the chosen provider's fields show.
choice, latency = judge_fields(configured)
formats = st.multiselect("Formats", data.builtin_formats(), default=["binary", "likert5", "numeric100"],
                         key=url_state.FORMATS, bind="query-params")   # kept in the URL (app/url_state.py)
decoding = st.radio("Decoding", ["greedy", "constrained"], horizontal=True, key=url_state.DECODING,
                    bind="query-params",
                    help="greedy: the judge's own answer, parsed (the paper's protocol; stored as sampled at a "
                         "temperature above 0); constrained: the answer restricted to the format's labels.")
schedule = st.selectbox("Tournament schedule", ["listing", "balanced", "both"], key=url_state.SCHEDULE,
                        bind="query-params")
a, b, c, d = st.columns(4)
concurrency = a.number_input("Concurrency", 1, 256, 8, key=url_state.CONCURRENCY, bind="query-params")
swap = b.text_input("Swap sample (N or all)", value="0", key=url_state.SWAP, bind="query-params")
samples = c.number_input("Samples per call", 1, 50, 1, key=url_state.SAMPLES, bind="query-params",
                         help=score_help.SAMPLES_HELP)
temperature = d.number_input("Temperature", 0.0, 2.0, 0.0, 0.1, key=url_state.TEMPERATURE, bind="query-params",
                             help=score_help.TEMPERATURE_HELP)
form = score_form.ScoreForm(pool, choice.provider, formats, choice.endpoint, choice.model, choice.base_url, schedule,
                            concurrency, swap, decoding, int(samples), float(temperature))
request, judge_name = None, None
try:
    request, judge_name = score_form.score_request(form, configured)
    count = score_help.times_samples(data.call_count(pool, formats, schedule, swap.strip() or "0"), int(samples))
    est = data.estimate(count, choice.provider, decoding, int(concurrency), latency)
    basis = score_help.sim_basis(latency, int(concurrency)) if latency is not None else \
        score_help.local_basis(est, count["total"]) if est else ""
    st.info(score_help.estimate_text(count, est and est.seconds, st.session_state.get("score_test"), judge_name,
                                     int(concurrency), basis))
except UserError as exc:
    request = None
    st.warning(str(exc))
busy = data.active_run(data.score_key(pool, judge_name)) if judge_name else None
if busy:
    st.error(f"Run {busy['run_id']} is already scoring pool '{pool}' with judge '{judge_name}' ({busy['status']}): "
             "a second identical run is refused until it ends or is stopped below.")
left, right = st.columns(2)
test = left.button("Test connection", key="score-test", disabled=request is None or not formats,
                   help="One real call on the pool's first candidate in the first chosen format: the raw reply "
                        "and the parsed label. Nothing is stored.")
launch = right.button("Launch", key="score-launch", type="primary", disabled=request is None or bool(busy))
if test:
    test_call(pool, form, configured, judge_name)
    st.rerun()    # the estimate above now uses the call's latency
show_test_call(judge_name)

if launch and request:
    try:    # refused while a run of the same pool and judge is alive (a double click included)
        run_id = data.launch_run(request, pool=pool, key=data.score_key(pool, judge_name))
        st.success(f"Started run {run_id}: it goes on if this page is closed or reloaded.")
    except UserError as exc:
        st.error(str(exc))

st.subheader("Runs")
runs_panel("score", pool)
jury_form(pool)      # a jury of the judges already run
