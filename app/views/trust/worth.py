"""The Trust page's parts (frames in, text and charts out; no metric math): the headline of what a
format's verdicts are worth, and the intervals from human labels alone beside the PPI ones."""

from __future__ import annotations

import altair as alt
import polars as pl

from app.charts import WIDE, row_axis
from audit import MIN_N, plural, too_few

KINDS = {"humans alone": "classical", "humans + judge (PPI++)": "ppi"}


def best_per_format(cells: pl.DataFrame) -> pl.DataFrame:
    """Per format, its cell (and system) whose verdicts are worth the most labels: format, judge,
    decoding, system, n_labelled, effective_labels; most first."""
    return cells.filter(pl.col("effective_labels").is_not_null()) \
        .sort("effective_labels", descending=True).group_by("format", maintain_order=True).first() \
        .select("format", "judge", "decoding", "system", "n_labelled", "effective_labels")


def headline(best: pl.DataFrame, pool: str) -> str | None:
    """'likert5's verdicts are worth N labels on this pool' for the format worth the most among the
    cells with at least MIN_N human labels (audit.MIN_N, the one rule); a caution when every valued cell
    rests on fewer."""
    if best.height == 0:
        return None
    enough = best.filter(pl.col("n_labelled") >= MIN_N)
    if enough.height == 0:
        r = best.row(0, named=True)
        return (f"Too few to say what the verdicts are worth on {pool}: **{r['format']}**'s would be worth "
                f"{r['effective_labels']:.0f} labels, but that rests on {plural(r['n_labelled'], 'human label')} "
                f"(at least {MIN_N} needed); label more items on the Label page.")
    r = enough.row(0, named=True)
    who = f" ({r['judge']}" + (f", {r['system']} against the baseline" if r["system"] else "") + ")"
    return (f"**{r['format']}**'s verdicts{who} are worth **{r['effective_labels']:.0f} labels** on {pool}: "
            f"{plural(r['n_labelled'], 'human label')} with the verdicts give the interval of "
            f"{r['effective_labels']:.0f} without them.")


def unvalued(labelled: pl.DataFrame) -> str | None:
    """Why no cell's verdicts can be valued in labels (the table of the best per format would be
    empty), or None when some can: the human values do not vary (no spread: the interval from the
    labels alone has no width for the verdicts to narrow), or too few labels (audit.MIN_N)."""
    if labelled.height == 0 or labelled.filter(pl.col("effective_labels").is_not_null()).height:
        return None
    n = int(labelled["n_labelled"].max())
    flat = labelled.filter(pl.col("classical_lo") == pl.col("classical_hi"))
    few = f"at most {plural(n, 'human label')} a cell (at least {MIN_N} needed)"
    if flat.height:
        values = sorted({round(v, 3) for v in flat["classical_value"].drop_nulls().to_list()})
        theta = f" (θ = {' or '.join(f'{v:g}' for v in values)})" if values else ""
        where = "every cell" if flat.height == labelled.height else f"{flat.height} of {labelled.height} cells"
        return (f"No format's verdicts can be valued in labels yet. No spread: in {where} the labelled items all "
                f"carry the same human value{theta}, so the interval from the labels alone has no width for the "
                f"verdicts to narrow; label items where the answer differs."
                + (f" Too few to say in any case: {few}." if too_few(n) else ""))
    return f"No format's verdicts can be valued in labels yet: too few to say, {few}."


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
