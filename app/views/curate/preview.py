"""The Curate & Train page's preview of one curation: its counts, the selecting values around the
cut, response lengths kept and dropped, examples at the cut, and the overlap between formats. All
of it from stored results (train/curation_view.py through data.result): a few hundred rows
whatever the pool's size, the six examples' texts among them."""

from __future__ import annotations

import polars as pl
import streamlit as st

from app import data, pool_summary
from audit import plural
from train.curation_view import OVERLAP_RATES, SEED, first_choice, split_view, view_args
from train.heldout import SHARE
from app.tables import view as table_view
from app.views.curate import form as tf


def heldout_words(n_heldout: int, n_marked: int, share: float = SHARE) -> str:
    """Where the held-out prompts come from, said where curation sets them aside: the prompts the pool
    marks (split = heldout), else a seeded share of its prompts (train/heldout.py)."""
    why = ("the prompts this pool marks as held out (split = heldout)" if n_marked else
           f"a seeded {share:.0%} of this pool's prompts, since it marks none as held out (split = heldout)")
    return (f"Held out for evaluation: {plural(n_heldout, 'prompt')}, {why}; never curated, and the prompts "
            "the Evaluate page answers.")


def curation_preview(pool: str, cell: pl.DataFrame, policy: str, judge: str | None, fmt: str | None,
                     decoding: str | None, rate: float, seed: int, cells: pl.DataFrame) -> None:
    """The curation drawn: cell = the scored cells of the chosen judge (all without one), for the
    overlap between its formats; cells = every scored cell (which the first view chooses among)."""
    s, values, chars, examples = split_view(data.result("curation", pool, *view_args(cells, policy, judge, fmt, decoding, rate, seed)))
    m = st.columns(4)
    m[0].metric("Eligible prompts", s["n_eligible"], help=f"{s['n_heldout_prompts']} held-out prompts never selected")
    m[1].metric("Selected", s["n_selected"])
    m[2].metric("Tie-broken picks", f"{s['n_tie_broken'] / max(s['n_selected'], 1):.0%}",
                help=f"{s['n_pick_tied']} within a prompt, {s['n_cut_tied']} at the cut: coin flips, not quality")
    m[3].metric("Cut", "n/a" if s["cut_value"] is None else f"{s['cut_value']:.3g}")
    marked = pool_summary.counts(data.result("pool_summary", pool))[3]      # candidates marked held out
    st.caption(heldout_words(s["n_heldout_prompts"], marked))
    left, right = st.columns(2)
    left.altair_chart(tf.binned_chart(values, "selecting value (score, length or reference)", s["cut_value"]),
                      width="stretch")
    right.altair_chart(tf.binned_chart(chars, "response length (characters; ~4 per token)", stacked=False),
                       width="stretch")
    with st.expander("Kept and dropped examples at the cut, side by side"):
        for col, name in zip(st.columns(2), ("kept", "dropped")):
            part = examples.filter(pl.col("set") == name)
            col.dataframe(**table_view(part.select("prompt_id", "prompt", "response", "value")), hide_index=True)
    if policy == "judge" and cell["format"].n_unique() > 1:
        fmts = sorted(cell["format"].unique().to_list())
        first = (judge, decoding, seed) == (first_choice(cells)[1], None, SEED)   # what `derive` stores
        st.caption("Overlap of the selected examples between formats (Jaccard), at each rate")
        st.dataframe(**table_view(data.result("curation_overlap", 
            pool, *(() if first else (judge, tuple(fmts), decoding, OVERLAP_RATES, seed)))), hide_index=True)
