"""The Report page's downloads: the checklist (Markdown, JSON) and every stored verdict (Parquet,
JSONL), each built as bytes when the page draws (cached per database state), under a stable key: a
second click downloads again (a callable's deferred file was gone by then: "Deferred file ... not
found"). Beside them, what the export counts and why that differs from the Overview's Verdicts card."""

from __future__ import annotations

import json
import re

import polars as pl
import streamlit as st

from app import data, tables


def export_counts(counts: pl.DataFrame) -> dict:
    """counts: the export's rows per sample and status (audit.export_counts: sample, status, n) ->
    rows (every stored call, each sample its own row), calls (sample 0: the Overview's Verdicts card),
    repeats (samples past the first), parsed, unparsed, failed (over all rows)."""
    total = int(counts["n"].sum())
    status = counts.group_by("status").agg(pl.col("n").sum())
    count = dict(zip(status["status"].to_list(), status["n"].to_list()))
    first = int(counts.filter(pl.col("sample") == 0)["n"].sum())
    return {"rows": total, "calls": first, "repeats": total - first, "parsed": count.get("parsed", 0),
            "unparsed": count.get("unparsed", 0), "failed": count.get("failed", 0)}


def counts_text(c: dict) -> str:
    """The export's count in words, reconciled with the Verdicts card (583 calls vs 1,187 rows)."""
    repeats = (f" + {c['repeats']:,} further samples of repeated calls (each sample its own row)"
               if c["repeats"] else "")
    return (f"The verdict export holds **{c['rows']:,} rows**: {c['calls']:,} judge calls (what the Overview's "
            f"Verdicts card counts: each call once, its first sample){repeats}. Of all rows {c['parsed']:,} parsed, "
            f"{c['unparsed']:,} unparsed and {c['failed']:,} failed: the export keeps every stored attempt's outcome.")


def downloads(pool: str, doc: dict, markdown: str) -> None:
    stem = f"checklist-{data.file_stem(pool)}"   # a pool imported from the CLI may have any name
    verdicts = f"verdicts-{data.file_stem(pool)}"
    a, b, c, d = st.columns(4)
    a.download_button("Download Markdown", markdown.encode(), file_name=f"{stem}.md", mime="text/markdown",
                      key="dl-md", on_click="ignore")
    b.download_button("Download JSON", json.dumps(doc, indent=2, default=str).encode(), file_name=f"{stem}.json",
                      mime="application/json", key="dl-json", on_click="ignore")
    counts = export_counts(data.result("export_counts", pool))     # stored: the page draws without reading the verdicts
    asked = st.session_state.setdefault("verdict-downloads", set())
    if pool not in asked:      # the files are made on request: every verdict of a 10M pool is gigabytes
        if c.button(f"Prepare the verdict downloads ({counts['rows']:,} rows)", key="dl-prepare",
                    help="Every stored judge call, one row each, as Parquet and as JSON lines: the columns of "
                         "judgeaudit export-verdicts (on a large pool this takes a while)"):
            asked.add(pool)
            st.rerun()
    else:
        c.download_button("Download verdicts (Parquet)", data.verdicts_parquet(pool), file_name=f"{verdicts}.parquet",
                          mime="application/vnd.apache.parquet", key="dl-parquet", on_click="ignore",
                          help="Every stored judge call, one row each: the columns of judgeaudit export-verdicts")
        d.download_button("Download verdicts (JSONL)", data.verdicts_jsonl(pool), file_name=f"{verdicts}.jsonl",
                          mime="application/jsonl", key="dl-jsonl", on_click="ignore",
                          help="The same rows as JSON lines (export-verdicts --json): label_probs nested as an object")
    st.caption(counts_text(counts))


def split_tables(markdown: str) -> list[str | pl.DataFrame]:
    """The checklist's Markdown in parts: text, and each table (a block of lines starting with "|")
    as a frame of its cells' text, so a page draws the table in a scrolling grid that fits a 1280 px
    window (a Markdown table of 13 columns does not)."""
    parts, text, table = [], [], []

    def flush_table():
        if table:
            head = [c.strip() for c in table[0].strip().strip("|").split("|")]
            rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in table[2:]]
            parts.append(pl.DataFrame(rows, schema={h: pl.String for h in head}, orient="row"))
            table.clear()

    for line in markdown.split("\n"):
        if line.startswith("|"):
            if text:
                parts.append("\n".join(text))
                text = []
            table.append(line)
        else:
            flush_table()
            text.append(line)
    flush_table()
    if text:
        parts.append("\n".join(text))
    return parts


NUMBER = re.compile(r"^[-−]?\d+(\.\d+)?$")      # the file writes a negative number with the minus sign


def as_read(part: pl.DataFrame) -> pl.DataFrame:
    """A checklist table's cells as the dashboard's tables write numbers (app.tables.cell_text): the
    file's fixed decimals ("1.000", "7.00") as "1" and "7", "0.1234" as "0.123"; other text as it is."""
    def read(v: str) -> str:
        return tables.cell_text(float(v.replace("−", "-"))) if NUMBER.match(v) else v
    return part.with_columns(pl.col(c).map_elements(read, return_dtype=pl.String) for c in part.columns)


def checklist_view(markdown: str) -> None:
    """The checklist drawn: its text as Markdown, its tables through app.tables (they fit the page)."""
    for part in split_tables(markdown):
        if isinstance(part, str):
            st.markdown(part)
        else:
            tables.show(as_read(part))
