"""The Curate & Train page's preference pairs: what each format of the judge leaves as DPO pairs
and what it loses (ties, order flips, margin, one order only), as a bar chart per format and a
headline; the DPO run of the chosen cell, launched like the SFT runs; and the DPO runs' loss with
their reward margins beside it."""

from __future__ import annotations

import shlex

import altair as alt
import polars as pl
import streamlit as st

from app import data, url_state
from app.charts import WIDE, count_axis, row_axis, step_x
from audit import plural
from app.cli import command_line, request_for
from app.evaluate_form import trained_run_caption
from app.runs_panel import follow
from app.views.curate import curves
from ingest import UserError
from ingest.runs import RunRequest

OUTCOMES = {"pairs": "pairs", "tied": "tied", "flipped": "order flips", "below_margin": "below the margin",
            "one_order_only": "one order only"}
COLOURS = ["#2b8cbe", "#bdbdbd", "#d7301f", "#fdae61", "#756bb1"]


def headline(row: dict, both_orders: bool) -> str:
    """'tournament, both orders: 41 pairs; 37 lost to order flips' (with the other losses that occur)."""
    what = row["format"] + (", both orders" if both_orders and row["kind"] == "comparative" else "")
    lost = [f"{row[k]} lost to {OUTCOMES[k]}" if k == "flipped" else f"{row[k]} {OUTCOMES[k]}"
            for k in ("flipped", "tied", "below_margin", "one_order_only") if row[k]]
    return f"{what}: {plural(row['pairs'], 'pair')}" + ("; " + "; ".join(lost) if lost else "")


def losses_chart(table: pl.DataFrame) -> alt.Chart:
    """table as train.pair_table returns it -> per format (and decoding), stacked bars: pairs and each loss."""
    long = table.with_columns((pl.col("format") + " · " + pl.col("decoding")).alias("cell")).unpivot(
        index="cell", on=list(OUTCOMES), variable_name="outcome", value_name="n").with_columns(
        pl.col("outcome").replace(OUTCOMES))
    return alt.Chart(long.to_pandas()).mark_bar().encode(
        y=alt.Y("cell:N", axis=row_axis(), sort=None),     # every bar named, in full
        x=alt.X("n:Q", axis=count_axis("candidate pairs (pointwise: prompts)"), scale=alt.Scale(zero=True)),
        color=alt.Color("outcome:N", scale=alt.Scale(domain=list(OUTCOMES.values()), range=COLOURS), title=None,
                        legend=alt.Legend(orient="bottom", columns=3, labelLimit=0)),
        tooltip=["cell:N", "outcome:N", "n:Q"]).properties(**WIDE, height=alt.Step(28))


def dpo_request(pool: str, judge: str, fmt: str, decoding: str | None, min_margin: float, both_orders: bool,
                base: str, seed: int, hp: dict) -> RunRequest:
    """The `judgeaudit train --method dpo` request: pair the cell into the run folder, then train
    with the SFT run's hyper-parameters (max steps 0: by epochs)."""
    hp = {k: v for k, v in hp.items() if not (k == "max_steps" and not v)}
    return request_for("train", method="dpo", pool=pool, judge=judge, fmt=fmt, decoding=decoding,
                       min_margin=float(min_margin), both_orders=bool(both_orders), base=base, seed=seed, **hp)


def preference_pairs(pool: str, judge: str | None, fmt: str | None, decoding: str | None, base: str, seed: int,
                     hp: dict) -> RunRequest | None:
    """The pairs section, shown when the Train button trains DPO: losses per format, the chosen cell's
    headline, the DPO command and the DPO runs' curves. The DPO request the Train button launches, or
    None (no judge, no pairs, or a request the command would refuse)."""
    st.subheader("Preference pairs (DPO)")
    if not judge:
        st.info("Choose a judge above: its comparisons (or scores) become chosen/rejected pairs.")
        return None
    a, b = st.columns(2)
    margin = a.number_input("Min margin", 0.0, 100.0, 0.0, step=0.25, help="comparative: the verdict margin; "
                            "pointwise: the normalised score difference", key=url_state.MIN_MARGIN, bind="query-params")
    both = b.toggle("Both orders", help="comparative: only pairs judged in both orders that agree",
                    key=url_state.BOTH_ORDERS, bind="query-params")
    table = data.pair_table(pool, judge, margin, both, seed)
    if table.height == 0:
        st.info(f"No verdicts of {judge} in this pool to pair.")
        return None
    cell = table.filter(pl.col("format") == fmt) if fmt else table
    if cell.height:
        row = cell.filter(pl.col("decoding") == decoding).row(0, named=True) if decoding and \
            decoding in cell["decoding"].to_list() else cell.row(0, named=True)
        st.markdown(f"**{headline(row, both)}**")
    st.altair_chart(losses_chart(table), width="stretch")
    dpo_curves(pool)
    if not cell.height or not cell["pairs"].sum():
        st.warning("No pairs to train on in this cell: lower the margin, or pick another format.")
        return None
    try:
        request = dpo_request(pool, judge, fmt, decoding, margin, both, base, seed, hp)
    except UserError as exc:
        st.error(str(exc))
        return None
    st.code("judgeaudit " + shlex.join(command_line(request)), language="bash")
    return request


def dpo_curves(pool: str) -> None:
    """The DPO runs' loss, and their reward margins (chosen minus rejected) beside it; followed while
    a run is alive (app.runs_panel.follow)."""
    follow(data.runs_of("train", pool)[::-1][:12], _dpo_curves, f"dpo-{pool}")


def _dpo_curves(rows: list[dict]) -> None:
    frame = curves.dpo_curves(rows, lambda row: trained_run_caption(row, short=True))
    if not frame.height:
        return
    left, right = st.columns(2)
    for col, figure in ((left, "loss"), (right, "rewards/margins")):
        col.altair_chart(alt.Chart(frame.filter(pl.col("figure") == figure).to_pandas()).mark_line(point=True).encode(
            x=step_x(), y=alt.Y("value:Q", title=f"DPO {figure}", scale=alt.Scale(zero=False, padding=8)),
            color=alt.Color("run:N", legend=alt.Legend(orient="bottom", columns=1, labelLimit=0)),
            tooltip=["run:N", "step:Q", alt.Tooltip("value:Q", format=".4f")]).properties(**WIDE, height=220),
            width="stretch")
