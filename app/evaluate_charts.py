"""Charts of the Evaluate page: frames in (train.contrasts through app.data), altair charts out."""

from __future__ import annotations

import altair as alt
import polars as pl


def contrast_forest(table: pl.DataFrame) -> alt.Chart:
    """table: judge, contrast, diff, lo, hi, p_holm -> one interval per (contrast, judge) and a
    dashed line at no difference."""
    base = alt.Chart(table.to_pandas()).encode(y=alt.Y("contrast:N", sort=None, title=None),
                                               yOffset=alt.YOffset("judge:N"), color=alt.Color("judge:N"))
    forest = base.mark_rule().encode(x=alt.X("lo:Q", title="difference in outcome (a − b)"), x2=alt.X2("hi:Q")) \
        + base.mark_point(filled=True).encode(x="diff:Q", tooltip=["judge:N", "contrast:N", "diff:Q", "lo:Q",
                                                                     "hi:Q", "p_holm:Q"]) \
        + alt.Chart(pl.DataFrame({"x": [0.0]}).to_pandas()).mark_rule(strokeDash=[4, 4]).encode(x="x:Q")
    return forest.properties(height=40 + 28 * table["contrast"].n_unique())
