"""The Evaluate page's launch form: training runs, study, generation limits and the judge as the
Score and Probes pages pick it (app/score_form.py's rules: a configured endpoint is the only way a
key is sent); app/evaluate_form.py turns the form into the run's request."""

from __future__ import annotations

import streamlit as st

from app import data, evaluate_form, judge_picker
from ingest import UserError


def launch_form(pool: str, trained: dict[int, dict], offered: list[int], preselected: list[int]) -> None:
    """The form, and the evaluation it starts (a background `judgeaudit evaluate` run)."""
    configured = judge_picker.configured_endpoints()
    provider = judge_picker.provider_radio("Evaluation judge", configured, key="eval_provider")
    with st.form("evaluate"):
        runs = st.multiselect("Training runs", offered, default=preselected,      # the run just trained
                              format_func=lambda i: evaluate_form.trained_run_caption(trained[i], pool))
        judge = judge_picker.judge_fields(provider, configured, fake_default="eval")
        a, b, c, d = st.columns(4)
        study = a.text_input("Study", value=pool)
        max_new = b.number_input("Max new tokens", 8, 4096, 256)
        batch = c.number_input("Batch size", 1, 256, 8)
        max_prompts = d.number_input("Max prompts (0 = all)", 0, 100_000, 0)
        go = st.form_submit_button("Evaluate", disabled=not offered)
    if go and runs:
        form = evaluate_form.EvaluateForm(pool, judge, runs, study, max_new, batch, max_prompts)
        try:
            request = evaluate_form.evaluate_request(form, configured)
            st.success(f"Started evaluation run {data.launch_evaluation(request, pool, study)}.")
        except UserError as exc:
            st.error(str(exc))
