"""The Pool page's charts of a pool's summary (audit.pool_summary: counts, prompts per k, binned
references and response lengths)."""

from __future__ import annotations

import polars as pl


def counts(frame: pl.DataFrame) -> list[int]:
    """prompts, candidates, with a reference, held out (summary's part 'count')."""
    return frame.filter(pl.col("part") == "count").sort("x")["n"].to_list()


def heldout_help(n_prompts: int, n_marked: int) -> str:
    """What "marked held out" means, and what curation sets aside when the pool marks none."""
    from train.heldout import SHARE, heldout_count     # deferred: the Pool page's help alone reads the rule
    if n_marked:
        return ("Candidates marked split = heldout: their prompts are never curated, and Evaluate answers them.")
    return (f"No candidate is marked split = heldout, so Curate & Train and Evaluate set aside a seeded "
            f"{SHARE:.0%} of the prompts instead: {heldout_count(n_prompts, SHARE):,} of {n_prompts:,}, never "
            "curated, answered by Evaluate.")


def bar_chart(frame: pl.DataFrame, part: str, title: str, y: str):
    """One part of summary as bars (an altair chart) as wide as its column: k as ordinal bars, a binned
    part as bars spanning their bins; every bar from 0, counts on whole-number ticks."""
    import altair as alt         # deferred: altair, for the one page that draws these
    from app.charts import WIDE, bin_x, count_y      # deferred: altair, as above
    rows = frame.filter(pl.col("part") == part)
    if part == "k":
        return alt.Chart(rows.select(pl.col("x").cast(pl.Int64).alias("k"), pl.col("n").alias(y)).to_pandas()) \
            .mark_bar().encode(x=alt.X("k:O", title=title, axis=alt.Axis(labelAngle=0)), y=count_y(f"{y}:Q", y)) \
            .properties(**WIDE, height=220)
    rows = rows.with_columns((pl.col("x") + pl.col("width")).alias("x2"))
    return alt.Chart(rows.rename({"n": y}).to_pandas()).mark_bar().encode(
        x=bin_x("x:Q", title), x2="x2:Q", y=count_y(f"{y}:Q", y)).properties(**WIDE, height=220)
