"""The Calibration page's section on scores mapped to the human scale: per cell, the isotonic map of
its scores to P(a human accepts) (accept labels) or P(a human prefers) (pair labels), and the check
per system that the map carries over (docs/metrics.md#scores-on-the-human-scale)."""

from __future__ import annotations

import polars as pl
import streamlit as st

from app import data, tables
from audit import MIN_N

READING = (
    "Each cell's scores mapped to the share of humans who agree, by isotonic regression on the human labels "
    "(fitted on 4 of 5 folds of prompts, checked on the fifth). Carry-over: per system, the mean of "
    "human − mapped over its labelled items with a 95% interval; a system is flagged where the interval "
    f"excludes 0, i.e. the map does not hold for it. Fewer than {MIN_N} items: too few to say.")


def flagged_sentence(row: dict) -> str:
    """Pure: what the carry-over check says of one cell."""
    tested = [c for c in row["carry_over"] if c["flagged"] is not None]
    flagged = [c["system"] for c in tested if c["flagged"]]
    if not tested:
        return "too few labelled items per system to check the carry-over"
    if flagged:
        return f"the map does not hold for {', '.join(flagged)} ({len(flagged)} of {len(tested)} systems tested)"
    return f"the map holds for all {len(tested)} systems tested"


def human_scale_section(pool: str) -> None:
    st.subheader("Scores on the human scale")
    scale = data.result("human_scale", pool)
    if scale.height == 0:
        st.info("No cell's verdicts on a human-labelled item: nothing to map.")
        return
    st.caption(READING)
    summary = scale.select("judge", "format", "decoding", "target", "n", "n_prompts", "brier_raw", "brier_mapped",
                           "n_flagged")
    tables.show(summary)
    names = [f"{r['judge']} / {r['format']} / {r['decoding']} / {r['target']}" for r in scale.iter_rows(named=True)]
    row = scale.row(names.index(st.selectbox("Carry-over of", names)), named=True)
    st.markdown(flagged_sentence(row).capitalize() + ".")
    few = f"fewer than {MIN_N} labelled items: too few to say"
    tables.show(pl.DataFrame(row["carry_over"], schema={"system": pl.String, "n": pl.Int64, "residual": pl.Float64,
                                                        "lo": pl.Float64, "hi": pl.Float64, "flagged": pl.Boolean}),
                missing={"lo": few, "hi": few, "flagged": few})
    tables.show(pl.DataFrame({"score": row["map_score"], "p": row["map_p"]}), width="content")
