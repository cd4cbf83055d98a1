"""Charts of the Evaluate page: frames in (train.contrasts through app.data), altair charts out."""

from __future__ import annotations

import altair as alt
import polars as pl

from app.charts import WIDE, row_axis


def contrast_forest(table: pl.DataFrame) -> alt.Chart:
    """table: judge, contrast, diff, lo, hi, p_holm -> one interval per (contrast, judge) and a
    dashed line at no difference."""
    base = alt.Chart(table.to_pandas()).encode(
        y=alt.Y("contrast:N", sort=None, axis=row_axis()), yOffset=alt.YOffset("judge:N"),
        color=alt.Color("judge:N", legend=alt.Legend(orient="bottom", columns=3, labelLimit=0)))
    forest = base.mark_rule().encode(x=alt.X("lo:Q", title="difference in outcome (a − b)"), x2=alt.X2("hi:Q")) \
        + base.mark_point(filled=True).encode(x="diff:Q", tooltip=["judge:N", "contrast:N", "diff:Q", "lo:Q",
                                                                     "hi:Q", "p_holm:Q"]) \
        + alt.Chart(pl.DataFrame({"x": [0.0]}).to_pandas()).mark_rule(strokeDash=[4, 4]).encode(x="x:Q")
    per_row = max(28, 12 * table["judge"].n_unique())   # each judge's interval gets its own line in the row
    return forest.properties(**WIDE, height=40 + per_row * table["contrast"].n_unique())
