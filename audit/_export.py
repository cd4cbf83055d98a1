"""A pool's stored judge calls as they are, one row per call (`judgeaudit export-verdicts`, the
Report page's download): for other tools (pandas, polars, R, DuckDB) and other machines."""

from __future__ import annotations

import os
from typing import Iterator

import polars as pl

from ._read import reading

EXPORT_COLUMNS = ("judge", "format", "decoding", "prompt_id", "candidate_a", "candidate_b", "sample", "raw",
                  "label", "value", "status", "error", "label_probs", "tokens_in", "tokens_out", "latency_ms",
                  "endpoint")
# `label` and `label_probs` are the parsed answer and its distribution, under a verdict file's names
# (docs/files.md#verdict-file)
BATCH_ROWS = 131_072


def verdict_rows(db: str | os.PathLike | None, pool: str) -> pl.DataFrame:
    """One row per stored call of the pool, ordered by judge, format, decoding, prompt, candidates
    and sample. Columns: EXPORT_COLUMNS (docs/files.md#export-verdicts): candidate_b null for
    pointwise calls; value on the format's own scale (comparative: the margin for slot A), null
    unless parsed; status parsed | unparsed | failed; label_probs a JSON object as text, or null;
    endpoint the server that answered (an online run's calls stored before it was recorded: the
    judge's endpoint; null for a batch runner's answers)."""
    with reading(db) as read:
        return read.frame("export_verdicts", pool_id=read.pool_id(pool)).select(EXPORT_COLUMNS)


def verdict_batches(db: str | os.PathLike | None, pool: str, json_lines: bool = False,
                    rows: int = BATCH_ROWS) -> Iterator:
    """The rows of verdict_rows as Arrow record batches of up to `rows` rows, streamed from the
    database (a large pool is never whole in memory); the read-only connection stays open until
    the last batch is read. With `json_lines`, each batch has one column, `line`: the row as one
    JSON object (label_probs nested as an object, not as text), ready to be written as JSONL."""
    with reading(db) as read:
        pid = read.pool_id(pool)
        # with json_lines, the same rows, each as one JSON object (export_verdict_lines.sql)
        reader = read.batches("export_verdict_lines" if json_lines else "export_verdicts", rows, pool_id=pid)
        empty = True
        for batch in reader:
            empty = False
            yield batch
        if empty:   # a pool without calls: one empty batch still carries the columns and their types
            import pyarrow as pa
            yield pa.RecordBatch.from_pylist([], schema=reader.schema)


def export_counts(db: str | os.PathLike | None, pool: str) -> pl.DataFrame:
    """How many rows verdict_rows holds per (sample, status), counted in the database (a large pool's
    rows are never read out). Columns: sample, status, n."""
    with reading(db) as read:
        return read.frame("export_counts", pool_id=read.pool_id(pool))


def export_counts_by_judging(db: str | os.PathLike | None, pool: str) -> pl.DataFrame:
    """export_counts per judging: judge, format, sample, status, n (the derived result's parts)."""
    with reading(db) as read:
        return read.frame("export_counts_by_judging", pool_id=read.pool_id(pool))
