"""Read-only access for the audit: short-lived connections and the named SQL files."""

from __future__ import annotations

import contextlib
import os
import random
import sys
import time
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Iterator

import duckdb
import polars as pl


class AuditError(Exception):
    """A request the audit cannot answer (no database, no such pool); shown to the user as is."""


def db_path(path: str | os.PathLike | None = None) -> Path:
    return Path(path or os.environ.get("JUDGEAUDIT_DB") or "judgeaudit.duckdb")


@contextlib.contextmanager
def connect(path: str | os.PathLike | None = None, timeout_s: float | None = None
            ) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection; waits with backoff while a writer holds the file, up to timeout_s
    (default: $JUDGEAUDIT_LOCK_TIMEOUT, read now rather than at import; 600 s when unset)."""
    if timeout_s is None:
        timeout_s = float(os.environ.get("JUDGEAUDIT_LOCK_TIMEOUT", "600"))
    p = db_path(path)
    if not p.is_file():
        raise AuditError(f"{p}: no such database (import a pool first, or pass --db)")
    deadline, delay, told = time.monotonic() + timeout_s, 0.05, False
    while True:
        try:
            con = duckdb.connect(str(p), read_only=True)
            break
        except (duckdb.IOException, duckdb.ConnectionException) as exc:
            # another process writes, or this process has the file open read-write right now
            text = str(exc).lower()
            if ("lock" not in text and "different configuration" not in text) or time.monotonic() > deadline:
                raise
            if not told:
                print(f"judgeaudit: {p} is being written by another process; waiting...",
                      file=sys.stderr, flush=True)
                told = True
            time.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, 2.0)
    try:
        yield con
    finally:
        con.close()


@cache
def sql(name: str) -> str:
    """The text of audit/sql/NAME.sql."""
    return (resources.files("audit") / "sql" / f"{name}.sql").read_text(encoding="utf-8")


def query(con: duckdb.DuckDBPyConnection, name: str, **params) -> pl.DataFrame:
    """Run audit/sql/NAME.sql with bound $parameters; a polars frame."""
    return con.sql(sql(name), params=params).pl()


def pool_id(con: duckdb.DuckDBPyConnection, pool: str) -> int:
    rows = con.execute("SELECT pool_id FROM pools WHERE name = $name", {"name": pool}).fetchall()
    if not rows:
        names = [r[0] for r in con.execute("SELECT name FROM pools ORDER BY name").fetchall()]
        raise AuditError(f"no pool named '{pool}' (known: {', '.join(names) or 'none'})")
    return rows[0][0]


def numpy(con: duckdb.DuckDBPyConnection, name: str, **params) -> dict:
    """Run audit/sql/NAME.sql; one numpy array per column (for large results headed to numpy;
    the SQL replaces NULLs, which would otherwise arrive as masked arrays)."""
    return con.sql(sql(name), params=params).fetchnumpy()
