"""Forest plots for the Rankings and Calibration pages: frames in, altair charts out (no metric math)."""

from __future__ import annotations

import altair as alt
import polars as pl

ORDER_TITLES = {"both": "both orders (every call)", "single": "single order (forward calls only)"}


def strength_forest(items: pl.DataFrame) -> alt.Chart:
    """items: id, order, strength, lo, hi, rank -> one panel per order, side by side, items sorted
    by their both-order strength (so a change of place between the panels is visible)."""
    sort = items.filter(pl.col("order") == "both").sort("strength", descending=True)["id"].to_list()
    df = items.with_columns(pl.col("order").replace(ORDER_TITLES).alias("ranking")).to_pandas()
    y = alt.Y("id:N", sort=sort, title=None)
    tips = [alt.Tooltip("id:N"), alt.Tooltip("rank:Q"), alt.Tooltip("strength:Q", format=".3f"),
            alt.Tooltip("lo:Q", format=".3f"), alt.Tooltip("hi:Q", format=".3f")]
    rules = alt.Chart().mark_rule().encode(y=y, x=alt.X("lo:Q", title="strength (log p, centred)"), x2="hi:Q")
    points = alt.Chart().mark_point(filled=True, size=50).encode(
        y=y, x="strength:Q", color=alt.Color("rank:Q", scale=alt.Scale(scheme="viridis", reverse=True)), tooltip=tips)
    return alt.layer(rules, points, data=df).properties(width=320, height=max(120, 20 * len(sort))) \
        .facet(column=alt.Column("ranking:N", title=None))


def kappa_forest(cells: pl.DataFrame, ceiling: dict | None, threshold: float | None) -> alt.Chart:
    """cells: judge, format, decoding, kappa, kappa_lo, kappa_hi -> kappa per cell with its
    interval; the human-human kappa (the ceiling) as a shaded band and the threshold as a rule."""
    label = pl.col("judge") + " / " + pl.col("format")
    if cells["decoding"].n_unique() > 1:
        label = label + " / " + pl.col("decoding")
    df = cells.with_columns(label.alias("cell")).to_pandas()
    order = cells.with_columns(label.alias("cell")).sort("kappa", descending=True, nulls_last=True)["cell"].to_list()
    y = alt.Y("cell:N", sort=order, title=None)
    layers = []
    if ceiling and ceiling.get("kappa") is not None:
        band = pl.DataFrame({"lo": [ceiling["kappa_lo"]], "hi": [ceiling["kappa_hi"]], "k": [ceiling["kappa"]]}).to_pandas()
        layers.append(alt.Chart(band).mark_rect(opacity=0.15, color="green").encode(x="lo:Q", x2="hi:Q"))
        layers.append(alt.Chart(band).mark_rule(color="green").encode(x="k:Q", tooltip=[alt.Tooltip("k:Q", title="human kappa")]))
    if threshold is not None:
        layers.append(alt.Chart(pl.DataFrame({"t": [threshold]}).to_pandas())
                      .mark_rule(strokeDash=[6, 3], color="red").encode(x="t:Q", tooltip=[alt.Tooltip("t:Q", title="threshold")]))
    tips = [alt.Tooltip("cell:N"), alt.Tooltip("n:Q"), alt.Tooltip("kappa:Q", format=".3f"),
            alt.Tooltip("kappa_lo:Q", format=".3f"), alt.Tooltip("kappa_hi:Q", format=".3f"), alt.Tooltip("decision:N")]
    layers.append(alt.Chart(df).mark_rule().encode(y=y, x=alt.X("kappa_lo:Q", title="Cohen's kappa"), x2="kappa_hi:Q"))
    layers.append(alt.Chart(df).mark_point(filled=True, size=60).encode(y=y, x="kappa:Q", tooltip=tips))
    return alt.layer(*layers).properties(height=max(140, 22 * len(df)))
