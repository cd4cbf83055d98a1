"""Score: launch a scoring run (a background `judgeaudit score` run), follow its progress, stop it."""

import streamlit as st

from app import data, score_form, url_state
from app.views.score import help as score_help
from app.runs_panel import runs_panel
from ingest import UserError

pool = data.page_pool("Score")
try:
    configured = data.endpoints()  # from the server's judgeaudit.toml: the only endpoints that get a key
except UserError as exc:
    st.error(str(exc))
    configured = {}
choices = score_form.providers(configured)
provider = st.radio("Judge", choices, horizontal=True, format_func=score_form.PROVIDERS.get,
                    index=0 if configured else choices.index("fake"))

# No st.form: the call count and the estimate follow every change. Only the chosen provider's fields show.
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
    n, sb, lat, name = st.columns([1, 1, 1, 2])
    sim = {"noise": n.number_input("Noise", 0.0, 5.0, score_form.SIM_DEFAULTS["noise"], 0.05,
                                   help="Spread of the judge's error around the reference (0: no noise)"),
           "slot_bias": sb.number_input("Slot bias", -2.0, 2.0, score_form.SIM_DEFAULTS["slot_bias"], 0.1,
                                        help="Added to every comparative margin in favour of Response A"),
           "latency_ms": lat.number_input("Latency (ms per call)", 0.0, 60_000.0, score_form.SIM_DEFAULTS["latency_ms"],
                                          50.0, format="%g", help="How long each simulated call takes")}
    model = score_form.fake_spec(name.text_input("Simulated judge name", value="sim", help="New settings need a new "
                                                 "name: a judge's name stands for one set of settings"), **sim)
else:
    st.caption("SmolLM2-135M-Instruct, bundled and run in this server's process (loading takes 15-45 s).")
formats = st.multiselect("Formats", data.builtin_formats(), default=["binary", "likert5", "numeric100"],
                         key=url_state.FORMATS, bind="query-params")   # kept in the URL (app/url_state.py)
decoding = st.radio("Decoding", ["greedy", "constrained"], horizontal=True, key=url_state.DECODING,
                    bind="query-params",
                    help="greedy: the judge's own answer, parsed (the paper's protocol); constrained: the answer "
                         "restricted to the format's labels (by the server's mechanism for an endpoint).")
schedule = st.selectbox("Tournament schedule", ["listing", "balanced", "both"], key=url_state.SCHEDULE,
                        bind="query-params")
a, b = st.columns(2)
concurrency = a.number_input("Concurrency", 1, 256, 8, key=url_state.CONCURRENCY, bind="query-params")
swap = b.text_input("Swap sample (N or all)", value="0", key=url_state.SWAP, bind="query-params")

form = score_form.ScoreForm(pool, provider, formats, endpoint, model, base_url, schedule, concurrency, swap)
argv, judge_name, problem = None, None, None
try:
    argv, judge_name = score_form.score_argv(form, str(data.db_file()), configured)
    argv += ["--decoding", decoding]
    count = data.call_count(pool, formats, schedule, swap.strip() or "0")
except UserError as exc:
    problem = str(exc)
if problem:
    st.warning(problem)
else:
    latency = sim["latency_ms"] if provider == "fake" else None
    eta = data.estimate_seconds(count["total"], provider, decoding, int(concurrency), latency)
    basis = score_help.LOCAL_BASIS if latency is None else score_help.sim_basis(latency, int(concurrency))
    st.info(score_help.estimate_text(count, eta, st.session_state.get("score_test"), judge_name, int(concurrency),
                                     basis))
busy = data.active_run(data.score_key(pool, judge_name)) if judge_name else None
if busy:
    st.error(f"Run {busy['run_id']} is already scoring pool '{pool}' with judge '{judge_name}' ({busy['status']}): "
             "a second identical run is refused until it ends or is stopped below.")
left, right = st.columns(2)
test = left.button("Test connection", key="score-test", disabled=argv is None or not formats,
                   help="One real call on the pool's first candidate in the first chosen format: the raw reply "
                        "and the parsed label. Nothing is stored.")
launch = right.button("Launch", key="score-launch", type="primary", disabled=argv is None or bool(busy))

if test:
    with st.spinner("One call..."):
        try:
            st.session_state["score_test"] = data.check_call(pool, score_form.judge_argv(form.judge, configured)[0],
                                                             formats[0], decoding)
        except UserError as exc:
            st.session_state["score_test"] = {"judge": judge_name, "error": str(exc)}
    st.rerun()    # the estimate above now uses the call's latency
tested = st.session_state.get("score_test")
if tested and tested.get("judge") == judge_name:
    if tested.get("error"):
        st.error(f"Test call failed: {tested['error']}")
    else:
        (st.success if tested["label"] is not None else st.warning)(
            f"{tested['format']}: parsed label **{tested['label']}**" if tested["label"] is not None
            else f"{tested['format']}: the reply did not parse to a label ({tested['status']})")
        st.caption(f"Model {tested['model']} · {tested['latency_ms']:.0f} ms. Raw reply:")
        st.code(tested["raw"] or "(empty)", language=None)

if launch and argv:
    try:    # refused while a run of the same pool and judge is alive (a double click included)
        run_id = data.launch_run("score", argv, pool=pool, key=data.score_key(pool, judge_name))
        st.success(f"Started run {run_id}: it goes on if this page is closed or reloaded.")
    except UserError as exc:
        st.error(str(exc))

st.subheader("Runs")
runs_panel("score", pool)
