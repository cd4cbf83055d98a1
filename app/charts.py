"""Altair charts and table styling for the dashboard: frames in, charts out (no metric math)."""

from __future__ import annotations

import altair as alt
import polars as pl

# for each diagnostic column: is bigger better?
BETTER = {"distinct": True, "tie_prob": False, "d1": True, "d2": True, "top_tied": False, "spearman": True,
          "tau_a": True, "tau_b": True, "somers_d": True, "top1_expected": True, "parse_rate": True}


def _tips(*fields: str) -> list[alt.Tooltip]:
    """Tooltips as channel objects: altair resolves shorthand strings against its JSON schema, which
    costs tens of milliseconds per chart."""
    return [alt.Tooltip(f) for f in fields]


def histograms(values: pl.DataFrame) -> alt.Chart:
    """values: format, s, n, mult5 -> one bar panel per format."""
    df = values.with_columns(pl.col("mult5").fill_null(False).alias("multiple_of_5")).to_pandas() \
        if values.height else values.to_pandas()
    base = alt.Chart(df).mark_bar(size=6).encode(
        x=alt.X("s:Q", title="normalised score", scale=alt.Scale(domain=[0, 1])),
        y=alt.Y("n:Q", title="candidates"),
        color=alt.Color("multiple_of_5:N", title="multiple of 5 (0-100)",
                        scale=alt.Scale(domain=[False, True], range=["#9ecae1", "#08519c"])),
        tooltip=_tips("format:N", "s:Q", "n:Q"))
    return base.properties(width=220, height=160).facet(facet=alt.Facet("format:N", title=None), columns=3) \
        .resolve_scale(y="independent")


def mark_best(cells: pl.DataFrame) -> pl.DataFrame:
    """The diagnostics table with a ★ on each judge's best format per column."""
    out = cells
    for col, bigger in BETTER.items():
        best = (pl.col(col).max() if bigger else pl.col(col).min()).over("judge")
        out = out.with_columns(
            pl.when(pl.col(col).is_not_null() & (pl.col(col) == best))
            .then(pl.col(col).round(4).cast(pl.String) + " ★")
            .otherwise(pl.col(col).round(4).cast(pl.String)).alias(col))
    return out


def level_bars(cells: pl.DataFrame) -> alt.Chart:
    """Tie probability and top-tied share (0-1), and D1/D2 against the nominal number of levels."""
    long = cells.select("format", "tie_prob", "top_tied").unpivot(index="format", variable_name="metric")
    ties = alt.Chart(long.to_pandas()).mark_bar().encode(
        x=alt.X("format:N", title=None), xOffset=alt.XOffset("metric:N"), y=alt.Y("value:Q", title="share"),
        color=alt.Color("metric:N"), tooltip=_tips("format:N", "metric:N", "value:Q")
    ).properties(height=220, title="ties")
    levels = cells.select("format", "d1", "d2", pl.col("nominal_levels").cast(pl.Float64)) \
        .unpivot(index="format", variable_name="metric")
    lv = alt.Chart(levels.to_pandas()).mark_bar().encode(
        x=alt.X("format:N", title=None), xOffset=alt.XOffset("metric:N"),
        y=alt.Y("value:Q", title="levels", scale=alt.Scale(type="symlog")),
        color=alt.Color("metric:N"), tooltip=_tips("format:N", "metric:N", "value:Q")
    ).properties(height=220, title="effective vs nominal levels")
    return alt.vconcat(ties, lv).resolve_scale(color="independent")


def agreement_bars(cells: pl.DataFrame) -> alt.Chart:
    long = cells.select("format", "tau_a", "tau_b", "top1_expected", "top1_uniform") \
        .unpivot(index="format", variable_name="metric")
    return alt.Chart(long.to_pandas()).mark_bar().encode(
        x=alt.X("format:N", title=None), xOffset=alt.XOffset("metric:N"), y=alt.Y("value:Q", title="agreement"),
        color=alt.Color("metric:N"), tooltip=_tips("format:N", "metric:N", "value:Q")).properties(height=460)


def interval_chart(frame: pl.DataFrame, est: str, lo: str, hi: str, title: str) -> alt.Chart:
    df = frame.with_columns((pl.col("judge") + " / " + pl.col("format")).alias("cell")).to_pandas()
    points = alt.Chart(df).mark_point(filled=True, size=60).encode(
        y=alt.Y("cell:N", title=None), x=alt.X(f"{est}:Q", title=title),
        tooltip=_tips("cell:N", f"{est}:Q", f"{lo}:Q", f"{hi}:Q"))
    bars = alt.Chart(df).mark_rule().encode(y=alt.Y("cell:N"), x=alt.X(f"{lo}:Q"), x2=alt.X2(f"{hi}:Q"))
    zero = alt.Chart(pl.DataFrame({"x": [0.0]}).to_pandas()).mark_rule(strokeDash=[4, 4], color="gray") \
        .encode(x=alt.X("x:Q"))
    return (bars + points + zero).properties(height=max(120, 24 * len(df)))


def scatter(frame: pl.DataFrame, x: str, y: str, color: str) -> alt.Chart:
    return alt.Chart(frame.to_pandas()).mark_circle(opacity=0.5).encode(
        x=alt.X(f"{x}:Q"), y=alt.Y(f"{y}:Q"), color=alt.Color(f"{color}:N"),
        tooltip=_tips(f"{color}:N", f"{x}:Q", f"{y}:Q")).properties(height=300)


def share_bars(frame: pl.DataFrame) -> alt.Chart:
    long = frame.select("metric", "share_format", "share_judge", "share_residual") \
        .unpivot(index="metric", variable_name="source")
    return alt.Chart(long.to_pandas()).mark_bar().encode(
        y=alt.Y("metric:N", title=None), x=alt.X("value:Q", stack="normalize", title="share of variance"),
        color=alt.Color("source:N"), tooltip=_tips("metric:N", "source:N", "value:Q")).properties(height=320)
