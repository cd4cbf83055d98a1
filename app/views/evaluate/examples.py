"""The Evaluate page's prompt-by-prompt view of one contrast: the prompts where condition a gained
most and lost most, each with both answers and the reference-top answer."""

from __future__ import annotations

import polars as pl
import streamlit as st

from app import data
from app.views.evaluate.small_n import best_and_worst_count


def best_and_worst(study: str, pick: dict, gens: pl.DataFrame) -> None:
    """pick: a contrast row (judge, a, b); gens: the study's generations (data.study_generations)."""
    diffs = data.prompt_differences(study, pick["judge"], pick["a"], pick["b"])
    k = best_and_worst_count(diffs.height)                     # best and worst never show the same prompt twice
    lists = (("Best for a", diffs.head(k)), ("Worst for a", diffs.tail(k).reverse())) if k else \
        (("One held-out prompt only: no best or worst to tell apart", diffs),)
    for title, rows in lists:
        st.markdown(f"**{title}**")
        for r in rows.iter_rows(named=True):
            g = gens.filter(pl.col("prompt_id") == r["prompt_id"]).sort("seed")
            with st.expander(f"{r['prompt_id']}: {pick['a']} {r['mean_a']:.2f} vs {pick['b']} {r['mean_b']:.2f}"):
                st.write(g["prompt"][0])
                answers = [(c, g.filter(pl.col("condition") == c)["answer"].first() or "") for c in (pick["a"], pick["b"])]
                for col, (caption, text) in zip(st.columns(3),
                                              answers + [("reference-top answer", g["reference_answer"][0])]):
                    col.caption(caption)
                    col.text(text)
