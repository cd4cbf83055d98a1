"""Report: the reporting checklist, rendered, with Markdown and JSON downloads."""

import json

import streamlit as st

import audit
from app import data

pool = data.page_pool("Report")
doc = data.checklist(pool)
markdown = audit.checklist_markdown(doc)
stem = f"checklist-{data.file_stem(pool)}"   # a pool imported from the CLI may have any name
left, right = st.columns(2)
left.download_button("Download Markdown", markdown, file_name=f"{stem}.md", mime="text/markdown")
right.download_button("Download JSON", json.dumps(doc, indent=2, default=str), file_name=f"{stem}.json",
                      mime="application/json")
st.download_button("Download verdicts (Parquet)", lambda: data.verdicts_parquet(pool),   # built on click
                   file_name=f"verdicts-{data.file_stem(pool)}.parquet", mime="application/vnd.apache.parquet",
                   help="Every stored judge call, one row each: the columns of judgeaudit export-verdicts")
st.markdown(markdown)
