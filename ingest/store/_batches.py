"""Batch exports (migration 010): which call each `custom_id` of a batch request file stands for,
written when the files are, and read back when their results are imported."""

from __future__ import annotations

import json

import polars as pl

from . import _sql
from ._database import next_id

BATCH_CALL_COLUMNS = ("custom_id", "cell_run_id", "pool_id", "judge_id", "format_id", "decoding", "prompt_idx",
                      "a_idx", "b_idx", "swapped", "sample")


def record_batch_export(con, pool: int, judge: int, identity: dict, decoding_settings: dict, folder: str,
                        files: list[dict], calls: pl.DataFrame) -> int:
    """Record one export and map each of its calls' `custom_id` (columns BATCH_CALL_COLUMNS) to
    it; a call exported before keeps its id and now points to this export. Returns the export id."""
    eid = next_id(con, "batch_exports")
    _sql.execute(con, "insert_batch_export", export_id=eid, pool_id=pool, judge_id=judge, identity=json.dumps(identity),
                 decoding_settings=json.dumps(decoding_settings), folder=folder, n_calls=calls.height,
                 files=json.dumps(files))
    if calls.height:
        rows = calls.select(BATCH_CALL_COLUMNS).with_columns(pl.lit(eid, pl.Int32).alias("export_id"))
        con.register("batch_rows", rows.to_arrow())
        try:
            _sql.execute(con, "upsert_batch_calls")
        finally:
            con.unregister("batch_rows")
    return eid


def exported_calls(con, custom_ids: list[str]) -> pl.DataFrame:
    """The stored calls among `custom_ids`, with their export's judge identity and decoding settings, the
    judge's identity now, and the pool's name: columns BATCH_CALL_COLUMNS, export_id,
    export_identity, export_decoding_settings, judge_identity, judge, pool. An id of a pool since replaced
    (its rows are gone) is not among them."""
    ids = pl.DataFrame({"custom_id": list(custom_ids)}, schema={"custom_id": pl.String})
    con.register("wanted_ids", ids.to_arrow())
    try:
        return _sql.frame(con, "exported_calls")
    finally:
        con.unregister("wanted_ids")
