"""Curate & Train: the paper's selection rule (or a baseline) previewed, then LoRA fine-tunes as
background runs (a single run or a grid), with progress, losses and Stop & save."""

import shlex

import polars as pl
import streamlit as st

from app import data, url_state
from app.cli import command_line
from app.runs_panel import runs_panel
from audit import plural
from app.views.curate import distil, form as tf
from app.views.curate.preview import curation_preview
from app.views.curate.pairs import preference_pairs
from app.views.curate.training import hyper_parameters, training_curves
from ingest import UserError

pool = data.page_pool("Curate & Train")
scores = data.result("scored_cells", pool)   # the cells from their counts, stored; the preview too
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
if st.session_state.get(url_state.CURATE_DECODING) not in (None, *modes):
    st.session_state.pop(url_state.CURATE_DECODING)
decoding = c.selectbox("Decoding", modes, disabled=policy != "judge", key=url_state.CURATE_DECODING,
                       bind="query-params") if len(modes) > 1 else None
rate = d.select_slider("Rate", [0.05, 0.1, 0.25, 0.5, 0.75, 1.0], value=0.25, disabled=policy == "full",
                       key=url_state.RATE, bind="query-params")
seeds = e.multiselect("Seeds", list(range(10)), default=[0], key=url_state.SEEDS, bind="query-params")
seed = seeds[0] if seeds else 0
if not judges:
    st.info("No scores in this pool yet: score it first to curate by a judge; the baselines work now.")
if policy == "judge" and not judge:
    st.stop()
curation_preview(pool, cell, policy, judge, fmt, decoding, rate, seed, scores)

st.subheader("Train")
base, hp = hyper_parameters(pool)
method = st.radio("Method", ["sft", "dpo"], horizontal=True, key=url_state.METHOD, bind="query-params", format_func={
    "sft": "SFT on the subset above", "dpo": "DPO on the judge's preference pairs"}.get)
if method == "dpo":   # the same Train button launches it
    request = preference_pairs(pool, judge, fmt, decoding, base, seed, hp)
else:
    try:    # a request `judgeaudit train` would refuse (e.g. a decoding it does not curate by) says why
        request = tf.train_request(pool, tf.curation_options(policy, judge, fmt, decoding, rate), base, seed, hp)
        st.code("judgeaudit " + shlex.join(command_line(request)), language="bash")
    except UserError as exc:
        request = None
        st.error(str(exc))
grid_fmts = st.multiselect("Grid formats", sorted(cell["format"].unique().to_list()) if judge else [],
                           key=url_state.GRID_FORMATS, bind="query-params")
grid_rates = st.multiselect("Grid rates", [0.05, 0.1, 0.25, 0.5], default=[0.1, 0.25], key=url_state.GRID_RATES,
                            bind="query-params")
go, go_grid = st.columns(2)
try:
    grid = tf.grid_requests(pool, judge, grid_fmts, decoding, grid_rates, seeds or [0], base, hp) \
        if judge and method == "sft" else []
    if go.button("Train", type="primary", icon=":material/model_training:", disabled=request is None):
        st.success(f"Started run {data.launch_run(request, pool=pool, queue='train')}: it goes on if "
                   "this page is closed; runs of the train queue take turns.")
    if go_grid.button(f"Train the grid ({plural(len(grid), 'run')})", disabled=not grid):
        ids = [data.launch_run(r, pool=pool, queue="train") for r in grid]
        st.success(f"Queued runs {ids[0]}-{ids[-1]}.")
except UserError as exc:
    st.error(str(exc))

training_curves(pool)     # under its subheader, Runs
runs_panel("train", pool)
distil.distil_section(pool, scores)      # a section of its own: train a student from a cell, audit it
