"""The Evaluate page's launch form: training runs, study, generation limits and the judge as the
Score and Probes pages pick it (app/score_form.py's rules: a configured endpoint is the only way a
key is sent); app/evaluate_form.py turns the form into the run's request."""

from __future__ import annotations

import streamlit as st

from app import data, evaluate_form, judge_picker, url_state
from ingest import UserError


def launch_form(pool: str, trained: dict[int, dict], offered: list[int], preselected: list[int]) -> None:
    """The form, and the evaluation it starts (a background `judgeaudit evaluate` run)."""
    configured = judge_picker.configured_endpoints()
    provider = judge_picker.provider_radio("Evaluation judge", configured, url_state.EVAL)
    with st.form("evaluate"):   # each field kept in the address (app/url_state.py) as it is typed
        if any(r not in offered for r in st.session_state.get(url_state.EVAL_RUNS) or []):
            del st.session_state[url_state.EVAL_RUNS]        # a run of another pool, or one gone
        runs = st.multiselect("Training runs", offered, default=preselected,      # the run just trained
                              format_func=lambda i: evaluate_form.trained_run_caption(trained[i], pool),
                              key=url_state.EVAL_RUNS, bind="query-params")
        judge = judge_picker.judge_fields(provider, configured, "eval", url_state.EVAL)
        a, b, c, d = st.columns(4)
        study = a.text_input("Study", value=pool, key=url_state.EVAL_STUDY, bind="query-params")
        max_new = b.number_input("Max new tokens", 8, 4096, 256, key=url_state.EVAL_MAX_NEW, bind="query-params")
        batch = c.number_input("Batch size", 1, 256, 8, key=url_state.EVAL_BATCH, bind="query-params")
        max_prompts = d.number_input("Max prompts (0 = all)", 0, 100_000, 0, key=url_state.EVAL_MAX_PROMPTS,
                                     bind="query-params")
        go = st.form_submit_button("Evaluate", disabled=not offered)
    if go and runs:
        form = evaluate_form.EvaluateForm(pool, judge, runs, study, max_new, batch, max_prompts)
        try:
            request = evaluate_form.evaluate_request(form, configured)
            st.success(f"Started evaluation run {data.launch_evaluation(request, pool, study)}.")
        except UserError as exc:
            st.error(str(exc))
