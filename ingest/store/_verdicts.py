"""Verdict rows: one per judge call, inserted or upserted in the caller's transaction. Every write
to verdicts goes through here, and this module keeps the one-row-per-call rule (migration 011)."""

from __future__ import annotations

from typing import Callable

import polars as pl

from ._database import frame

VERDICT_COLUMNS = ("cell_run_id", "pool_id", "judge_id", "format_id", "prompt_idx", "a_idx", "b_idx",
                   "swapped", "sample", "raw", "label", "value", "status", "error", "attempts",
                   "latency_ms", "tokens_in", "tokens_out", "label_probs", "expected", "decoding", "endpoint")


# One judge call, within a pool: the database holds at most one row per key (migration 003; kept by
# insert_verdicts and insert_answers since migration 011 dropped the index).
CALL_KEY = ["judge_id", "format_id", "decoding", "prompt_idx", "a_idx", "b_idx", "sample"]
_SAME_CALL = " AND ".join(["v.pool_id = n.pool_id"] + [
    f"v.{c} IS NOT DISTINCT FROM n.{c}" if c == "b_idx" else f"v.{c} = n.{c}" for c in CALL_KEY])


def _complete(rows: pl.DataFrame) -> pl.DataFrame:
    """Verdict rows with every column of VERDICT_COLUMNS (missing optional ones null/default)."""
    defaults = {"b_idx": pl.Int32, "raw": pl.String, "label": pl.String, "value": pl.Float64,
                "error": pl.String, "latency_ms": pl.Float64, "tokens_in": pl.Int32,
                "tokens_out": pl.Int32, "label_probs": pl.String, "expected": pl.Float64, "endpoint": pl.String}
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


def _cells_hold_rows(con, rows: pl.DataFrame) -> bool:
    """Whether the database holds any verdict of the (pool, judge, format) cells of `rows`."""
    cells = {c: rows[c].unique().to_list() for c in ("pool_id", "judge_id", "format_id")}
    return con.execute("SELECT 1 FROM verdicts WHERE list_contains($pool_id, pool_id) AND "
                       "list_contains($judge_id, judge_id) AND list_contains($format_id, format_id) LIMIT 1",
                       cells).fetchall() != []


# The key's integer columns: a join on them alone is 2.5 times as fast as on the whole key
# (decoding is text, slot B may be null), and finds every stored call among its matches.
_SAME_INTEGERS = " AND ".join(f"v.{c} = n.{c}" for c in ("pool_id", "judge_id", "format_id", "prompt_idx",
                                                        "a_idx", "sample"))


def stored_statuses(con, rows: pl.DataFrame) -> pl.Series:
    """For each row (pool_id and CALL_KEY columns), the status of its call's stored row; null when
    the call is not stored. Joins in the database: the stored keys are never read into memory, so
    the cost of a batch does not grow with the rows already held. Skipped when the batch's cells
    hold no rows; otherwise the rows matching a stored call on the integer columns are found
    first, and only they are compared on the whole key."""
    out = pl.repeat(None, rows.height, dtype=pl.String, eager=True).alias("stored_status")
    if rows.height == 0 or not _cells_hold_rows(con, rows):
        return out
    keys = rows.select("pool_id", *CALL_KEY).with_row_index("_pos")
    near = _query_keys(con, keys, f"SELECT n._pos FROM call_keys n WHERE EXISTS (SELECT 1 FROM verdicts v "
                                  f"WHERE {_SAME_INTEGERS})")
    if near.height == 0:
        return out
    hits = _query_keys(con, keys[near["_pos"].to_numpy()],
                       f"SELECT n._pos, v.status FROM call_keys n JOIN verdicts v ON {_SAME_CALL}")
    return out.scatter(hits["_pos"].to_numpy(), hits["status"])


def _query_keys(con, keys: pl.DataFrame, sql: str) -> pl.DataFrame:
    """Run `sql` over `keys`, registered as call_keys."""
    con.register("call_keys", keys.to_arrow())
    try:
        return frame(con, sql)
    finally:
        con.unregister("call_keys")


def insert_verdicts(con, rows: pl.DataFrame,
                    cell_runs: Callable[[list[tuple[int, int]]], dict[tuple[int, int], int]]) -> pl.DataFrame:
    """Append the verdict rows (columns from VERDICT_COLUMNS but cell_run_id; missing optional ones
    become null) whose call is not stored yet, and return them; a row naming a stored call is left
    out. One row per call is this function's rule, not an index's (migration 011): a batch that
    repeats a call is refused whole (ValueError, so the caller's transaction rolls back; callers
    check first and name the line at fault). `cell_runs` is called once, with the (judge_id,
    format_id) cells that get rows, and returns the cell run each cell's rows are stored under."""
    repeats = _repeats(rows, ["pool_id", *CALL_KEY])
    if repeats:
        raise ValueError(f"{repeats} verdict row(s) repeat a call of the same batch; nothing was stored")
    rows = rows.filter(stored_statuses(con, rows).is_null())
    cells = rows.select("judge_id", "format_id").unique().sort("judge_id", "format_id").rows()
    runs = pl.DataFrame([(*cell, run) for cell, run in (cell_runs(cells) if cells else {}).items()], orient="row",
                        schema={"judge_id": rows.schema["judge_id"], "format_id": rows.schema["format_id"],
                                "cell_run_id": pl.Int32})
    rows = rows.drop("cell_run_id", strict=False)
    rows = rows.hstack(rows.select("judge_id", "format_id").join(runs, on=["judge_id", "format_id"], how="left",
                                                                 maintain_order="left").select("cell_run_id"))
    con.register("verdict_rows", _complete(rows).to_arrow())
    try:
        con.execute(f"INSERT INTO verdicts ({', '.join(VERDICT_COLUMNS)}) SELECT {', '.join(VERDICT_COLUMNS)} "
                    "FROM verdict_rows")
    finally:
        con.unregister("verdict_rows")
    return rows


_ANSWER_COLUMNS = [c for c in VERDICT_COLUMNS if c not in CALL_KEY and c not in ("pool_id", "attempts")]


def insert_answers(con, rows: pl.DataFrame) -> dict:
    """Upsert a scoring run's batch (DESIGN.md 'Judge identity'): a call not stored yet is inserted;
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
        replaced = con.execute(
            f"UPDATE verdicts v SET {', '.join(f'{c} = n.{c}' for c in _ANSWER_COLUMNS)}, "
            f"attempts = v.attempts + n.attempts, created_at = current_timestamp "
            f"FROM new_rows n WHERE {_SAME_CALL} AND v.status = 'failed'").fetchall()[0][0]
        inserted = con.execute(
            f"INSERT INTO verdicts ({', '.join(VERDICT_COLUMNS)}) SELECT {', '.join('n.' + c for c in VERDICT_COLUMNS)} "
            f"FROM new_rows n WHERE NOT EXISTS (SELECT 1 FROM verdicts v WHERE {_SAME_CALL})").fetchall()[0][0]
    finally:
        con.unregister("new_rows")
    return {"inserted": inserted, "replaced": replaced, "kept": rows.height - inserted - replaced}


def unanswered(con, calls: pl.DataFrame, pool: int, judge: int | None = None) -> pl.DataFrame:
    """The calls (CALL_KEY columns) the pool holds no answer for, from any judge or one; a failed
    attempt is not an answer."""
    done = frame(con, f"SELECT {', '.join(CALL_KEY)} FROM verdicts "
                          "WHERE pool_id = $p AND status <> 'failed' AND ($j IS NULL OR judge_id = $j)",
                     {"p": pool, "j": judge})
    return calls.join(done.cast({c: calls.schema[c] for c in CALL_KEY}), on=CALL_KEY, how="anti",
                      nulls_equal=True)


