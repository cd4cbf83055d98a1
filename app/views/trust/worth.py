"""The Trust page's parts (frames in, text and charts out; no metric math): the headline of what a
format's verdicts are worth, and the intervals from human labels alone beside the PPI ones."""

from __future__ import annotations

import altair as alt
import polars as pl

from app.charts import WIDE, row_axis

KINDS = {"humans alone": "classical", "humans + judge (PPI++)": "ppi"}


def best_per_format(cells: pl.DataFrame) -> pl.DataFrame:
    """Per format, its cell (and system) whose verdicts are worth the most labels: format, judge,
    decoding, system, n_labelled, effective_labels; most first."""
    return cells.filter(pl.col("effective_labels").is_not_null()) \
        .sort("effective_labels", descending=True).group_by("format", maintain_order=True).first() \
        .select("format", "judge", "decoding", "system", "n_labelled", "effective_labels")


def headline(best: pl.DataFrame, pool: str) -> str | None:
    """'likert5's verdicts are worth N labels on this pool' for the format worth the most."""
    if best.height == 0:
        return None
    r = best.row(0, named=True)
    who = f" ({r['judge']}" + (f", {r['system']} against the baseline" if r["system"] else "") + ")"
    return (f"**{r['format']}**'s verdicts{who} are worth **{r['effective_labels']:.0f} labels** on {pool}: "
            f"{r['n_labelled']} human labels with the verdicts give the interval of "
            f"{r['effective_labels']:.0f} without them.")


def interval_rows(cells: pl.DataFrame) -> pl.DataFrame:
    """One row per (cell, interval kind): row (judge / format / decoding [· system]), interval, value,
    lo, hi, n_labelled."""
    named = cells.filter(pl.col("n_labelled") > 0).with_columns(
        pl.concat_str([pl.col("system").fill_null(""), pl.col("format"), pl.col("judge"), pl.col("decoding")],
                      separator=" / ").str.strip_chars(" /").alias("row"))
    parts = [named.select("row", pl.lit(title).alias("interval"), pl.col(f"{k}_value").alias("value"),
                          pl.col(f"{k}_lo").alias("lo"), pl.col(f"{k}_hi").alias("hi"), "n_labelled")
             for title, k in KINDS.items()]
    return pl.concat(parts)


def interval_chart(rows: pl.DataFrame, title: str) -> alt.Chart:
    """Each cell's two intervals, one above the other: human labels alone and with the judge."""
    order = rows.unique("row", maintain_order=True)["row"].to_list()
    y = alt.Y("row:N", sort=order, axis=row_axis())
    colour = alt.Color("interval:N", sort=list(KINDS), legend=alt.Legend(orient="bottom", title=None, labelLimit=0))
    offset = alt.YOffset("interval:N", sort=list(KINDS))
    tips = [alt.Tooltip("row:N"), alt.Tooltip("interval:N"), alt.Tooltip("value:Q", format=".3f"),
            alt.Tooltip("lo:Q", format=".3f"), alt.Tooltip("hi:Q", format=".3f"), alt.Tooltip("n_labelled:Q")]
    rules = alt.Chart().mark_rule(strokeWidth=2).encode(y=y, yOffset=offset, color=colour,
                                                        x=alt.X("lo:Q", title=title), x2="hi:Q")
    points = alt.Chart().mark_point(filled=True, size=50).encode(y=y, yOffset=offset, x="value:Q", color=colour,
                                                                 tooltip=tips)
    return alt.layer(rules, points, data=rows.to_pandas()).properties(**WIDE, height=max(120, 34 * len(order)))
