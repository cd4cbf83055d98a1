"""The Score page's judge: the provider and only its fields (a configured endpoint, a typed one that
never carries a key, the simulated judge with its settings, the bundled model), and what one test
call of it said. Widgets only; the rules stay in app/score_form.py."""

from __future__ import annotations

import streamlit as st

from app import data, score_form, url_state
from ingest import UserError


def judge_fields(configured: dict) -> tuple[score_form.JudgeChoice, float | None]:
    """(the judge as app/score_form.py reads it, the simulated judge's latency in ms or None). Every
    field of every judge kind is kept in the address (app/url_state.py), so a reload keeps the judge."""
    choices = score_form.providers(configured)
    provider = st.radio("Judge", choices, horizontal=True, format_func=score_form.PROVIDERS.get,
                        index=0 if configured else choices.index("fake"), key=url_state.PROVIDER, bind="query-params")
    endpoint, model, base_url, latency = None, "", "", None
    if provider == "endpoint":
        pairs = [(name, m) for name, ep in configured.items() for m in ep.models]
        endpoint, model = st.selectbox("Endpoint and model", pairs, key=url_state.ENDPOINT, bind="query-params",
                                       format_func=lambda p: f"{p[0]} · {p[1]} ({configured[p[0]].base_url})")
    elif provider == "custom":
        st.caption("No API key is ever sent to an endpoint typed here; keys go only to the endpoints "
                   "configured on the server (judgeaudit.toml beside the database).")
        base_url = st.text_input("Base URL", value="http://localhost:8000/v1", key=url_state.BASE_URL,
                                 bind="query-params")
        model = st.text_input("Model", key=url_state.MODEL, bind="query-params")
    elif provider == "fake":
        n, sb, lat, name = st.columns([1, 1, 1, 2])
        defaults = score_form.SIM_DEFAULTS
        sim = {"noise": n.number_input("Noise", 0.0, 5.0, defaults["noise"], 0.05, key=url_state.NOISE,
                                       bind="query-params",
                                       help="Spread of the judge's error around the reference (0: no noise)"),
               "slot_bias": sb.number_input("Slot bias", -2.0, 2.0, defaults["slot_bias"], 0.1, key=url_state.SLOT_BIAS,
                                            bind="query-params",
                                            help="Added to every comparative margin in favour of Response A"),
               "latency_ms": lat.number_input("Latency (ms per call)", 0.0, 60_000.0, defaults["latency_ms"], 50.0,
                                              format="%g", key=url_state.LATENCY, bind="query-params",
                                              help="How long each simulated call takes")}
        model = score_form.fake_spec(name.text_input("Simulated judge name", value="sim", key=url_state.SIM_NAME,
                                                     bind="query-params", help="New settings need a new name: a "
                                                     "judge's name stands for one set of settings"), **sim)
        latency = sim["latency_ms"]
    else:
        st.caption("SmolLM2-135M-Instruct, bundled and run in this server's process (loading takes 15-45 s).")
    return score_form.JudgeChoice(provider, endpoint, model, base_url), latency


def test_call(pool: str, form: score_form.ScoreForm, configured: dict, judge_name: str) -> None:
    """ONE real call of the form's judge in its first format (nothing stored); the result is kept
    for the page's estimate and shown by show_test_call."""
    with st.spinner("One call..."):
        try:
            judge = score_form.judge_options(form.judge, configured)[0]
            st.session_state["score_test"] = data.check_call(pool, judge, form.formats[0], form.decoding)
        except UserError as exc:
            st.session_state["score_test"] = {"judge": judge_name, "error": str(exc)}


def show_test_call(judge_name: str | None) -> None:
    """The last test call of this judge: its parsed answer, or why it did not parse, and the raw reply."""
    tested = st.session_state.get("score_test")
    if not tested or tested.get("judge") != judge_name:
        return
    if tested.get("error"):
        st.error(f"Test call failed: {tested['error']}")
        return
    (st.success if tested["answer"] is not None else st.warning)(
        f"{tested['format']}: parsed answer **{tested['answer']}**" if tested["answer"] is not None
        else f"{tested['format']}: the reply did not parse to one of the format's answers ({tested['status']})")
    st.caption(f"Model {tested['model']} · {tested['latency_ms']:.0f} ms. Raw reply:")
    st.code(tested["raw"] or "(empty)", language=None)
