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


def _modes(frame: pl.DataFrame) -> int:
    return frame["decoding"].n_unique() if "decoding" in frame.columns and frame.height else 1


def cell_labels(cells: pl.DataFrame) -> pl.DataFrame:
    """Adds `cell`: the format, and its decoding mode when the frame holds more than one, so the
    two modes of one format stand side by side on a chart's axis."""
    if _modes(cells) > 1:
        return cells.with_columns((pl.col("format") + " · " + pl.col("decoding")).alias("cell"))
    return cells.with_columns(pl.col("format").alias("cell"))


def histograms(values: pl.DataFrame) -> alt.Chart:
    """values: format, [decoding,] s, n, mult5 -> one bar panel per format; with two decoding
    modes, one row of panels per mode (each format's two modes one above the other)."""
    df = values.with_columns(pl.col("mult5").fill_null(False).alias("multiple_of_5")).to_pandas() \
        if values.height else values.to_pandas()
    base = alt.Chart(df).mark_bar(size=6).encode(
        x=alt.X("s:Q", title="normalised score", scale=alt.Scale(domain=[0, 1])),
        y=alt.Y("n:Q", title="candidates"),
        color=alt.Color("multiple_of_5:N", title="multiple of 5 (0-100)",
                        scale=alt.Scale(domain=[False, True], range=["#9ecae1", "#08519c"])),
        tooltip=_tips("format:N", "s:Q", "n:Q"))
    if _modes(values) > 1:
        return base.properties(width=160, height=130).facet(
            column=alt.Column("format:N", title=None), row=alt.Row("decoding:N", title="decoding")) \
            .resolve_scale(y="independent")
    return base.properties(width=220, height=160).facet(facet=alt.Facet("format:N", title=None), columns=3) \
        .resolve_scale(y="independent")


def mark_best(cells: pl.DataFrame) -> pl.DataFrame:
    """The diagnostics table with a ★ on each judge's best cell per column (within one kind of
    score: label and expected scores are not ranked against each other)."""
    out = cells
    group = ["judge", "score"] if "score" in cells.columns else ["judge"]
    for col, bigger in BETTER.items():
        best = (pl.col(col).max() if bigger else pl.col(col).min()).over(group)
        out = out.with_columns(
            pl.when(pl.col(col).is_not_null() & (pl.col(col) == best))
            .then(pl.col(col).round(4).cast(pl.String) + " ★")
            .otherwise(pl.col(col).round(4).cast(pl.String)).alias(col))
    return out


def level_bars(cells: pl.DataFrame) -> alt.Chart:
    """Tie probability and top-tied share (0-1), and D1/D2 against the nominal number of levels,
    per format (and decoding mode, when there are two)."""
    cells = cell_labels(cells)
    long = cells.select("cell", "tie_prob", "top_tied").unpivot(index="cell", variable_name="metric")
    ties = alt.Chart(long.to_pandas()).mark_bar().encode(
        x=alt.X("cell:N", title=None), xOffset=alt.XOffset("metric:N"), y=alt.Y("value:Q", title="share"),
        color=alt.Color("metric:N"), tooltip=_tips("cell:N", "metric:N", "value:Q")
    ).properties(height=220, title="ties")
    levels = cells.select("cell", "d1", "d2", pl.col("nominal_levels").cast(pl.Float64)) \
        .unpivot(index="cell", variable_name="metric")
    lv = alt.Chart(levels.to_pandas()).mark_bar().encode(
        x=alt.X("cell:N", title=None), xOffset=alt.XOffset("metric:N"),
        y=alt.Y("value:Q", title="levels", scale=alt.Scale(type="symlog")),
        color=alt.Color("metric:N"), tooltip=_tips("cell:N", "metric:N", "value:Q")
    ).properties(height=220, title="effective vs nominal levels")
    return alt.vconcat(ties, lv).resolve_scale(color="independent")


def agreement_bars(cells: pl.DataFrame) -> alt.Chart:
    long = cell_labels(cells).select("cell", "tau_a", "tau_b", "top1_expected", "top1_uniform") \
        .unpivot(index="cell", variable_name="metric")
    return alt.Chart(long.to_pandas()).mark_bar().encode(
        x=alt.X("cell:N", title=None), xOffset=alt.XOffset("metric:N"), y=alt.Y("value:Q", title="agreement"),
        color=alt.Color("metric:N"), tooltip=_tips("cell:N", "metric:N", "value:Q")).properties(height=460)


def interval_chart(frame: pl.DataFrame, est: str, lo: str, hi: str, title: str) -> alt.Chart:
    label = pl.col("judge") + " / " + pl.col("format")
    if "decoding" in frame.columns and frame["decoding"].n_unique() > 1:
        label = label + " / " + pl.col("decoding")
    df = frame.with_columns(label.alias("cell")).to_pandas()
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


# the Overview's grid: (column, title, is bigger better); the colour runs from worse to better
GRID_METRICS = (("parse_rate", "parse rate", True), ("top_tied", "top tied (share of prompts)", False),
                ("d2", "effective levels D2", True), ("tie_prob", "tie probability", False),
                ("tau_a", "τa vs reference", True), ("top1_expected", "top-1 (expected)", True))


def diagnostic_grid(cells: pl.DataFrame, metrics=GRID_METRICS) -> alt.Chart:
    """Small multiples: one judges × formats heatmap per diagnostic, each with its own colour
    scale (darker = better) and the value written in each cell."""
    labelled = cell_labels(cells).sort("format", "decoding")
    df = labelled.to_pandas()
    # every panel shows every cell and judge, even where its value is undefined (an empty square)
    x = alt.X("cell:N", title=None, scale=alt.Scale(domain=labelled["cell"].unique(maintain_order=True).to_list()),
              axis=alt.Axis(labelAngle=-40, labelLimit=200, labelOverlap=False))
    y = alt.Y("judge:N", title=None, scale=alt.Scale(domain=sorted(labelled["judge"].unique().to_list())),
              axis=alt.Axis(labelLimit=220))
    charts = []
    for col, title, bigger in metrics:
        base = alt.Chart(df).encode(x=x, y=y)
        heat = base.mark_rect().encode(
            color=alt.Color(f"{col}:Q", title=None, scale=alt.Scale(scheme="blues", reverse=not bigger),
                            legend=alt.Legend(orient="bottom", gradientLength=120)),
            tooltip=_tips("judge:N", "cell:N", f"{col}:Q", "n_verdicts:Q"))
        text = base.mark_text(fontSize=10).encode(text=alt.Text(f"{col}:Q", format=".2f")) \
            .transform_filter(f"isValid(datum['{col}'])")   # an undefined value: an empty cell, no "null"
        charts.append((heat + text).properties(title=title, width=alt.Step(38), height=alt.Step(22)))
    return alt.concat(*charts, columns=2).resolve_scale(color="independent")


def binned_means_chart(frame: pl.DataFrame, x: str, y: str, color: str, x_title: str, y_title: str) -> alt.Chart:
    """frame: color, x (bin centre: mean of x in the bin), y (mean), lo, hi, n -> means with their
    intervals as error bars, joined per series."""
    df = frame.to_pandas()
    base = alt.Chart(df).encode(x=alt.X(f"{x}:Q", title=x_title),
                                color=alt.Color(f"{color}:N", title=None, legend=alt.Legend(labelLimit=400)))
    line = base.mark_line(opacity=0.5).encode(y=alt.Y(f"{y}:Q", title=y_title))
    points = base.mark_point(filled=True).encode(
        y=alt.Y(f"{y}:Q"), size=alt.Size("n:Q", title="items", scale=alt.Scale(range=[30, 200]),
                                         legend=alt.Legend(format="d", tickMinStep=1)),
        tooltip=_tips(f"{color}:N", f"{x}:Q", f"{y}:Q", "lo:Q", "hi:Q", "n:Q"))
    bars = base.mark_rule().encode(y=alt.Y("lo:Q"), y2=alt.Y2("hi:Q"))
    zero = alt.Chart(pl.DataFrame({"y": [0.0]}).to_pandas()).mark_rule(strokeDash=[4, 4], color="gray") \
        .encode(y=alt.Y("y:Q"))
    return (zero + bars + line + points).properties(height=320)
