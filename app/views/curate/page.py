"""Curate & Train: the paper's selection rule (or a baseline) previewed, then LoRA fine-tunes as
background runs (a single run or a grid), with progress, losses and Stop & save."""

import shlex

import polars as pl
import streamlit as st

from app import data, url_state
from app.views.curate import form as tf
from app.evaluate_form import trained_run_label
from app.reading import table_view
from app.runs_panel import runs_panel
from ingest import UserError

pool = data.page_pool("Curate & Train")
scores = data.candidate_scores(pool)
a, b, c, d, e = st.columns([1, 1, 1, 1, 1])
policy = a.selectbox("Policy", ["judge", "random", "length", "full"], index=0 if scores.height else 1,
                     format_func={"judge": "judge × format", "random": "random", "length": "longest",
                                  "full": "full (reference-top)"}.get, key=url_state.POLICY, bind="query-params")
judges = sorted(scores["judge"].unique().to_list())
judge = b.selectbox("Judge", judges, disabled=policy != "judge", key=url_state.JUDGE,
                    bind="query-params") if judges else None        # judge, format, preset, steps: in the URL
cell = scores.filter(pl.col("judge") == judge) if judge else scores
fmts = sorted(cell["format"].unique().to_list())
if st.session_state.get(url_state.FORMAT) not in fmts:   # e.g. none chosen while the pool had no scores
    st.session_state.pop(url_state.FORMAT, None)
fmt = c.selectbox("Format", fmts, disabled=policy != "judge", key=url_state.FORMAT, bind="query-params")
modes = sorted(cell.filter(pl.col("format") == fmt)["decoding"].unique().to_list()) if fmt else []
decoding = c.selectbox("Decoding", modes, disabled=policy != "judge") if len(modes) > 1 else None
rate = d.select_slider("Rate", [0.05, 0.1, 0.25, 0.5, 0.75, 1.0], value=0.25, disabled=policy == "full",
                       key=url_state.RATE, bind="query-params")
seeds = e.multiselect("Seeds", list(range(10)), default=[0], key=url_state.SEEDS, bind="query-params")
seed = seeds[0] if seeds else 0
if not judges:
    st.info("No scores in this pool yet: score it first to curate by a judge; the baselines work now.")
if policy == "judge" and not judge:
    st.stop()
picks, s = data.curation(pool, policy, judge, fmt, decoding, rate, seed)
m = st.columns(4)
m[0].metric("Eligible prompts", s["n_eligible"], help=f"{s['n_heldout_prompts']} held-out prompts never selected")
m[1].metric("Selected", s["n_selected"])
m[2].metric("Tie-broken picks", f"{s['n_tie_broken'] / max(s['n_selected'], 1):.0%}",
            help=f"{s['n_pick_tied']} within a prompt, {s['n_cut_tied']} at the cut: coin flips, not quality")
m[3].metric("Cut", "n/a" if s["cut_value"] is None else f"{s['cut_value']:.3g}")
left, right = st.columns(2)
left.altair_chart(tf.cut_histogram(picks, s["cut_value"], "selecting value (score, length or reference)"),
                  width="stretch")
chars = data.pool_candidates(pool).select(pl.int_range(pl.len()).alias("cand_idx"), pl.col("response_chars").alias("chars"))
right.altair_chart(tf.length_chart(picks.join(chars, on="cand_idx").select(
    pl.when("kept").then(pl.lit("kept")).otherwise(pl.lit("dropped")).alias("set"), "chars")), width="stretch")
with st.expander("Kept and dropped examples at the cut, side by side"):
    for col, part in zip(st.columns(2), (picks.filter("kept").tail(3), picks.filter(~pl.col("kept")).head(3))):
        col.dataframe(data.candidate_texts(pool, part["cand_idx"].to_list()).select("prompt_id", "prompt", "response")
                      .with_columns(part["value"].alias("value")), hide_index=True)
if policy == "judge" and cell["format"].n_unique() > 1:
    fmts = sorted(cell["format"].unique().to_list())
    st.caption("Overlap of the selected examples between formats (Jaccard), at each rate")
    st.dataframe(**table_view(data.curation_overlap(pool, judge, fmts, decoding, [0.1, 0.25, 0.5], seed)),
                 hide_index=True)

st.subheader("Train")
bases = data.base_models()
a, b, c = st.columns(3)
base = a.selectbox("Base model", list(bases))
preset = tf.PRESETS[b.radio("Preset", list(tf.PRESETS), horizontal=True, help="quick: a few minutes on 2 CPU cores",
                            key=url_state.PRESET, bind="query-params", on_change=lambda: st.session_state.update(
                                {url_state.STEPS: tf.PRESETS[st.session_state[url_state.PRESET]]["max_steps"]}))]
hp = {"max_steps": c.number_input("Max steps (0: epochs)", 0, 100_000, preset["max_steps"], key=url_state.STEPS,
                                  bind="query-params")}
cols = st.columns(4)
for i, key in enumerate(["epochs", "learning_rate", "batch_size", "micro_batch_size", "lora_r", "lora_alpha",
                         "lora_dropout", "max_length"]):
    hp[key] = cols[i % 4].number_input(key.replace("_", " "), value=preset[key],
                                       format="%g" if isinstance(preset[key], float) else "%d")
argv = tf.train_argv(pool, tf.curation_args(policy, judge, fmt, decoding, rate), bases[base], seed, hp)
st.code("judgeaudit " + shlex.join(argv), language="bash")
grid_fmts = st.multiselect("Grid formats", sorted(cell["format"].unique().to_list()) if judge else [])
grid_rates = st.multiselect("Grid rates", [0.05, 0.1, 0.25, 0.5], default=[0.1, 0.25])
grid = tf.grid_argvs(pool, judge, grid_fmts, decoding, grid_rates, seeds or [0], bases[base], hp) if judge else []
go, go_grid = st.columns(2)
try:
    if go.button("Train", type="primary", icon=":material/model_training:"):
        st.success(f"Started run {data.launch_run('train', argv, pool=pool, queue='train')}: it goes on if "
                   "this page is closed; runs of the train queue take turns.")
    if go_grid.button(f"Train the grid ({len(grid)} runs)", disabled=not grid):
        ids = [data.launch_run("train", g, pool=pool, queue="train") for g in grid]
        st.success(f"Queued runs {ids[0]}-{ids[-1]}.")
except UserError as exc:
    st.error(str(exc))


@st.fragment(run_every=2.0)
def curves() -> None:
    rows = data.runs_of("train", pool)[::-1][:12]
    frame = data.train_curves(rows, lambda row: trained_run_label(row, short=True))
    if frame.height:
        st.altair_chart(tf.loss_chart(frame), width="stretch")
    done = tf.finished_runs(rows, {r["run_id"]: data.train_outcome(r) for r in rows if r["status"] in
                                   ("finished", "cancelled")}, frame)
    if done.height:
        st.caption("Finished runs: the final losses and the folder of each saved adapter; evaluate them against "
                   "the base model on held-out prompts.")
        st.dataframe(done, hide_index=True, width="stretch")
        st.page_link("views/evaluate/page.py", label="Evaluate the adapters", icon=":material/leaderboard:")


st.subheader("Runs")
curves()
runs_panel("train", pool)
