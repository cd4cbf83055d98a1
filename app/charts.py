"""Altair charts for the dashboard: frames in, charts out (no metric math). Every chart takes its
container's width; a grid of panels is a list of charts that the page lays out in columns."""

from __future__ import annotations

import altair as alt
import polars as pl

from app.tables import heading

# for each diagnostic column: is bigger better?
BETTER = {"distinct": True, "tie_prob": False, "d1": True, "d2": True, "top_tied": False, "spearman": True,
          "tau_a": True, "tau_b": True, "somers_d": True, "top1_expected": True, "parse_rate": True}


def _tips(*fields: str) -> list[alt.Tooltip]:
    """Tooltips as channel objects: altair resolves shorthand strings against its JSON schema, which
    costs tens of milliseconds per chart."""
    return [alt.Tooltip(f) for f in fields]


def _metrics_long(frame: pl.DataFrame, index: str | list[str], metrics: list[str]) -> pl.DataFrame:
    """frame's metric columns stacked as (index, metric, value), each metric by its heading (tie_prob ->
    "tie probability", d1 -> "D1 levels"): a legend entry is a word, not a column name."""
    return frame.select(*([index] if isinstance(index, str) else index), *metrics) \
        .unpivot(index=index, variable_name="metric") \
        .with_columns(pl.col("metric").replace_strict({m: heading(m) for m in metrics}))


def _modes(frame: pl.DataFrame) -> int:
    return frame["decoding"].n_unique() if "decoding" in frame.columns and frame.height else 1


def cell_captions(cells: pl.DataFrame) -> pl.DataFrame:
    """Adds `cell`, the caption naming a cell on a chart: the format, and its decoding mode when the frame holds more than one, so the
    two modes of one format stand side by side on a chart's axis."""
    if _modes(cells) > 1:
        return cells.with_columns((pl.col("format") + " · " + pl.col("decoding")).alias("cell"))
    return cells.with_columns(pl.col("format").alias("cell"))


# every chart drawn as SVG, whose text a reader can select and a browser test can measure (a tick label
# cut by the chart's edge), where Streamlit would pick canvas for a chart of many points
SVG = {"usermeta": {"embedOptions": {"renderer": "svg"}}}
# every chart: as wide as its container, its height the plot's own (Streamlit's default autosize "fit"
# would squeeze the plot into the height left after rotated axis captions and a legend below); SVG
WIDE = {"width": "container", "autosize": {"type": "fit-x", "contains": "padding"},
        "padding": {"left": 16, "right": 12, "top": 5, "bottom": 5},   # room for a caption measured short, a last tick
        **SVG}


def count_axis(title: str | None) -> alt.Axis:
    """The axis of a count: whole numbers only (no 0.5 tick, no "6.000000")."""
    return alt.Axis(title=title, format="d", tickMinStep=1)


def count_y(field: str, title: str | None, **kw) -> alt.Y:
    """A count on the y axis: bars from 0, whole-number ticks."""
    return alt.Y(field, axis=count_axis(title), scale=alt.Scale(zero=True), **kw)


def step_x(title: str = "optimiser step") -> alt.X:
    """The x of a training curve: whole steps, the scale padded so that the first step's mark (an eval
    point at step 1) is drawn whole inside the plot, not cut in half by its edge."""
    return alt.X("step:Q", axis=count_axis(title), scale=alt.Scale(zero=False, padding=12, nice=False))


def bin_x(lo: str, title: str | None) -> alt.X:
    """The x of a histogram drawn from counts: LO is a bin's left edge (X2 its right), marked as binned,
    so that Vega-Lite draws each bar from 0 up to its count (a ranged x alone makes a floating dash)."""
    return alt.X(lo, bin="binned", title=title, axis=alt.Axis(labelFlush=True, labelOverlap=True))


def row_axis(title: str | None = None) -> alt.Axis:
    """The axis of a forest plot's rows: every row's caption drawn (no thinning of overlapping captions) and
    never cut short, so each row names its judge, format and decoding in full."""
    return alt.Axis(title=title, labelLimit=0, labelOverlap=False)


def forest_captions(frame: pl.DataFrame) -> pl.DataFrame:
    """Adds `row` = judge / format / decoding: a forest plot's row caption, whole even when the frame
    holds one decoding mode (two rows must never share a name)."""
    return frame.with_columns(pl.concat_str("judge", "format", "decoding", separator=" / ").alias("row"))


def _cell_x() -> alt.X:
    """The x axis of bars per cell: every format (· decoding) named, slanted, never cut short."""
    return alt.X("cell:N", title=None, axis=alt.Axis(labelAngle=-40, labelLimit=0, labelOverlap=False))


def histogram_panels(values: pl.DataFrame) -> dict[str, list[alt.Chart]]:
    """values: format, [decoding,] s, n, mult5 -> {format: [one bar chart per decoding mode]}, each
    chart as wide as its container (a page lays the formats out in columns that fit the screen).
    The multiples of 5 are darker, with their legend under the panels of the formats that have them."""
    out: dict[str, list[alt.Chart]] = {}
    two = _modes(values) > 1
    frame = values.with_columns(pl.col("mult5").fill_null(False).alias("multiple_of_5"))
    for fmt in sorted(frame["format"].unique().to_list()):
        part = frame.filter(pl.col("format") == fmt)
        legend = alt.Legend(orient="bottom", title="multiple of 5 (0-100 scale)") \
            if values.filter(pl.col("format") == fmt)["mult5"].is_not_null().any() else None
        modes = sorted(part["decoding"].unique().to_list()) if two else [None]
        out[fmt] = [alt.Chart(part.filter(pl.col("decoding") == mode) if mode else part).mark_bar(size=6).encode(
            x=alt.X("s:Q", title="normalised score", scale=alt.Scale(domain=[0, 1])),
            y=count_y("n:Q", "candidates"),
            color=alt.Color("multiple_of_5:N", legend=legend, title="multiple of 5 (0-100 scale)",
                            scale=alt.Scale(domain=[False, True], range=["#9ecae1", "#08519c"])),
            tooltip=_tips("format:N", "s:Q", "n:Q")).properties(
                **WIDE, height=140, title=f"{fmt} · {mode}" if mode else fmt)
            for mode in modes]
    return out


def best_marks(cells: pl.DataFrame) -> dict[str, list[int]]:
    """Where the diagnostics table puts a ★: column -> the row positions holding each judge's best
    value of it (within one kind of score: label and expected scores are not ranked together)."""
    group = ["judge", "score"] if "score" in cells.columns else ["judge"]
    out = {}
    for col, bigger in BETTER.items():
        best = (pl.col(col).max() if bigger else pl.col(col).min()).over(group)
        rows = cells.select(pl.col(col).is_not_null() & (pl.col(col) == best)).to_series()
        out[col] = rows.arg_true().to_list()
    return out


def tie_bars(cells: pl.DataFrame) -> alt.Chart:
    """Tie probability and top-tied share (0-1) per format (and decoding mode, when there are two)."""
    long = _metrics_long(cell_captions(cells), "cell", ["tie_prob", "top_tied"])
    return alt.Chart(long.to_pandas()).mark_bar().encode(
        x=_cell_x(), xOffset=alt.XOffset("metric:N"),
        y=alt.Y("value:Q", title="share", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("metric:N", legend=alt.Legend(orient="bottom", title=None)),
        tooltip=_tips("cell:N", "metric:N", "value:Q")).properties(**WIDE, height=220, title="ties")


COUNTED = {"pointwise": "nominal = the labels a call can give; a candidate's score is its one verdict",
           "comparative": "nominal = the labels a call can give, but a candidate's score averages several calls "
                          "(both orders, several opponents), so it takes more values: 2 labels seen in both "
                          "orders give 3 scores (won both, split, lost both)"}


def level_bars(cells: pl.DataFrame) -> alt.Chart:
    """D1 and D2 (bars) against the nominal number of levels (a black tick), per format (and
    decoding mode), on a symlog scale whose top is the largest of them, so 10- and 101-level
    formats stay inside the plot. The tooltip says what the nominal count counts."""
    cells = cell_captions(cells).with_columns(pl.col("kind").replace_strict(COUNTED, default="").alias("counted")) \
        if "kind" in cells.columns else cell_captions(cells).with_columns(pl.lit("").alias("counted"))
    top = max([v for c in ("d1", "d2", "nominal_levels") for v in cells[c].to_list() if v is not None], default=1.0)
    ticks = [v for v in (0, 1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000) if v <= top]
    y = alt.Y("value:Q", title="levels (symlog)", scale=alt.Scale(type="symlog", domain=[0, top], nice=False),
              axis=alt.Axis(values=ticks))
    x = _cell_x()
    long = _metrics_long(cells, ["cell", "counted"], ["d1", "d2"])
    bars = alt.Chart(long.to_pandas()).mark_bar().encode(
        x=x, xOffset=alt.XOffset("metric:N"), y=y,
        color=alt.Color("metric:N", legend=alt.Legend(orient="bottom", title=None)),
        tooltip=_tips("cell:N", "metric:N", "value:Q", "counted:N"))
    nominal = alt.Chart(cells.select("cell", "counted", pl.col("nominal_levels").cast(pl.Float64).alias("value"))
                        .drop_nulls("value").to_pandas()).mark_tick(color="black", thickness=2).encode(
        x=x, y=y, tooltip=[alt.Tooltip("cell:N"), alt.Tooltip("value:Q", title="nominal levels"),
                           alt.Tooltip("counted:N")])
    return (bars + nominal).properties(**WIDE, height=220,
                                       title="effective (D1, D2) vs nominal levels (black tick)")


def agreement_bars(cells: pl.DataFrame) -> alt.Chart:
    long = _metrics_long(cell_captions(cells), "cell", ["tau_a", "tau_b", "top1_expected", "top1_uniform"])
    return alt.Chart(long.to_pandas()).mark_bar().encode(
        x=_cell_x(), xOffset=alt.XOffset("metric:N"),
        y=alt.Y("value:Q", title="agreement"),
        color=alt.Color("metric:N", legend=alt.Legend(orient="bottom", title=None, columns=2)),
        tooltip=_tips("cell:N", "metric:N", "value:Q")).properties(**WIDE, height=300)


def interval_chart(frame: pl.DataFrame, est: str, lo: str, hi: str, title: str) -> alt.Chart:
    """One row per (judge, format, decoding), each named in full: the estimate and its interval."""
    df = forest_captions(frame).to_pandas()
    y = alt.Y("row:N", sort=None, axis=row_axis())
    points = alt.Chart(df).mark_point(filled=True, size=60).encode(
        y=y, x=alt.X(f"{est}:Q", title=title), tooltip=_tips("row:N", f"{est}:Q", f"{lo}:Q", f"{hi}:Q"))
    bars = alt.Chart(df).mark_rule().encode(y=y, x=alt.X(f"{lo}:Q", title=title), x2=alt.X2(f"{hi}:Q"))
    zero = alt.Chart(pl.DataFrame({"x": [0.0]}).to_pandas()).mark_rule(strokeDash=[4, 4], color="gray") \
        .encode(x=alt.X("x:Q", title=title))
    return (bars + points + zero).properties(**WIDE, height=max(120, 22 * len(df)))


def scatter(frame: pl.DataFrame, x: str, y: str, color: str) -> alt.Chart:
    return alt.Chart(frame.to_pandas()).mark_circle(opacity=0.5).encode(
        x=alt.X(f"{x}:Q"), y=alt.Y(f"{y}:Q"), color=alt.Color(f"{color}:N"),
        tooltip=_tips(f"{color}:N", f"{x}:Q", f"{y}:Q")).properties(**WIDE, height=300)


SHARE_SOURCES = {"share_format": "format", "share_judge": "judge", "share_residual": "neither (format × judge)"}


def share_bars(frame: pl.DataFrame) -> alt.Chart:
    """frame: one (decoding, score) group's rows of audit.variance (metric, share_format,
    share_judge, share_residual; one row per metric) -> one bar per metric split into the three
    shares, stacked as they are (they sum to 1, so a segment's length is the table's number; rows of
    two groups would stack onto one bar, hence one group). Metrics by their readable names
    (app.tables.heading); a metric whose shares are undefined (a constant metric) shows no bar."""
    if frame.select("metric").is_duplicated().any():
        raise ValueError("share_bars: one row per metric (one decoding and score group)")
    long = frame.select("metric", *SHARE_SOURCES).unpivot(index="metric", variable_name="source") \
        .with_columns(pl.col("metric").map_elements(heading, return_dtype=pl.String).alias("diagnostic"),
                      pl.col("source").replace(SHARE_SOURCES).alias("share of")) \
        .filter(pl.col("value").is_not_null() & pl.col("value").is_not_nan())
    order = list(SHARE_SOURCES.values())
    return alt.Chart(long.to_pandas()).mark_bar().encode(
        y=alt.Y("diagnostic:N", axis=row_axis(), title=None),
        x=alt.X("value:Q", stack=True, title="share of the variance over the cells",
                scale=alt.Scale(domain=[0, 1], nice=False)),
        color=alt.Color("share of:N", sort=order, scale=alt.Scale(domain=order),
                        legend=alt.Legend(orient="bottom", title=None, labelLimit=0)),
        order=alt.Order("order:Q"),
        tooltip=[alt.Tooltip("diagnostic:N"), alt.Tooltip("share of:N"), alt.Tooltip("value:Q", format=".3f")]) \
        .transform_calculate(order=f"indexof({order!r}, datum['share of'])").properties(**WIDE, height=320)


# the Overview's grid: (column, title, is bigger better); the colour runs from worse to better
GRID_METRICS = (("parse_rate", "parse rate", True), ("top_tied", "top tied (share of prompts)", False),
                ("d2", "effective levels D2", True), ("tie_prob", "tie probability", False),
                ("tau_a", "τa vs reference", True), ("top1_expected", "top-1 (expected)", True))


def diagnostic_heatmaps(cells: pl.DataFrame, metrics=GRID_METRICS) -> list[alt.Chart]:
    """Small multiples, one chart per diagnostic (a page lays them out two a row): judges × formats,
    each with its own colour scale (darker = better), as wide as its container, the value written
    in each cell in white on the darker half of the scale and black on the lighter, legends with
    three significant digits."""
    captioned = cell_captions(cells).sort("format", "decoding")
    # every panel shows every cell and judge, even where its value is undefined (an empty square)
    x = alt.X("cell:N", title=None, scale=alt.Scale(domain=captioned["cell"].unique(maintain_order=True).to_list()),
              axis=alt.Axis(labelAngle=-40, labelLimit=0, labelOverlap=False))
    y = alt.Y("judge:N", title=None, scale=alt.Scale(domain=sorted(captioned["judge"].unique().to_list())),
              axis=alt.Axis(labelLimit=0, labelOverlap=False))
    out = []
    for col, title, bigger in metrics:
        lo, hi = captioned[col].min(), captioned[col].max()
        # where the cell's colour sits on its panel's scale, 0 = lightest; one value: the middle
        dark = (pl.col(col) - lo) / (hi - lo) if lo is not None and hi > lo else pl.lit(0.5)
        df = captioned.with_columns((dark if bigger else 1 - dark).alias("darkness")).to_pandas()
        base = alt.Chart(df).encode(x=x, y=y)
        heat = base.mark_rect().encode(
            color=alt.Color(f"{col}:Q", title=None, scale=alt.Scale(scheme="blues", reverse=not bigger),
                            legend=alt.Legend(orient="bottom", gradientLength=160, format=".3~g")),
            tooltip=[alt.Tooltip("judge:N"), alt.Tooltip("cell:N"), alt.Tooltip(f"{col}:Q", format=".3~g"),
                     alt.Tooltip("n_verdicts:Q")])
        text = base.mark_text(fontSize=10).encode(
            text=alt.Text(f"{col}:Q", format=".2f"),
            color=alt.condition("datum.darkness > 0.5", alt.value("white"), alt.value("black"))) \
            .transform_filter(f"isValid(datum['{col}'])")   # an undefined value: an empty cell, no "null"
        out.append((heat + text).properties(**WIDE, title=title, height=alt.Step(22)))
    return out


def binned_means_chart(frame: pl.DataFrame, x: str, y: str, color: str, x_title: str, y_title: str) -> alt.Chart:
    """frame: color, x (bin centre: mean of x in the bin), y (mean), lo, hi, n -> means with their
    intervals as error bars, joined per series."""
    df = frame.to_pandas()
    base = alt.Chart(df).encode(x=alt.X(f"{x}:Q", title=x_title),
                                color=alt.Color(f"{color}:N", title=None, legend=alt.Legend(
                                    orient="bottom", columns=2, labelLimit=0, symbolLimit=0)))
    line = base.mark_line(opacity=0.5).encode(y=alt.Y(f"{y}:Q", title=y_title))
    points = base.mark_point(filled=True).encode(
        # the size legend on the right: below the plot, beside two columns of long cell names, its last
        # entries ran past the chart's edge at 1280 px
        y=alt.Y(f"{y}:Q", title=y_title), size=alt.Size("n:Q", title="items", scale=alt.Scale(range=[30, 200], zero=False),
                                         legend=alt.Legend(format="d", tickMinStep=1, orient="right")),
        tooltip=_tips(f"{color}:N", f"{x}:Q", f"{y}:Q", "lo:Q", "hi:Q", "n:Q"))
    bars = base.mark_rule().encode(y=alt.Y("lo:Q", title=y_title), y2=alt.Y2("hi:Q"))
    zero = alt.Chart(pl.DataFrame({"y": [0.0]}).to_pandas()).mark_rule(strokeDash=[4, 4], color="gray") \
        .encode(y=alt.Y("y:Q", title=y_title))
    return (zero + bars + line + points).properties(**WIDE, height=320)
