"""Style control on the Rankings page: audit.style_rank's rows of one cell in, altair charts and
display tables out (no metric math: the numbers are the audit's)."""

from __future__ import annotations

import altair as alt
import polars as pl

from app.charts import SVG
from audit import plural, signed

PART_TITLES = {"coefficient": "this judge", "human": "human labels", "excess": "judge - human"}
FEATURE_ORDER = ["length", "headers", "lists", "bold"]


def coefficient_forest(cell: pl.DataFrame) -> alt.Chart:
    """cell: one cell's style_rank rows -> each style coefficient (standardised: the change in
    log-odds per sd of the feature) with its 95% interval, the judge's and the humans' one above
    the other; a rule at 0 (no preference)."""
    fits = list(PART_TITLES.values())[:2]
    rows = cell.filter(pl.col("part").is_in(["coefficient", "human"]) & pl.col("name").is_in(FEATURE_ORDER)
                       & pl.col("value").is_not_null()) \
        .with_columns(pl.col("part").replace(PART_TITLES).alias("fit")) \
        .with_columns((pl.col("name") + " · " + pl.col("fit")).alias("row"), pl.col("name").alias("feature"))
    order = [f"{n} · {f}" for n in FEATURE_ORDER for f in fits]
    df = rows.select("fit", "feature", "row", "value", "lo", "hi", "n").to_pandas()   # no field 'name' (Vega)
    y = alt.Y("row:N", sort=order, title=None, axis=alt.Axis(labelLimit=220))
    color = alt.Color("fit:N", title=None, sort=fits, scale=alt.Scale(domain=fits, range=["#4c78a8", "#54a24b"]),
                      legend=alt.Legend(orient="top"))
    tips = [alt.Tooltip("fit:N"), alt.Tooltip("feature:N"), alt.Tooltip("value:Q", format=".3f"),
            alt.Tooltip("lo:Q", format=".3f"), alt.Tooltip("hi:Q", format=".3f"), alt.Tooltip("n:Q", title="rows")]
    zero = alt.Chart(pl.DataFrame({"x": [0.0]}).to_pandas()).mark_rule(strokeDash=[4, 3], color="gray").encode(x="x:Q")
    rules = alt.Chart(df).mark_rule(strokeWidth=2).encode(
        y=y, color=color, x=alt.X("lo:Q", title="coefficient (log-odds per sd of the feature)"), x2="hi:Q")
    points = alt.Chart(df).mark_point(filled=True, size=70).encode(y=y, color=color, x="value:Q", tooltip=tips)
    return alt.layer(zero, rules, points).properties(height=alt.Step(24), **SVG)   # a fixed height collapses the rows


def rank_moves(cell: pl.DataFrame) -> alt.Chart:
    """cell: one cell's style_rank rows -> a slope chart: each system's rank without style
    features (left) and with them (right), a line between; a system that moves is drawn solid."""
    systems = cell.filter(pl.col("part") == "system").with_columns(
        (pl.col("rank_raw") - pl.col("rank")).alias("moved"), pl.col("name").alias("system"))
    long = pl.concat([
        systems.select("system", "moved", pl.lit("raw").alias("fit"), pl.col("rank_raw").alias("place")),
        systems.select("system", "moved", pl.lit("style-controlled").alias("fit"), pl.col("rank").alias("place"))])
    df = long.with_columns((pl.col("moved") != 0).alias("moves"),
                           (pl.col("fit") == "style-controlled").cast(pl.Float64).alias("side")).to_pandas()
    # the two sides on a quantitative x (a nominal one is drawn 20 px wide in a stretched chart)
    x = alt.X("side:Q", scale=alt.Scale(domain=[-0.6, 1.6]), axis=None)
    y = alt.Y("place:Q", scale=alt.Scale(reverse=True, domain=[0, systems.height + 0.5]), axis=None)
    tips = [alt.Tooltip("system:N"), alt.Tooltip("fit:N"), alt.Tooltip("place:Q", title="rank"),
            alt.Tooltip("moved:Q", title="places up with style control")]
    base = alt.Chart(df).encode(x=x, y=y, detail="system:N", tooltip=tips)
    lines = base.mark_line().encode(strokeDash=alt.condition("datum.moves", alt.value([1, 0]), alt.value([3, 3])),
                                    opacity=alt.condition("datum.moves", alt.value(1.0), alt.value(0.4)))
    dots = base.mark_point(filled=True, size=60)
    captioned = base.transform_calculate(caption="datum.place + '. ' + datum.system")
    left = captioned.transform_filter("datum.side == 0").mark_text(align="right", dx=-8).encode(text="caption:N")
    right = captioned.transform_filter("datum.side == 1").mark_text(align="left", dx=8).encode(text="caption:N")
    heads = alt.Chart(pl.DataFrame({"side": [0.0, 1.0], "place": [0.0, 0.0],
                                    "title": ["raw", "style-controlled"]}).to_pandas()) \
        .mark_text(fontWeight="bold").encode(x=x, y=y, text="title:N")
    return alt.layer(lines, dots, left, right, heads).properties(height=max(160, 28 * (systems.height + 1)), **SVG)


def systems_table(cell: pl.DataFrame) -> pl.DataFrame:
    """One cell's systems: id, raw rank, style-controlled rank, places moved up, both strengths and
    the controlled strength's interval, strongest first."""
    return cell.filter(pl.col("part") == "system").sort("rank").select(
        pl.col("name").alias("system"), "rank_raw", "rank", (pl.col("rank_raw") - pl.col("rank")).alias("moved_up"),
        pl.col("value_raw").alias("strength_raw"), pl.col("value").alias("strength"), "lo", "hi")


def coefficient_table(cell: pl.DataFrame) -> pl.DataFrame:
    """One cell's coefficients: one row per feature (slot first) with the judge's, the humans' and
    the excess's value and interval (null where a feature was dropped or there are no labels)."""
    rows = cell.filter(pl.col("part").is_in(list(PART_TITLES)))
    out = pl.DataFrame({"feature": ["slot", *FEATURE_ORDER]})
    for part, prefix in (("coefficient", "judge"), ("human", "human"), ("excess", "excess")):
        block = rows.filter(pl.col("part") == part).select(
            pl.col("name").alias("feature"), pl.col("value").alias(prefix),
            pl.col("lo").alias(f"{prefix}_lo"), pl.col("hi").alias(f"{prefix}_hi"))
        out = out.join(block, on="feature", how="left")
    keep = [c for c in out.columns if c == "feature" or out[c].null_count() < out.height]
    return out.select(keep).filter(pl.col("judge").is_not_null())      # dropped features: see style_sentences


def _interval(row: dict | None, how: str = "") -> str:
    return "" if not row or row.get("lo") is None else f" (95% interval {signed(row['lo'])} to {signed(row['hi'])}{how})"


def excess_words(excess: dict) -> str:
    """How the judge's coefficient stands against the humans': "is 0.56 above the humans'"
    only when the paired interval excludes 0; otherwise "shows no clear difference from the humans'
    (−0.04 to +1.33)"."""
    how = ", paired bootstrap over prompts"
    lo, hi = excess.get("lo"), excess.get("hi")
    if lo is not None and hi is not None and lo <= 0 <= hi:
        return (f"shows **no clear difference** from the humans' ({signed(lo)} to {signed(hi)}: the 95% interval "
                f"of the difference{how}, includes 0)")
    side = "above" if excess["value"] > 0 else "below"
    return f"is **{abs(excess['value']):.2f} {side}** the humans'{_interval(excess, how)}"


def style_sentences(cell: pl.DataFrame) -> list[str]:
    """One cell's length coefficients in words: the judge's, the humans' and how far the judge's
    lies above or below the humans' it would replace; and the features left out."""
    dropped = cell.filter((pl.col("part") == "coefficient") & pl.col("name").is_in(FEATURE_ORDER)
                          & pl.col("value").is_null() & pl.col("converged"))["name"].to_list()
    tail = [f"Left out, as they never vary in this cell's comparisons: {', '.join(dropped)}."] if dropped else []
    failed = cell.filter(pl.col("part") == "coefficient")["boot_unconverged"].max()
    if failed:
        tail.append(f"In {failed} bootstrap resamples some system or feature wins or loses every time it counts, so "
                    "its coefficient is infinite there: an interval end those resamples reach is shown as inf.")
    return _length_sentences(cell) + tail


def _length_sentences(cell: pl.DataFrame) -> list[str]:
    rows = {(r["part"], r["name"]): r for r in cell.filter(pl.col("name") == "length").to_dicts()}
    judge, human, excess = (rows.get((p, "length")) for p in ("coefficient", "human", "excess"))
    if judge and not judge["converged"]:
        return [f"No finite fit for this judge: with {judge['n']} comparisons, some system (or style feature) "
                "wins or loses every time it counts, so the unpenalised maximum likelihood lies at infinity. "
                "Score more prompts to control for style here."]
    if not judge or judge["value"] is None:
        return ["Length does not vary across this cell's comparisons: no length coefficient."]
    out = [f"Length coefficient of this judge: **{signed(judge['value'])}**{_interval(judge)} "
           f"over {plural(judge['n'], 'comparison')}."]
    if human and not human["converged"]:
        out.append(f"The humans' {plural(human['n'], 'label')} on these pairs have no finite fit (a system wins or loses "
                   "every time): no human comparison.")
    elif human and human["value"] is not None:
        out.append(f"The humans' on the same pairs: **{signed(human['value'])}**{_interval(human)} over "
                   f"{plural(human['n'], 'label')}, so this judge's length coefficient {excess_words(excess)}.")
    else:
        out.append("No human labels on these pairs: import some (Calibration page or `judgeaudit import-labels`) "
                   "to compare with the humans'.")
    return out
