"""The Judges page's helpers: the leaderboard as the page's table (a missing value is "–", its reason
in the `why –` column) and the chart of agreement with humans against cost per 1,000 verdicts, the
Pareto front marked. Frames in, a frame or an altair chart out; no metric math."""

from __future__ import annotations

import altair as alt
import polars as pl

from app.charts import WIDE

SHOWN = ["judge", "format", "decoding", "aggregate", "members", "n_verdicts", "parse_rate", "agreement", "kappa",
         "kappa_lo", "kappa_hi", "ece", "b", "length_excess", "flip_rate", "tokens_in", "tokens_out", "cost_usd",
         "cost_per_1000", "latency_ms_p50", "latency_ms_p95", "effective_labels", "on_front"]
REASON_CAPTIONS = {"agreement": "agreement, kappa", "ece": "ECE", "b": "b", "length_excess": "length excess",
                 "flip_rate": "flip rate", "tokens": "tokens", "cost_usd": "cost", "latency": "latency",
                 "effective_labels": "effective labels"}


def why_missing(reasons: dict | None) -> str:
    """One line of the reasons a row's values are missing: "cost: no prices; flip rate: no repeats"."""
    return "; ".join(f"{REASON_CAPTIONS[k]}: {v}" for k, v in (reasons or {}).items() if v)


def board_table(board: pl.DataFrame) -> pl.DataFrame:
    """The leaderboard's columns for the page, members as "a, b, c", with `why –` last."""
    return board.select(*SHOWN, pl.col("reasons").map_elements(why_missing, return_dtype=pl.String).alias("why –")) \
        .with_columns(pl.col("members").list.join(", "))


def front_reasons(board: pl.DataFrame) -> list[str]:
    """Why cells are off the chart (no agreement with humans, or no cost), each reason once with its count."""
    off = board.filter(pl.col("agreement").is_null() | pl.col("cost_per_1000").is_null())
    counts: dict[str, int] = {}
    for r in off.to_dicts():
        why = r["reasons"]["agreement"] if r["agreement"] is None else r["reasons"]["tokens"] or r["reasons"]["cost_usd"]
        counts[why] = counts.get(why, 0) + 1
    return [f"{n} cell{'s' if n > 1 else ''}: {why}" for why, n in counts.items()]


def front_chart(board: pl.DataFrame) -> alt.Chart | None:
    """Agreement with humans (y) against cost per 1,000 verdicts (x), one point per cell with both, a
    jury drawn as a diamond; the Pareto front joined by a line. None when no cell has both."""
    df = board.filter(pl.col("agreement").is_not_null() & pl.col("cost_per_1000").is_not_null()).select(
        (pl.col("judge") + " / " + pl.col("format") + " / " + pl.col("decoding")).alias("cell"), "aggregate",
        "agreement", "kappa", "cost_per_1000", pl.when("on_front").then(pl.lit("on the front"))
        .otherwise(pl.lit("dominated")).alias("front"))
    if df.height == 0:
        return None
    x = alt.X("cost_per_1000:Q", title="cost per 1,000 verdicts (USD)")
    y = alt.Y("agreement:Q", title="agreement with humans", scale=alt.Scale(zero=False))
    tips = ["cell:N", "aggregate:N", alt.Tooltip("agreement:Q", format=".3f"), alt.Tooltip("kappa:Q", format=".3f"),
            alt.Tooltip("cost_per_1000:Q", format=".4f"), "front:N"]
    points = alt.Chart().mark_point(filled=True, size=90).encode(
        x=x, y=y, color=alt.Color("front:N", scale=alt.Scale(domain=["on the front", "dominated"],
                                                              range=["#d62728", "#9e9e9e"]),
                                    legend=alt.Legend(orient="bottom", title=None)),
        shape=alt.Shape("aggregate:N", legend=alt.Legend(orient="bottom", title=None)), tooltip=tips)
    line = alt.Chart().transform_filter(alt.datum.front == "on the front").mark_line(strokeDash=[4, 3],
                                                                                     color="#d62728").encode(
        x=x, y=y, order="cost_per_1000:Q")
    return alt.layer(line, points, data=df.to_pandas()).properties(**WIDE, height=360)


def jury_size_lines(sizes: pl.DataFrame) -> list[str]:
    """One line per jury cell: how many independent judges it is worth, with what that rests on."""
    out = []
    for r in sizes.to_dicts():
        cell = f"**{r['judge']}** / {r['format']} / {r['decoding']}"
        what = ("their errors against human labels" if r["basis"] == "errors" else "their scores (too few labels)")
        if r["effective_members"] is None:
            out.append(f"{cell}: its {r['m']} members' correlation is undefined on {r['n']} items: no effective size")
            continue
        out.append(f"{cell}: worth {r['effective_members']:.1f} independent judges of its {r['m']} "
                   f"(mean correlation of {what} {r['mean_correlation']:.2f}, n = {r['n']} items)")
    return out
