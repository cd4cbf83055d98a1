"""The Report page's downloads, re-exported by app/data.py: every stored judge call of a pool, as
`judgeaudit export-verdicts` writes it, made once per database state and handed to the button as bytes."""

from __future__ import annotations

import streamlit as st

import audit
from app.database_state import db_state


@st.cache_data(show_spinner=False, max_entries=2)
def _verdicts_parquet(path: str, mtime: float, pool: str) -> bytes:
    import io
    buffer = io.BytesIO()
    audit.verdict_rows(path, pool).write_parquet(buffer, compression="zstd")
    return buffer.getvalue()


def verdicts_parquet(pool: str) -> bytes:
    """Every stored judge call of the pool as Parquet, one row each with the columns of `judgeaudit
    export-verdicts` (audit.verdict_rows): the Report page's download, made when it is clicked."""
    return _verdicts_parquet(*db_state(), pool)


@st.cache_data(show_spinner=False, max_entries=2)
def _verdicts_jsonl(path: str, mtime: float, pool: str) -> bytes:
    lines = [line for batch in audit.verdict_batches(path, pool, json_lines=True)
             for line in batch.column("line").to_pylist()]
    return ("\n".join(lines) + "\n").encode() if lines else b""


def verdicts_jsonl(pool: str) -> bytes:
    """verdicts_parquet's rows as JSON lines (export-verdicts --json): the Report page's JSONL download."""
    return _verdicts_jsonl(*db_state(), pool)
