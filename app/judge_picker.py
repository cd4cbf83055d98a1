"""The judge picker the Evaluate and Probes pages share with the Score page's rules (app/score_form.py):
a configured endpoint (the only way an API key is sent), the bundled model, the simulated judge, or
a typed endpoint that never carries a key. Widgets only; the rules stay in score_form."""

from __future__ import annotations

import streamlit as st

from app import data, score_form, url_state
from ingest import UserError


def configured_endpoints() -> dict:
    """The server's configured endpoints; a broken config is shown, and offers none."""
    try:
        return data.endpoints()
    except UserError as exc:
        st.error(str(exc))
        return {}


def provider_radio(caption: str, configured: dict, prefix: str, on_change=None) -> str:
    """The judge's kind, kept in the address as ?PREFIX_provider= (app/url_state.py picker_keys);
    `on_change(provider)` when the user picks another."""
    choices = score_form.providers(configured)
    key = url_state.picker_keys(prefix)["provider"]
    return st.radio(caption, choices, horizontal=True, format_func=score_form.PROVIDERS.get,
                    index=choices.index("fake"), key=key, bind="query-params",
                    on_change=(lambda: on_change(st.session_state[key])) if on_change else None)


def judge_fields(provider: str, configured: dict, fake_default: str, prefix: str) -> score_form.JudgeChoice:
    """The chosen provider's fields (and only those): the judge as app/score_form.py reads it; each kept in
    the address as ?PREFIX_FIELD= (app/url_state.py picker_keys)."""
    keys = url_state.picker_keys(prefix)
    endpoint, model, base_url = None, "", ""
    if provider == "endpoint":
        pairs = [(name, m) for name, ep in configured.items() for m in ep.models]
        endpoint, model = st.selectbox("Endpoint and model", pairs, format_func=lambda p: f"{p[0]} · {p[1]}",
                                       key=keys["endpoint"], bind="query-params")
    elif provider == "custom":
        base_url = st.text_input("Base URL (no API key is sent)", value="http://localhost:8000/v1",
                                 key=keys["base_url"], bind="query-params")
        model = st.text_input("Model", key=keys["model"], bind="query-params")
    elif provider == "fake":
        model = st.text_input("Simulated judge", value=fake_default, key=keys["sim"], bind="query-params")
    return score_form.JudgeChoice(provider, endpoint, model, base_url)


def judge_select(where, caption: str, options: list[str], key: str) -> str:
    """The judge (or judge / format / decoding cell) picked on a reading page, kept in the address as
    ?KEY= (app/url_state.py), so a reload or a shared link opens on it. A choice the pool no longer
    offers (the sidebar switched pools) is forgotten, and the first option shows."""
    if key in st.session_state and st.session_state[key] not in options:
        del st.session_state[key]
    return where.selectbox(caption, options, key=key, bind="query-params")
