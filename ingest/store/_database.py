"""The read-write side of the database: numbered migrations, short-lived connections, one
transaction per write, and ids that are never handed out twice. Internal to the store: code outside
it goes through the store's named verbs and units of work (`_units.py`), never a connection."""

from __future__ import annotations

import contextlib
import os
from importlib import resources
from typing import Iterator

import duckdb

from .._errors import UserError
from . import _sql
from .connection import IN_PROCESS, missing_database, open_with_retry, read_only, released
from .database import Database


def _migration_files() -> list[tuple[int, str, str]]:
    folder = resources.files("ingest.store") / "schema"
    out = []
    for entry in folder.iterdir():
        if entry.name.endswith(".sql"):
            number = int(entry.name.split("_", 1)[0])
            out.append((number, entry.name, entry.read_text(encoding="utf-8")))
    return sorted(out)


def migrate(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Apply the migrations not yet recorded in _migrations, each in its own transaction."""
    con.execute("CREATE TABLE IF NOT EXISTS _migrations (id INTEGER NOT NULL, name VARCHAR NOT NULL,"
                " applied_at TIMESTAMP NOT NULL DEFAULT current_timestamp)")
    done = {row[0] for row in con.execute("SELECT id FROM _migrations").fetchall()}
    applied = []
    for number, name, sql in _migration_files():
        if number in done:
            continue
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute(sql)
            con.execute("INSERT INTO _migrations (id, name) VALUES ($id, $name)",
                        {"id": number, "name": name})
            con.execute("COMMIT")
        except Exception:
            con.execute("ROLLBACK")
            raise
        applied.append(name)
    return applied


@contextlib.contextmanager
def writer(path: str | os.PathLike | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """A short-lived read-write connection on a migrated database."""
    p = Database.of(path).path
    if p.exists() and p.is_dir():
        raise UserError(f"{p}: is a directory, not a database file")
    p.parent.mkdir(parents=True, exist_ok=True)
    with IN_PROCESS, released(p):          # a `holding` block's connection closed for the write
        con = open_with_retry(p, read_only=False)
        try:
            migrate(con)
            yield con
        finally:
            con.close()


@contextlib.contextmanager
def reader(path: str | os.PathLike | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """A short-lived read-only connection. A missing file is a UserError, not an empty result."""
    p = Database.of(path).path
    if not p.exists():
        raise UserError(missing_database(p))
    with read_only(p) as con:
        yield con


@contextlib.contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """BEGIN ... COMMIT, or ROLLBACK on any exception: a write lands whole or not at all."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield con
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


def ensure_current(path: str | os.PathLike | None = None) -> None:
    """Bring an existing database up to the current schema (readers never migrate themselves)."""
    p = Database.of(path).path
    if not p.is_file():
        return
    with read_only(p) as con:
        tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        done = {r[0] for r in con.execute("SELECT id FROM _migrations").fetchall()} if "_migrations" in tables else set()
    if {n for n, _, _ in _migration_files()} - done:
        with writer(p):
            pass


# the query that reads the largest id in use of each table next_id serves (sql/largest_id_TABLE.sql)
LARGEST_ID = {"batch_exports": "largest_id_batch_exports", "calibrations": "largest_id_calibrations",
              "cell_runs": "largest_id_cell_runs", "formats": "largest_id_formats", "judges": "largest_id_judges",
              "label_queues": "largest_id_label_queues", "pools": "largest_id_pools", "runs": "largest_id_runs",
              "studies": "largest_id_studies", "subsets": "largest_id_subsets"}


def next_id(con, table: str, marked: bool = True) -> int:
    """A fresh id for `table`, never one handed out before (even if its rows were deleted): the
    high-water mark lives in id_marks; the largest id in use is read by sql/largest_id_TABLE.sql.
    `marked=False` for a table whose rows are never deleted (judges, formats): the next id is then
    the largest + 1 (and past any mark kept), and id_marks is not written, so a unit of work that
    adds a judge touches one table fewer (every table a checkpoint touches costs a 256 KiB block:
    schema/018)."""
    used = _sql.first(con, LARGEST_ID[table])[0]
    mark = con.execute("SELECT last_id FROM id_marks WHERE name = $n", {"n": table}).fetchone()
    new = max(used, mark[0] if mark else 0) + 1
    if not marked:
        return new
    if mark:
        con.execute("UPDATE id_marks SET last_id = $id WHERE name = $n", {"id": new, "n": table})
    else:
        con.execute("INSERT INTO id_marks VALUES ($n, $id)", {"n": table, "id": new})
    return new

