"""Opening the DuckDB file: path resolution, lock waiting with backoff, numbered migrations.

DuckDB allows one read-write process or many read-only ones. Every connection here is short-lived;
a process that finds the file locked waits with exponential backoff and says so on stderr.
"""

from __future__ import annotations

import contextlib
import os
import random
import sys
import threading
import time
from importlib import resources
from pathlib import Path
from typing import Iterator

import duckdb

DEFAULT_DB = "judgeaudit.duckdb"


def lock_timeout_s() -> float:
    """$JUDGEAUDIT_LOCK_TIMEOUT (seconds, default 600), read when a connection is opened."""
    return float(os.environ.get("JUDGEAUDIT_LOCK_TIMEOUT", "600"))


def db_path(path: str | os.PathLike | None = None) -> Path:
    """The database file: the explicit path, else $JUDGEAUDIT_DB, else ./judgeaudit.duckdb."""
    return Path(path or os.environ.get("JUDGEAUDIT_DB") or DEFAULT_DB)


def _is_lock_error(exc: Exception) -> bool:
    """Another process holds the file, or another connection of this process holds it in the other
    mode (DuckDB refuses read-only and read-write connections to one file side by side in a process):
    both pass when that connection closes, and connections here are short-lived."""
    text = str(exc).lower()
    return ("lock" in text and ("conflicting" in text or "could not set" in text)) \
        or "different configuration" in text


def open_with_retry(path: Path, read_only: bool, timeout_s: float | None = None,
                    notify=None) -> duckdb.DuckDBPyConnection:
    """Connect, waiting (exponential backoff with jitter) while another process holds the lock,
    up to timeout_s (default: $JUDGEAUDIT_LOCK_TIMEOUT as it is now)."""
    timeout_s = lock_timeout_s() if timeout_s is None else timeout_s
    notify = notify or (lambda msg: print(msg, file=sys.stderr, flush=True))
    deadline = time.monotonic() + timeout_s
    delay, told = 0.05, False
    while True:
        try:
            return duckdb.connect(str(path), read_only=read_only)
        except (duckdb.IOException, duckdb.ConnectionException) as exc:
            if not _is_lock_error(exc) or time.monotonic() > deadline:
                raise
            if not told:
                notify(f"judgeaudit: {path} is in use by another process; waiting for it "
                       f"(up to {timeout_s:.0f} s)...")
                told = True
            time.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, 2.0)


def _migration_files() -> list[tuple[int, str, str]]:
    folder = resources.files("ingest") / "schema"
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


# One connection of this package open at a time in a process. Threads of one process (a run's
# writer, its heartbeat, the dashboard's sessions) would otherwise share one DuckDB instance, where
# registering a Python table in one thread while another opens or closes a connection fails
# ("Table Function with name python_arrow_scan does not exist"), and a read-only connection cannot
# open beside a read-write one. Connections are short-lived, so waiting here costs little.
_IN_PROCESS = threading.RLock()


@contextlib.contextmanager
def writer(path: str | os.PathLike | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """A short-lived read-write connection on a migrated database."""
    p = db_path(path)
    if p.exists() and p.is_dir():
        from ._errors import UserError
        raise UserError(f"{p}: is a directory, not a database file")
    p.parent.mkdir(parents=True, exist_ok=True)
    with _IN_PROCESS:
        con = open_with_retry(p, read_only=False)
        try:
            migrate(con)
            yield con
        finally:
            con.close()


@contextlib.contextmanager
def reader(path: str | os.PathLike | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """A short-lived read-only connection. A missing file is a UserError, not an empty result."""
    p = db_path(path)
    if not p.exists():
        from ._errors import UserError
        raise UserError(f"{p}: no such database (import a pool first, or pass --db)")
    with _IN_PROCESS:
        con = open_with_retry(p, read_only=True)
        try:
            yield con
        finally:
            con.close()


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


def frame(con: duckdb.DuckDBPyConnection, sql: str, params: dict | None = None):
    """Run a query with bound parameters and return a polars DataFrame."""
    return con.sql(sql, params=params or {}).pl()


def one(con: duckdb.DuckDBPyConnection, sql: str, params: dict | None = None) -> tuple | None:
    """The first row of a query, or None; reads the result to its end so the connection is free."""
    rows = con.execute(sql, params or {}).fetchall()
    return rows[0] if rows else None


def ensure_current(path: str | os.PathLike | None = None) -> None:
    """Bring an existing database up to the current schema (readers never migrate themselves)."""
    p = db_path(path)
    if not p.is_file():
        return
    with _IN_PROCESS:
        con = open_with_retry(p, read_only=True)
        try:
            tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
            done = {r[0] for r in con.execute("SELECT id FROM _migrations").fetchall()} if "_migrations" in tables else set()
        finally:
            con.close()
    if {n for n, _, _ in _migration_files()} - done:
        with writer(p):
            pass
