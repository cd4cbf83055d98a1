"""Read-only access for the audit: short-lived connections and the named SQL files.

The path rule, the lock waiting and the pool lookup are the store's (ingest/store/connection.py),
the one module of `ingest` the audit imports.
"""

from __future__ import annotations

import contextlib
import os
from functools import cache
from importlib import resources
from typing import Iterator

import duckdb
import polars as pl

from ingest.store import connection
from ingest.store.connection import UserError, db_path

__all__ = ["AuditError", "connect", "db_path", "numpy", "pool_id", "query", "sql"]


# per open connection: {pool_id: why its attached files cannot be read} (connection.verdict_source)
_CHANGED: dict[int, dict[int, str]] = {}


class AuditError(UserError):
    """A request the audit cannot answer (no database, no such pool); shown to the user as is."""


@contextlib.contextmanager
def connect(path: str | os.PathLike | None = None, timeout_s: float | None = None
            ) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection; waits with backoff while a writer holds the file, up to timeout_s
    (default: $JUDGEAUDIT_LOCK_TIMEOUT, read now rather than at import; 600 s when unset)."""
    p = db_path(path)
    if not p.is_file():
        raise AuditError(connection.missing_database(p))
    with connection.read_only(p, timeout_s) as con:
        # the one verdict source every audit query reads (`FROM verdict_source`): the stored rows and
        # the attached files' rows; a pool whose attached files changed is refused by pool_id()
        _CHANGED[id(con)] = connection.verdict_source(con)
        try:
            yield con
        finally:
            _CHANGED.pop(id(con), None)


@cache
def sql(name: str) -> str:
    """The text of audit/sql/NAME.sql."""
    return (resources.files("audit") / "sql" / f"{name}.sql").read_text(encoding="utf-8")


def query(con: duckdb.DuckDBPyConnection, name: str, **params) -> pl.DataFrame:
    """Run audit/sql/NAME.sql with bound $parameters; a polars frame."""
    return con.sql(sql(name), params=params).pl()


def pool_id(con: duckdb.DuckDBPyConnection, pool: str) -> int:
    """The pool's id; an AuditError naming the known pools when there is none, or naming the file
    when one of the pool's attached files changed or went since it was attached."""
    pid = connection.pool_id(con, pool, AuditError)
    changed = _CHANGED.get(id(con), {}).get(pid)
    if changed:
        raise AuditError(changed)
    return pid


def numpy(con: duckdb.DuckDBPyConnection, name: str, **params) -> dict:
    """Run audit/sql/NAME.sql; one numpy array per column (for large results headed to numpy;
    the SQL replaces NULLs, which would otherwise arrive as masked arrays)."""
    return con.sql(sql(name), params=params).fetchnumpy()
