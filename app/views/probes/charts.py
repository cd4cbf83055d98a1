"""Charts of the Probes & mitigations page: frames in (audit._probes), altair charts out."""

from __future__ import annotations

import altair as alt
import polars as pl

from app.charts import WIDE, row_axis

# McNemar's discordant counts, named for what they count (b alone is the slot bias elsewhere)
DISCORDANT = {"b": "baseline agrees, this not", "c": "this agrees, baseline not"}
BIAS = "bias: P(treated) − P(control)"     # the bias chart's x axis, every layer under this one title


def bias_bars(table: pl.DataFrame) -> alt.Chart:
    """One bar per (probe type, judge): P(treated) - P(control), with its 95% interval."""
    df = table.filter(pl.col("bias").is_not_null()).to_pandas()
    order = list(dict.fromkeys(table["type"].to_list()))
    y = alt.Y("type:N", sort=order, axis=row_axis())
    bars = alt.Chart(df).mark_bar(opacity=0.75).encode(
        y=y, yOffset=alt.YOffset("judge:N"), x=alt.X("bias:Q", title=BIAS, scale=alt.Scale(domain=[-1, 1])),
        color=alt.Color("judge:N", legend=alt.Legend(orient="bottom", columns=3, labelLimit=0)),
        tooltip=[alt.Tooltip(c) for c in ("judge:N", "type:N", "n:Q", "bias:Q", "lo:Q", "hi:Q", "treated:N")])
    rules = alt.Chart(df).mark_rule(color="black").encode(y=y, yOffset=alt.YOffset("judge:N"),
                                                          x=alt.X("lo:Q", title=BIAS), x2=alt.X2("hi:Q"))
    zero = alt.Chart(pl.DataFrame({"x": [0.0]}).to_pandas()).mark_rule(strokeDash=[4, 4], color="gray") \
        .encode(x=alt.X("x:Q", title=BIAS))
    return (bars + rules + zero).properties(**WIDE, height=max(160, 22 * len(df)))


def frontier(rows: pl.DataFrame) -> alt.Chart:
    """Agreement with the expected verdicts against tokens per verdict; the frontier as a line."""
    df = rows.to_pandas()
    tips = [alt.Tooltip(c) for c in ("judge:N", "strategy:N", "agreement:Q", "calls_per_verdict:Q",
                                     "tokens_per_verdict:Q", "b:Q", "c:Q", "p_holm:Q")]
    x = alt.X("tokens_per_verdict:Q", title="tokens per verdict (log)", scale=alt.Scale(type="log")) \
        if (rows["tokens_per_verdict"] > 0).all() else alt.X("calls_per_verdict:Q", title="calls per verdict")
    y = alt.Y("agreement:Q", title="agreement with the expected verdict", scale=alt.Scale(domain=[0, 1]))
    points = alt.Chart(df).mark_circle(size=110).encode(
        x=x, y=y, color=alt.Color("strategy:N", legend=alt.Legend(orient="bottom", columns=3, labelLimit=0)),
        tooltip=tips)
    line = alt.Chart(rows.filter(pl.col("frontier")).sort("tokens_per_verdict").to_pandas()).mark_line(
        color="gray", strokeDash=[4, 3]).encode(x=x, y=y, detail=alt.Detail("format:N"))
    return (line + points).properties(**WIDE, height=300)
