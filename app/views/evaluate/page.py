"""Evaluate: answer held-out prompts with trained adapters and the base model, judge them against the
reference-top answer in both orders, and read the contrasts (DESIGN.md 'Metric definitions')."""

import json

import polars as pl
import streamlit as st

from app import data, evaluate_form, judge_picker
from app.views.evaluate import charts as evaluate_charts
from app.reading import table_view
from app.runs_panel import runs_panel
from ingest import UserError

pool = data.page_pool("Evaluate")
trained = {r["run_id"]: r for r in data.runs_of("train")}
offered, just_trained = evaluate_form.training_choices(list(trained.values()), pool)
found = data.studies().filter(pl.col("pool") == pool)
with st.expander("Launch an evaluation", expanded=found.height == 0):
    # the judge as the Score and Probes pages pick it (app/score_form.py): a configured endpoint (the
    # only way a key is sent), the bundled model, the simulated judge, or a typed endpoint without key;
    # app/evaluate_form.py turns the form into the run's arguments
    configured = judge_picker.configured_endpoints()
    provider = judge_picker.provider_radio("Evaluation judge", configured, key="eval_provider")
    with st.form("evaluate"):
        runs = st.multiselect("Training runs", offered, default=just_trained,      # the run just trained
                              format_func=lambda i: evaluate_form.trained_run_label(trained[i], pool))
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
            argv = evaluate_form.evaluate_argv(form, configured)
            st.success(f"Started evaluation run {data.launch_evaluation(argv, pool, study)}.")
        except UserError as exc:
            st.error(str(exc))
st.subheader("Evaluation runs")
runs_panel("evaluate", pool, limit=3, rerun_when_ended=True)    # live; the study below shows when one ends

if found.height == 0:
    st.info("No evaluation study for this pool yet.")
    st.stop()
a, b, c = st.columns(3)
study = a.selectbox("Study", found["study"].to_list())
boot = b.select_slider("Bootstrap resamples", [500, 2000, 10_000], 2000)
seed = c.number_input("Bootstrap seed", 0, 10_000, 0)
doc = data.contrasts(study, boot, int(seed))
if not doc["contrasts"]:
    st.info("Too few conditions or outcomes for a contrast yet.")
    st.stop()
table = pl.DataFrame(doc["contrasts"]).with_columns((pl.col("a") + " − " + pl.col("b")).alias("contrast"))
st.subheader("Contrasts (paired bootstrap, Holm within each judge)")
st.dataframe(**table_view(table.select("judge", "contrast", "diff", "lo", "hi", "p", "p_holm", "n_judges_agree")),
             hide_index=True)
st.altair_chart(evaluate_charts.contrast_forest(table), width="stretch")
with st.expander("Friedman, length- and markdown-adjusted contrasts, minimum detectable difference"):
    st.dataframe(**table_view(pl.DataFrame(doc["friedman"])), hide_index=True)
    if doc["adjusted"]:
        st.dataframe(**table_view(pl.DataFrame(doc["adjusted"]).drop("n_prompts", "sd_diff")), hide_index=True)
    st.dataframe(**table_view(pl.DataFrame(doc["mdd"]["contrasts"])), hide_index=True)
    for note in doc["notes"]:
        st.caption(note)

st.subheader("Prompt by prompt")
pick = st.selectbox("Contrast", table.rows(named=True), format_func=lambda r: f"{r['judge']}: {r['contrast']}")
diffs = data.prompt_differences(study, pick["judge"], pick["a"], pick["b"])
gens = data.study_generations(study)
k = max(1, min(3, diffs.height // 2))                      # best and worst never show the same prompt twice
for title, rows in (("Best for a", diffs.head(k)), ("Worst for a", diffs.tail(k).reverse())):
    st.markdown(f"**{title}**")
    for r in rows.iter_rows(named=True):
        g = gens.filter(pl.col("prompt_id") == r["prompt_id"]).sort("seed")
        with st.expander(f"{r['prompt_id']}: {pick['a']} {r['mean_a']:.2f} vs {pick['b']} {r['mean_b']:.2f}"):
            st.write(g["prompt"][0])
            answers = [(c, g.filter(pl.col("condition") == c)["answer"].first() or "") for c in (pick["a"], pick["b"])]
            for col, (label, text) in zip(st.columns(3), answers + [("reference-top answer", g["reference_answer"][0])]):
                col.caption(label)
                col.text(text)

a, b, c = st.columns(3)
a.download_button("Outcomes (JSONL)", data.study_outcomes(study).write_ndjson(), f"{study}-outcomes.jsonl")
b.download_button("Generations (JSONL)", gens.write_ndjson(), f"{study}-generations.jsonl")
c.download_button("Statistics (JSON)", json.dumps(doc, indent=2, default=str), f"{study}-contrasts.json")
