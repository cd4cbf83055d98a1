"""The Curate & Train page's training part: the base model and hyper-parameters (a preset, then each
value), and the training runs' loss curves and finished adapters."""

from __future__ import annotations

import streamlit as st

from app import data, tables, url_state
from app.evaluate_form import trained_run_caption
from app.placeholders import placeholder_warning
from app.runs_panel import follow
from app.views.curate import curves, form as tf

HYPER = list(url_state.HYPER_NAMES)    # each kept in the address as ?hp_NAME= (app/url_state.py)


def _preset_values() -> None:
    """A preset just picked sets its max steps and hyper-parameters (the fields are kept in the address, so
    their own defaults no longer follow the preset)."""
    preset = tf.PRESETS[st.session_state[url_state.PRESET]]
    st.session_state.update({url_state.STEPS: preset["max_steps"],
                             **{url_state.HYPER + key: preset[key] for key in HYPER}})


def hyper_parameters(pool: str | None = None) -> tuple[str, dict]:
    """(the base model's path or spec, the hyper-parameters by `judgeaudit train` parameter name); above
    them, a warning when the pool's texts are placeholders (training would learn the notices)."""
    if pool:
        placeholder_warning(pool, "train")     # stored (data.placeholders)
    bases = data.base_models()
    a, b, c = st.columns(3)
    base = a.selectbox("Base model", list(bases), key=url_state.BASE, bind="query-params")
    preset = tf.PRESETS[b.radio("Preset", list(tf.PRESETS), horizontal=True, help="quick: a few minutes on 2 CPU cores",
                                key=url_state.PRESET, bind="query-params", on_change=_preset_values)]
    hp = {"max_steps": c.number_input("Max steps (0: epochs)", 0, 100_000, preset["max_steps"], key=url_state.STEPS,
                                      bind="query-params")}
    cols = st.columns(4)
    for i, key in enumerate(HYPER):
        hp[key] = cols[i % 4].number_input(key.replace("_", " "), value=preset[key], key=url_state.HYPER + key,
                                           bind="query-params",
                                           format="%g" if isinstance(preset[key], float) else "%d")
    return bases[base], hp


def training_curves(pool: str) -> None:
    """The loss curves of the pool's latest training runs, and the finished ones' final losses and
    adapters, under the subheader Runs; followed while a run is alive (app.runs_panel.follow: its curve grows,
    the page quiet otherwise)."""
    st.subheader("Runs")
    follow(data.runs_of("train", pool)[::-1][:12], _curves, f"curves-{pool}")


def _curves(rows: list[dict]) -> None:
    frame = curves.train_curves(rows, lambda row: trained_run_caption(row, short=True))
    if frame.height:
        st.altair_chart(tf.loss_chart(frame), width="stretch")
    done = tf.finished_runs(rows, {r["run_id"]: data.train_outcome(r) for r in rows if r["status"] in
                                   ("finished", "cancelled")})
    if done.height:
        st.caption("Finished runs: the final losses and the folder of each saved adapter; evaluate them against "
                   "the base model on held-out prompts.")
        tables.show(done)
        st.page_link("views/evaluate/page.py", label="Evaluate the adapters", icon=":material/leaderboard:")
