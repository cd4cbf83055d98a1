"""The Score page's jury form: define a named jury from the judges already run on the pool
(`judgeaudit jury`); every page then shows it as a judge."""

from __future__ import annotations

import polars as pl
import streamlit as st

from app import data, url_state
from audit import plural
from ingest import UserError

VOTES = {"mean": "mean of the members' values", "median": "median of the members' values",
         "majority": "the value more than half the members gave (else unparsed)"}


def jury_form(pool: str) -> None:
    """An expander: members (two or more of the pool's judges, juries left out), a name and a vote;
    saving stores the jury and its verdicts: its members' votes combined."""
    cells = data.result("cells", pool)
    judges = sorted(set(cells.filter(pl.col("aggregate") != "jury")["judge"].to_list())) if cells.height else []
    with st.expander("Define a jury from the judges already run", expanded=False):
        if len(judges) < 2:
            st.caption("A jury needs at least two judges run on this pool.")
            return
        members = st.multiselect("Members", judges, key=url_state.JURY_MEMBERS, bind="query-params")
        left, right = st.columns(2)
        name = left.text_input("Jury name", value="jury", key=url_state.JURY_NAME, bind="query-params")
        vote = right.radio("Vote", list(VOTES), horizontal=True, key=url_state.JURY_VOTE, bind="query-params", help="; ".join(
            f"{k}: {v}" for k, v in VOTES.items()) + ". A call is parsed when more than half the members parsed it.")
        if st.button("Save jury", key="jury-save", disabled=len(members) < 2):
            try:
                out = data.save_jury(pool, name, members, vote)
                st.success(f"Jury '{out['name']}' saved: {plural(out['n_verdicts'], 'verdict')}, {out['n_parsed']} parsed. "
                           "It shows as a judge on every page, and on the Judges page beside its members.")
            except UserError as exc:
                st.error(str(exc))
