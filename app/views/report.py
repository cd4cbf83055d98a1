"""Report: the reporting checklist, rendered, with Markdown and JSON downloads."""

import json

import streamlit as st

import audit
from app import data

pool = data.page_pool("Report")
doc = data.checklist(pool)
markdown = audit.checklist_markdown(doc)
left, right = st.columns(2)
left.download_button("Download Markdown", markdown, file_name=f"checklist-{pool}.md", mime="text/markdown")
right.download_button("Download JSON", json.dumps(doc, indent=2, default=str), file_name=f"checklist-{pool}.json",
                      mime="application/json")
st.markdown(markdown)
