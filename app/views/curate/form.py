"""The Curate & Train page's pieces that are not widgets: the `judgeaudit train` request of one run
or of a grid, run labels, and the charts (frames in, charts out). The presets come from `train`."""

from __future__ import annotations

import altair as alt
import polars as pl

from app.charts import WIDE, bin_x, count_y, step_x
from app.cli import request_for
from app.evaluate_form import trained_run_caption
from ingest.runs import RunRequest
from train import PRESETS      # noqa: F401 (the page's presets by name, quick and paper: train defines them)


def curation_options(policy: str, judge: str | None, fmt: str | None, decoding: str | None, rate: float) -> dict:
    """The curation part of a `judgeaudit train` request: the policy, and the judge's cell and the
    rate where they apply."""
    options = {"policy": policy}
    if policy == "judge":
        options |= {"judge": judge, "fmt": fmt, "decoding": decoding}
    return options | ({"rate": rate} if policy != "full" else {})


def train_request(pool: str, curation: dict, base: str, seed: int, hp: dict) -> RunRequest:
    """The `judgeaudit train` request: curate from the pool into the run folder, then train; max
    steps 0 trains by epochs."""
    hp = {k: v for k, v in hp.items() if not (k == "max_steps" and not v)}
    return request_for("train", pool=pool, **curation, base=base, seed=seed, **hp)


def grid_requests(pool: str, judge: str, formats: list[str], decoding: str | None, rates: list[float],
                  seeds: list[int], base: str, hp: dict) -> list[RunRequest]:
    """Formats x rates x seeds, plus the random and length baselines at each rate and full, per seed."""
    out = []
    for seed in seeds:
        for rate in rates:
            out += [train_request(pool, curation_options("judge", judge, f, decoding, rate), base, seed, hp)
                    for f in formats]
            out += [train_request(pool, curation_options(p, None, None, None, rate), base, seed, hp)
                    for p in ("random", "length")]
        out.append(train_request(pool, curation_options("full", None, None, None, 1.0), base, seed, hp))
    return out


SET_SCALE = alt.Scale(domain=["kept", "dropped"], range=["#2b8cbe", "#bdbdbd"])   # one colour per set, every chart


def binned_chart(bins: pl.DataFrame, title: str, cut: float | None = None, stacked: bool = True) -> alt.Chart:
    """bins: set (kept | dropped), lo, hi, n (train.curation_view.bins) -> bars of prompts per bin, the
    cut marked when given: histograms drawn from counts (flat in the pool's size)."""
    bars = alt.Chart(bins.to_pandas()).mark_bar(opacity=0.8 if stacked else 0.7).encode(
        x=bin_x("lo:Q", title), x2="hi:Q", y=count_y("n:Q", "prompts", stack=True if stacked else None),
        color=alt.Color("set:N", scale=SET_SCALE, title="set"))
    if cut is None:
        return bars.properties(**WIDE, height=220)
    rule = alt.Chart(pl.DataFrame({"cut": [cut]}).to_pandas()).mark_rule(color="#d7301f", strokeWidth=2).encode(
        x="cut:Q")
    return (bars + rule).properties(**WIDE, height=220)


def loss_chart(curves: pl.DataFrame) -> alt.Chart:
    """curves: run, step, loss, kind (train | eval) -> one line per run and kind: train solid with
    dots, eval dashed with squares; whole steps on the x axis."""
    kinds = alt.Scale(domain=["train", "eval"])
    return alt.Chart(curves.to_pandas()).mark_line(point=True).encode(
        x=step_x(), y=alt.Y("loss:Q", scale=alt.Scale(zero=False, padding=8)),
        color=alt.Color("run:N", legend=alt.Legend(orient="bottom", columns=1, labelLimit=0)),
        strokeDash=alt.StrokeDash("kind:N", scale=alt.Scale(domain=["train", "eval"], range=[[1, 0], [6, 4]]),
                                  title="loss on"),
        shape=alt.Shape("kind:N", scale=kinds.copy(), title="loss on"),
        tooltip=[alt.Tooltip("run:N"), alt.Tooltip("kind:N", title="loss on"), alt.Tooltip("step:Q", format="d"),
                 alt.Tooltip("loss:Q", format=".4f")]
    ).properties(**WIDE, height=260)


def finished_runs(rows: list[dict], outcomes: dict) -> pl.DataFrame:
    """One row per training run that ended with a saved adapter: run (trained_run_caption, short),
    status, steps, last train loss (the last logged step's: the run card's), final eval loss, adapter folder.
    outcomes: run_id -> app.run_card.train_outcome."""
    out = []
    for row in rows:
        done = outcomes.get(row["run_id"])
        if not done:
            continue
        caption = trained_run_caption(row, short=True)
        out.append({"run": caption, "status": done["status"], "steps": done["steps"],
                    "last train loss": done["train_loss"],         # the card's: the last logged step's
                    "final eval loss": done["eval_loss"], "adapter folder": done["adapter"]})
    return pl.DataFrame(out, schema={"run": pl.String, "status": pl.String, "steps": pl.Int64,
                                     "last train loss": pl.Float64, "final eval loss": pl.Float64,
                                     "adapter folder": pl.String})
