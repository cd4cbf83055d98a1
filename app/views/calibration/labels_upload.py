"""The Calibration page's label upload: a labels file (or the demo pool's bundled labels) into the
pool, with the result as a note after the rerun."""

from __future__ import annotations

import polars as pl
import streamlit as st

from app import data
from audit import plural
from ingest import UserError


def labels_upload(pool: str, labels: pl.DataFrame) -> None:
    """The expander with the upload form; imports on submit and reruns the page."""
    with st.expander(f"Human labels ({labels.height} stored)", expanded=labels.height == 0):
        with st.form("labels", clear_on_submit=True):
            upload = st.file_uploader("Labels (.jsonl)", type=["jsonl", "ndjson"])
            source = st.radio("Layout", ["jsonl", "mtbench", "llmfao"], horizontal=True,
                              help="jsonl: prompt_id, a_id, b_id, label (A, B or tie), optional annotator; "
                                   "mtbench: MT-Bench expert votes; llmfao: LLMFAO crowd votes")
            replace = st.checkbox("Replace the pool's stored labels")
            submitted = st.form_submit_button("Import labels")
        bundled = data.bundled_labels(pool)
        if bundled is not None and labels.height == 0 and st.button(f"Import the bundled labels ({bundled.name})"):
            data.import_labels(bundled, pool)
            st.rerun()
    if submitted and upload is not None:
        try:
            out = data.import_labels_upload(pool, upload.name, upload.getvalue(), source, replace)
        except UserError as exc:
            st.error(str(exc))
        else:
            st.session_state["labels_note"] = (f"Imported {plural(out['imported'], 'label')} ("
                                               f"{plural(out['n_pairs'], 'pair')}, "
                                               f"{plural(out['n_annotators'], 'annotator')}).")
            st.rerun()
    if "labels_note" in st.session_state:
        st.success(st.session_state.pop("labels_note"))
