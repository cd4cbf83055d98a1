"""Verdict rows: one per judge call, inserted or upserted in the caller's transaction. Every write
to verdicts goes through here, and this module keeps the one-row-per-call rule (migration 011)."""

from __future__ import annotations

import os

import polars as pl

from . import _sql
from ._database import reader
from .database import Database

VERDICT_COLUMNS = ("cell_run_id", "pool_id", "judge_id", "format_id", "prompt_idx", "a_idx", "b_idx",
                   "swapped", "sample", "raw", "answer", "value", "status", "error", "attempts",
                   "latency_ms", "tokens_in", "tokens_out", "answer_probs", "expected", "decoding", "endpoint")


# One judge call, within a pool: the database holds at most one row per key (migration 003; kept by
# insert_verdicts and insert_answers since migration 011 dropped the index). The SQL files that match a
# call spell the key out (sql/stored_call_statuses.sql, replace_failed_answers.sql, insert_new_answers.sql).
CALL_KEY = ["judge_id", "format_id", "decoding", "prompt_idx", "a_idx", "b_idx", "sample"]


def _complete(rows: pl.DataFrame) -> pl.DataFrame:
    """Verdict rows with every column of VERDICT_COLUMNS (missing optional ones null/default)."""
    defaults = {"b_idx": pl.Int32, "raw": pl.String, "answer": pl.String, "value": pl.Float64,
                "error": pl.String, "latency_ms": pl.Float64, "tokens_in": pl.Int32,
                "tokens_out": pl.Int32, "answer_probs": pl.String, "expected": pl.Float64, "endpoint": pl.String}
    rows = rows.with_columns([pl.lit(None, dtype).alias(c) for c, dtype in defaults.items()
                              if c not in rows.columns])
    fixed = {"swapped": pl.lit(False), "attempts": pl.lit(1, pl.Int32), "decoding": pl.lit("greedy")}
    rows = rows.with_columns([value.alias(c) for c, value in fixed.items() if c not in rows.columns])
    return rows.select(VERDICT_COLUMNS)


def _repeats(rows: pl.DataFrame, key: list[str]) -> int:
    """How many rows repeat an earlier row's `key`. One hash per key first: when the hashes are all
    different, so are the keys; only when two meet are the keys themselves compared."""
    if rows.select(pl.struct(key).hash()).to_series().n_unique() == rows.height:
        return 0
    return rows.height - rows.select(key).n_unique()


def _judgings_hold_rows(con, rows: pl.DataFrame) -> bool:
    """Whether the database holds any verdict of the judgings (judge, format) of `rows`, in their pools."""
    judgings = {f"{c}s": rows[c].unique().to_list() for c in ("pool_id", "judge_id", "format_id")}
    return _sql.rows(con, "judgings_hold_verdicts", **judgings) != []


def stored_statuses(con, rows: pl.DataFrame) -> pl.Series:
    """For each row (pool_id and CALL_KEY columns), the status of its call's stored row; null when
    the call is not stored. Joins in the database: the stored keys are never read into memory, so
    the cost of a batch does not grow with the rows already held. Skipped when the batch's judgings
    hold no rows; otherwise the rows matching a stored call on the integer columns are found
    first, and only they are compared on the whole key."""
    out = pl.repeat(None, rows.height, dtype=pl.String, eager=True).alias("stored_status")
    if rows.height == 0 or not _judgings_hold_rows(con, rows):
        return out
    keys = rows.select("pool_id", *CALL_KEY).with_row_index("_pos")
    near = _query_keys(con, keys, "calls_near_stored")
    if near.height == 0:
        return out
    hits = _query_keys(con, keys[near["_pos"].to_numpy()], "stored_call_statuses")
    return out.scatter(hits["_pos"].to_numpy(), hits["status"])


def _query_keys(con, keys: pl.DataFrame, name: str) -> pl.DataFrame:
    """Run sql/NAME.sql over `keys`, registered as call_keys."""
    con.register("call_keys", keys.to_arrow())
    try:
        return _sql.frame(con, name)
    finally:
        con.unregister("call_keys")


def holds_verdicts(con, pool: int, judge: int, fmt: int) -> bool:
    """Whether the database holds any verdict of the judging (judge, format) in the pool."""
    return _sql.rows(con, "judgings_hold_verdicts", pool_ids=[pool], judge_ids=[judge], format_ids=[fmt]) != []


def insert_verdicts(con, rows: pl.DataFrame, cell_run_of: dict[tuple[int, int], int],
                    check_stored: bool = True) -> pl.DataFrame:
    """Append the verdict rows (columns from VERDICT_COLUMNS but cell_run_id; missing optional ones
    become null) whose call is not stored yet, and return them; a row naming a stored call is left
    out. One row per call is this function's rule, not an index's (migration 011): a batch that
    repeats a call is refused whole (ValueError, so the caller's transaction rolls back; callers
    check first and name the line at fault). `cell_run_of` gives the cell run each judging's
    (judge_id, format_id) rows are stored under; a judging that gets rows without one is refused
    (ValueError). `check_stored=False`: the caller knows that no call of `rows` is stored (a
    streamed import whose judgings held nothing before it and whose batches it checked against each
    other, or rows it kept from stored_statuses to start cell runs only for the judgings that get rows)."""
    repeats = _repeats(rows, ["pool_id", *CALL_KEY])
    if repeats:
        raise ValueError(f"{repeats} verdict row(s) repeat a call of the same batch; nothing was stored")
    if check_stored:
        rows = rows.filter(stored_statuses(con, rows).is_null())
    judgings = rows.select("judge_id", "format_id").unique().sort("judge_id", "format_id").rows()
    missing = [judging for judging in judgings if judging not in cell_run_of]
    if missing:
        raise ValueError(f"no cell run for the judging (judge_id, format_id) {missing[0]}; nothing was stored")
    cell_run_ids = pl.DataFrame([(*judging, cell_run_of[judging]) for judging in judgings], orient="row",
                                schema={"judge_id": rows.schema["judge_id"], "format_id": rows.schema["format_id"],
                                        "cell_run_id": pl.Int32})
    rows = rows.drop("cell_run_id", strict=False)
    rows = rows.hstack(rows.select("judge_id", "format_id").join(cell_run_ids, on=["judge_id", "format_id"],
                                                                 how="left", maintain_order="left")
                       .select("cell_run_id"))
    con.register("verdict_rows", _complete(rows).to_arrow())
    try:
        _sql.execute(con, "insert_verdict_rows")
    finally:
        con.unregister("verdict_rows")
    return rows


def orient_anchored(con, pool: int, cell_run_ids: list[int], format_ids: list[int], anchors: pl.DataFrame) -> None:
    """Set `swapped` of the cell runs' verdicts in the anchored formats from each prompt's anchor
    (`anchors`: prompt_idx, anchor_idx), for an import whose anchors come from its whole file."""
    if not cell_run_ids or not format_ids or anchors.height == 0:
        return
    con.register("import_anchors", anchors.to_arrow())
    try:
        _sql.execute(con, "orient_imported_anchored", pool_id=pool, cell_run_ids=cell_run_ids, format_ids=format_ids)
    finally:
        con.unregister("import_anchors")


def insert_answers(con, rows: pl.DataFrame) -> dict:
    """Upsert a scoring run's batch (docs/scoring.md#one-row-per-call-one-judge-per-name): a call not stored yet is inserted;
    a stored failed attempt is replaced by the new row (attempts add up); a stored answer (parsed
    or not) is never replaced. Every match is within the row's own pool. Returns the counts."""
    rows = _complete(rows)
    if rows.height == 0:
        return {"inserted": 0, "replaced": 0, "kept": 0}
    # Within the batch too, one row per call: an answer before a failed attempt, then the latest.
    rows = (rows.with_row_index("_order").sort([pl.col("status") != "failed", "_order"])
            .unique(subset=["pool_id", *CALL_KEY], keep="last", maintain_order=True).drop("_order"))
    con.register("new_rows", rows.to_arrow())
    try:
        replaced = _sql.first(con, "replace_failed_answers")[0]
        inserted = _sql.first(con, "insert_new_answers")[0]
    finally:
        con.unregister("new_rows")
    return {"inserted": inserted, "replaced": replaced, "kept": rows.height - inserted - replaced}


def unanswered(con, calls: pl.DataFrame, pool: int, judge: int | None = None) -> pl.DataFrame:
    """The calls (CALL_KEY columns) the pool holds no answer for, from any judge or one; a failed
    attempt is not an answer."""
    done = _sql.frame(con, "answered_calls", pool_id=pool, judge_id=judge)
    return calls.join(done.cast({c: calls.schema[c] for c in CALL_KEY}), on=CALL_KEY, how="anti",
                      nulls_equal=True)


def pool_judges(db: str | os.PathLike | None) -> set[tuple[str, str]]:
    """(pool, judge) names of each judge holding verdicts in a pool; none without a database file."""
    p = Database.of(db).path
    if not p.is_file():
        return set()
    with reader(p) as con:
        return set(_sql.rows(con, "pool_judges"))


def verdict_file_rows(db: str | os.PathLike | None, pool: str, judge: str) -> list[dict]:
    """The stored calls of `judge` in `pool`, as a verdict file names them (sql/verdict_file_rows.sql):
    format, prompt_id, a_id, b_id, raw, error, sample, decoding, label_probs, kind, latency_ms."""
    with reader(db) as con:
        return _sql.frame(con, "verdict_file_rows", pool=pool, judge=judge).to_dicts()
