"""Forest plots for the Rankings and Calibration pages: frames in, altair charts out (no metric math)."""

from __future__ import annotations

import altair as alt
import polars as pl

from app.charts import SVG, WIDE, forest_captions, row_axis
from app.reading import merged_bins

KAPPA = "Cohen's kappa"     # the kappa forest's x axis: every layer under one title (a layer without
                            # one would add its field's name to it: "Cohen's kappa, lo, k")
ORDER_TITLES = {"both": "both orders (every call)", "single": "single order (forward calls only)"}


def strength_forest(items: pl.DataFrame) -> alt.Chart:
    """items: id, order, strength, lo, hi, rank -> one row per item, named in full and sorted by its
    both-order strength, with its two intervals one above the other (both orders, single order) in
    two colours: a change of place from slot bias shows within the row. As wide as its container."""
    sort = items.filter(pl.col("order") == "both").sort("strength", descending=True)["id"].to_list()
    df = items.with_columns(pl.col("order").replace(ORDER_TITLES).alias("ranking")).to_pandas()
    y = alt.Y("id:N", sort=sort, axis=row_axis())
    colour = alt.Color("ranking:N", sort=list(ORDER_TITLES.values()),
                       legend=alt.Legend(orient="bottom", title=None, labelLimit=0))
    tips = [alt.Tooltip("id:N"), alt.Tooltip("ranking:N"), alt.Tooltip("rank:Q"),
            alt.Tooltip("strength:Q", format=".3f"), alt.Tooltip("lo:Q", format=".3f"), alt.Tooltip("hi:Q", format=".3f")]
    offset = alt.YOffset("ranking:N", sort=list(ORDER_TITLES.values()))
    rules = alt.Chart().mark_rule().encode(y=y, yOffset=offset, color=colour,
                                           x=alt.X("lo:Q", title="strength (log p, centred)"), x2="hi:Q")
    points = alt.Chart().mark_point(filled=True, size=50).encode(y=y, yOffset=offset, x="strength:Q", color=colour,
                                                                 tooltip=tips)
    return alt.layer(rules, points, data=df).properties(**WIDE, height=max(120, 30 * len(sort)))


def kappa_forest(cells: pl.DataFrame, ceiling: dict | None, threshold: float | None) -> alt.Chart:
    """cells: judge, format, decoding, kappa, kappa_lo, kappa_hi -> kappa per cell (each row named
    judge / format / decoding) with its interval; the human-human kappa (the ceiling) as a shaded band and the threshold as a rule."""
    named = forest_captions(cells).rename({"row": "cell"})
    df = named.to_pandas()
    order = named.sort("kappa", descending=True, nulls_last=True)["cell"].to_list()
    y = alt.Y("cell:N", sort=order, axis=row_axis())
    layers = []
    if ceiling and ceiling.get("kappa") is not None:
        band = pl.DataFrame({"lo": [ceiling["kappa_lo"]], "hi": [ceiling["kappa_hi"]], "k": [ceiling["kappa"]]}).to_pandas()
        layers.append(alt.Chart(band).mark_rect(opacity=0.15, color="green").encode(x=alt.X("lo:Q", title=KAPPA),
                                                                                    x2="hi:Q"))
        layers.append(alt.Chart(band).mark_rule(color="green").encode(x=alt.X("k:Q", title=KAPPA),
                                                                      tooltip=[alt.Tooltip("k:Q", title="human kappa")]))
    if threshold is not None:
        layers.append(alt.Chart(pl.DataFrame({"t": [threshold]}).to_pandas())
                      .mark_rule(strokeDash=[6, 3], color="red").encode(x=alt.X("t:Q", title=KAPPA),
                                                                        tooltip=[alt.Tooltip("t:Q", title="threshold")]))
    tips = [alt.Tooltip("cell:N"), alt.Tooltip("n:Q"), alt.Tooltip("kappa:Q", format=".3f"),
            alt.Tooltip("kappa_lo:Q", format=".3f"), alt.Tooltip("kappa_hi:Q", format=".3f"), alt.Tooltip("decision:N")]
    layers.append(alt.Chart(df).mark_rule().encode(y=y, x=alt.X("kappa_lo:Q", title=KAPPA), x2="kappa_hi:Q"))
    layers.append(alt.Chart(df).mark_point(filled=True, size=60).encode(y=y, x=alt.X("kappa:Q", title=KAPPA),
                                                                        tooltip=tips))
    return alt.layer(*layers).properties(**WIDE, height=max(140, 22 * len(df)))


def reliability_diagram(cells: pl.DataFrame) -> alt.Chart:
    """cells: judge, format, decoding, reliability (list of lo, hi, n, mean_p, mean_y; null where a
    cell has no probabilities) -> the reliability diagram: per cell and non-empty bin, the mean
    judge probability against the share the humans preferred, one coloured line per cell with points
    sized by the bin's judgements, over the dashed diagonal of a calibrated judge. Adjacent bins are
    merged until each holds app.reading.MIN_BIN judgements (app.reading.merged_bins). Cells with the
    same bins would draw one line over another, so they are one series named "a = b" (merged_series):
    the legend lists only what shows. The plot area is a 420 px square, axes 0-1."""
    named = forest_captions(cells.filter(pl.col("reliability").is_not_null())).rename({"row": "cell"})
    rows = merged_series(named.select("cell", pl.col("reliability").map_elements(
        lambda bins: merged_bins(bins.to_list()), return_dtype=named.schema["reliability"])))
    df = rows.explode("reliability").unnest("reliability").to_pandas()
    unit = alt.Scale(domain=[0, 1], nice=False)
    tenths = alt.Axis(values=[k / 10 for k in range(11)], format=".1f")
    x = alt.X("mean_p:Q", scale=unit, axis=tenths, title="judge's probability that the response is better (bin mean)")
    y = alt.Y("mean_y:Q", scale=unit, axis=tenths, title="share the humans preferred")
    colour = alt.Color("cell:N", scale=alt.Scale(scheme="tableau10"),
                       legend=alt.Legend(orient="bottom", title=None, labelLimit=0, columns=1))
    tips = [alt.Tooltip("cell:N"), alt.Tooltip("lo:Q", title="bin from"), alt.Tooltip("hi:Q", title="bin to"),
            alt.Tooltip("n:Q", title="judgements"), alt.Tooltip("mean_p:Q", format=".3f"),
            alt.Tooltip("mean_y:Q", format=".3f")]
    diagonal = alt.Chart(pl.DataFrame({"a": [0.0, 1.0]}).to_pandas()).mark_line(strokeDash=[6, 3], color="grey") \
        .encode(x=alt.X("a:Q", scale=unit), y=alt.Y("a:Q", scale=unit))
    lines = alt.Chart(df).mark_line(opacity=0.6).encode(x=x, y=y, color=colour, order="mean_p:Q")
    points = alt.Chart(df).mark_point(filled=True, opacity=0.9).encode(
        x=x, y=y, color=colour, size=alt.Size("n:Q", scale=alt.Scale(zero=False, range=[30, 300]), legend=None),
        tooltip=tips)
    return alt.layer(diagonal, lines, points).properties(width=420, height=420, autosize=alt.AutoSizeParams(type="pad"),
                                                         **SVG)


def merged_series(cells: pl.DataFrame) -> pl.DataFrame:
    """cells: cell, reliability -> one row per distinct reliability (its bins, identical values):
    cell = the names of the cells that share it joined with " = ", in their order."""
    keyed = cells.with_columns(pl.col("reliability").map_elements(repr, return_dtype=pl.String).alias("_key"))
    return keyed.group_by("_key", maintain_order=True).agg(pl.col("cell").str.join(" = "),
                                                          pl.col("reliability").first()).drop("_key")
