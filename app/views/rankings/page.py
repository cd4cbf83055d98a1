"""Rankings: Bradley-Terry strengths per (judge, comparative format), from both orders next to the
single (forward) order, so what slot bias does to a leaderboard is visible."""

import polars as pl
import streamlit as st

from app import charts_trust, data, judge_picker, url_state
from app.views.rankings import style_charts
from app.reading import table_view

pool = data.page_pool("Rankings")
left, right = st.columns([2, 1])
by = left.radio("Rank", ["candidate_id", "prompt"], horizontal=True,
                format_func={"candidate_id": "systems across the pool (a candidate_id is a system)",
                             "prompt": "candidates within a prompt"}.get)
n_boot = right.select_slider("Bootstrap resamples", [0, 100, 200, 500, 1000], value=1000 if by == "candidate_id" else 200,
                             help="0: strengths and ranks only (fast on large pools), no intervals")
frame = data.rank(pool, by, n_boot)
if frame.height == 0:
    st.info("No parsed comparative verdicts in this pool: score it with a comparative format "
            "(tournament, anchored, or your own) to rank.")
    st.stop()
st.caption("Strength = log p from the Bradley-Terry MM fit (ties half a win each), centred to mean 0; "
           "bars: 95% bootstrap interval over prompts (over calls when ranking within a prompt). "
           "Single order uses only the calls in the forward orientation (earlier-listed candidate in slot A).")

cells = frame.select("judge", "format", "decoding").unique().sort("judge", "format", "decoding")
names = [" / ".join(r) for r in cells.iter_rows()]
pick = judge_picker.judge_select(st, "Judge / format / decoding", names, url_state.RANKINGS_CELL)   # in the address
judge, fmt, decoding = cells.row(names.index(pick))
cell = frame.filter((pl.col("judge") == judge) & (pl.col("format") == fmt) & (pl.col("decoding") == decoding))
if by == "prompt":
    prompts = cell["prompt_id"].unique(maintain_order=True).to_list()
    prompt = st.selectbox(f"Prompt ({len(prompts)})", prompts)
    cell = cell.filter(pl.col("prompt_id") == prompt)

both, single = (cell.filter(pl.col("order") == o) for o in ("both", "single"))
a, b, c, d = st.columns(4)
a.metric("items ranked", both.height)
b.metric("calls (both orders)", int(both["n_calls"].max() or 0))
c.metric("calls (single order)", int(single["n_calls"].max() or 0) if single.height else 0)
moved = both.join(single.select("id", pl.col("rank").alias("rank_single")), on="id", how="left") \
    .with_columns((pl.col("rank_single") - pl.col("rank")).alias("shift"))
d.metric("rank changes from slot bias", int((moved["shift"].fill_null(0) != 0).sum()))
if (both["prior"] > 0).any():
    st.caption("Some item never lost or never won here, so the plain maximum-likelihood strengths do not exist: "
               "each pair that met got half a virtual tie game (`prior`).")
st.altair_chart(charts_trust.strength_forest(cell), width="stretch")
st.dataframe(**table_view(moved.select("id", "rank", "rank_single", "shift", "strength", "lo", "hi", "games", "wins")
                         .sort("rank")), hide_index=True, width="stretch")

st.subheader("Style control")
if by != "candidate_id":
    st.caption("Style control ranks systems across the pool: choose 'systems across the pool' above.")
    st.stop()
scell = data.style_rank(pool, n_boot, 0, (judge, fmt, decoding))     # the chosen cell alone: seconds, not all cells
if scell.height == 0:
    st.info("No parsed comparative call between two different systems in this cell.")
    st.stop()
st.caption("Bradley-Terry over systems fitted jointly with the style of each comparison (A minus B: length, "
           "and the density of headers, list items and bold), each feature standardised: a coefficient is the "
           "change in log-odds of preferring slot A per sd of the feature, with a 95% bootstrap interval over "
           "prompts. Human labels on the same pairs get the same fit.")
st.markdown("  \n".join(style_charts.style_sentences(scell)))
if not scell.filter(pl.col("part") == "coefficient")["converged"].all():
    st.stop()
left, right = st.columns([3, 2])
left.altair_chart(style_charts.coefficient_forest(scell), width="stretch")
right.altair_chart(style_charts.rank_moves(scell), width="stretch")
st.dataframe(style_charts.systems_table(scell).with_columns(pl.selectors.float().round(3)), hide_index=True, width="stretch")
st.dataframe(style_charts.coefficient_table(scell).with_columns(pl.selectors.float().round(3)), hide_index=True, width="stretch")
