"""Align: a judge's instructions and demonstrations chosen on the human labels of training prompts
(a background `judgeaudit align` run), then before → after on held-out prompts with its interval, and
the chosen prompt verbatim."""

import polars as pl
import streamlit as st

from app import data, tables, url_state
from app.runs_panel import runs_panel
from app.views.align.form import (align_request, cell_options, gain_sentence, gepa_sentence, judge_sentence,
                                  reference_sentence)
from ingest import UserError

pool = data.page_pool("Align")
st.caption("Searches the format's wording and K demonstrations drawn from human-labelled items of training "
           "prompts, by agreement with the human labels, within a budget of judge calls. The pool's held-out "
           "prompts and a share of the others are set apart first: their labels are never shown or scored "
           "in the search, and the gain is measured on them.")
cells = cell_options(data.result("scored_cells", pool))
if not cells:
    st.info("No scored cell in this pool: score it on the Score page first.")
    st.stop()
with st.form("align"):      # each field kept in the address (app/url_state.py) as it is set
    if st.session_state.get(url_state.ALIGN_CELL) not in (None, *cells):     # a cell of another pool
        del st.session_state[url_state.ALIGN_CELL]
    cell = st.selectbox("Cell (judge / format / decoding)", cells, format_func=" / ".join, key=url_state.ALIGN_CELL,
                        bind="query-params")
    a, b, c = st.columns(3)
    k = a.number_input("Demonstrations", 0, 8, 2, key=url_state.ALIGN_K, bind="query-params")
    budget = b.number_input("Budget (judge calls)", 10, 100_000, 200, step=50, key=url_state.ALIGN_BUDGET,
                            bind="query-params")
    share = c.slider("Held-out share", 0.0, 0.8, 0.3, 0.05, key=url_state.ALIGN_SHARE, bind="query-params",
                     help="Of the labelled prompts the pool does not already hold out: kept out of the search, "
                          "and where the gain is measured.")
    go = st.form_submit_button("Align", type="primary")
if go:
    try:
        run_id = data.launch_align(align_request(pool, cell, k, budget, share), pool, cell[0])
        st.success(f"Started align run {run_id}.")
    except UserError as exc:
        st.error(str(exc))
runs_panel("align", pool)

done = [r for r in data.runs_of("align", pool) if r["status"] == "finished"]
doc = data.align_result(done[-1]) if done else None
if doc is None:
    st.stop()
st.subheader(f"Run {doc['run_id']}: {doc['original_judge']} / {doc['format']} / {doc['decoding']}")
st.markdown(gain_sentence(doc))
for line in (reference_sentence(doc), gepa_sentence(doc)):
    if line is not None:
        st.markdown(line)
st.markdown(judge_sentence(doc))
st.markdown(f"**Instructions** ({doc['instructions_name']}):")
st.code(doc["instructions"], language=None, wrap_lines=True)
if doc["demonstrations"]:
    st.markdown("**Demonstrations** (the human labels shown, as the format's answers):")
    tables.show(pl.DataFrame(doc["demonstrations"]))
with st.expander("The aligned prompt, verbatim"):
    st.code(doc["template"], language=None, wrap_lines=True)
