"""Evaluate: answer held-out prompts with trained adapters and the base model, judge them against the
reference-top answer in both orders, and read the contrasts (docs/metrics.md#downstream-contrasts)."""

import json

import polars as pl
import streamlit as st

from app import data, evaluate_form, judge_picker, url_state
from app.tables import view as table_view    # the one table helper
from app.runs_panel import runs_panel
from app.views.evaluate import charts as evaluate_charts
from app.views.evaluate.examples import best_and_worst
from app.views.evaluate.launch import launch_form
from app.views.evaluate.small_n import flag_small

pool = data.page_pool("Evaluate")
trained = {r["run_id"]: r for r in data.runs_of("train")}
offered, just_trained = evaluate_form.training_choices(list(trained.values()), pool)
found = data.studies().filter(pl.col("pool") == pool)
with st.expander("Launch an evaluation", expanded=found.height == 0):
    launch_form(pool, trained, offered, just_trained)
st.subheader("Evaluation runs")
runs_panel("evaluate", pool, limit=3)    # live; the study below shows when one ends

if found.height == 0:
    st.info("No evaluation study for this pool yet.")
    st.stop()
a, b, c = st.columns(3)
study = judge_picker.judge_select(a, "Study", found["study"].to_list(), url_state.STUDY)     # kept in the address
boot = b.select_slider("Bootstrap resamples", [500, 2000, 10_000], 2000, key=url_state.BOOT, bind="query-params")
seed = c.number_input("Bootstrap seed", 0, 10_000, 0, key=url_state.BOOT_SEED, bind="query-params")
doc = data.contrasts(study, boot, int(seed))
if not doc["contrasts"]:
    st.info("Too few conditions or outcomes for a contrast yet.")
    st.stop()
table = pl.DataFrame(doc["contrasts"]).with_columns((pl.col("a") + " − " + pl.col("b")).alias("contrast"))
table, too_few = flag_small(table, doc["friedman"])      # fewer than audit.MIN_N held-out prompts: too few to say
st.subheader("Contrasts (paired bootstrap, Holm within each judge)")
if too_few:
    st.warning(too_few)
st.dataframe(**table_view(table.select("judge", "contrast", "prompts", "diff", "lo", "hi", "p", "p_holm",
                                       "n_judges_agree")), hide_index=True)
st.altair_chart(evaluate_charts.contrast_forest(table), width="stretch")
with st.expander("Friedman, length- and markdown-adjusted contrasts, minimum detectable difference"):
    st.dataframe(**table_view(pl.DataFrame(doc["friedman"])), hide_index=True)
    if doc["adjusted"]:
        st.dataframe(**table_view(pl.DataFrame(doc["adjusted"]).drop("n_prompts", "sd_diff")), hide_index=True)
    st.dataframe(**table_view(pl.DataFrame(doc["mdd"]["contrasts"])), hide_index=True)
    for note in doc["notes"]:
        st.caption(note)

st.subheader("Prompt by prompt")
pick = st.selectbox("Contrast", table.rows(named=True), format_func=lambda r: f"{r['judge']}: {r['contrast']}",
                    key=url_state.CONTRAST, bind="query-params")
gens = data.study_generations(study)
best_and_worst(study, pick, gens)

a, b, c = st.columns(3)
a.download_button("Outcomes (JSONL)", data.study_outcomes(study).write_ndjson(), f"{study}-outcomes.jsonl")
b.download_button("Generations (JSONL)", gens.write_ndjson(), f"{study}-generations.jsonl")
c.download_button("Statistics (JSON)", json.dumps(doc, indent=2, default=str), f"{study}-contrasts.json")
