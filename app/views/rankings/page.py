"""Rankings: Bradley-Terry strengths per (judge, comparative format), from both orders next to the
single (forward) order, so what slot bias does to a leaderboard is visible."""

import polars as pl
import streamlit as st

from app import charts_trust, data, judge_picker, tables, url_state
from app.placeholders import placeholder_warning
from app.views.rankings.style_section import style_section

pool = data.page_pool("Rankings")
left, right = st.columns([2, 1])
by = left.radio("Rank", ["candidate_id", "prompt"], horizontal=True,
                format_func={"candidate_id": "systems across the pool (a candidate_id is a system)",
                             "prompt": "candidates within a prompt"}.get)
n_boot = right.select_slider("Bootstrap resamples", [0, 100, 200, 500, 1000], value=100,
                             help="100 on first view (a large pool opens in seconds); 1,000 for the numbers you "
                                  "report. 0: strengths and ranks only, no intervals")
frame = data.result("rank", pool, by, n_boot)
if frame.height == 0:
    st.info("No parsed comparative verdicts in this pool: score it with a comparative format "
            "(tournament, anchored, or your own) to rank.")
    st.stop()
placeholder_warning(pool, "rankings")
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
tables.show(moved.select("id", "rank", "rank_single", "shift", "strength", "lo", "hi", "games", "wins").sort("rank"))

st.subheader("Style control")
if by != "candidate_id":
    st.caption("Style control ranks systems across the pool: choose 'systems across the pool' above.")
    st.stop()
style_section(pool, (judge, fmt, decoding), n_boot)
