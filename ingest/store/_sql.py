"""The store's SQL, one statement per file in `store/sql/` (docs/layout.md#the-database), named after what it reads or does and opening with a comment that says so. Parameters
are bound as `$name`; table and column names are written out in the file, never pasted in.

A file may hold a few statements, each ending with `;` at the end of a line, when they are one step
(deleting everything about a pool): `script` runs them in order in the caller's transaction.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

import duckdb
import polars as pl

_PARAM = re.compile(r"\$([A-Za-z_]\w*)")


@cache
def text(name: str) -> str:
    """The text of store/sql/NAME.sql."""
    return (resources.files("ingest.store") / "sql" / f"{name}.sql").read_text(encoding="utf-8")


def params_of(sql: str) -> set[str]:
    """The $names a statement binds."""
    return set(_PARAM.findall(sql))


def execute(con: duckdb.DuckDBPyConnection, name: str, /, **params) -> duckdb.DuckDBPyConnection:
    """Run store/sql/NAME.sql with bound $parameters."""
    return con.execute(text(name), params)


def rows(con: duckdb.DuckDBPyConnection, name: str, /, **params) -> list[tuple]:
    """Every row of store/sql/NAME.sql."""
    return con.execute(text(name), params).fetchall()


def first(con: duckdb.DuckDBPyConnection, name: str, /, **params) -> tuple | None:
    """The first row of store/sql/NAME.sql, or None; reads the result to its end so the connection is free."""
    found = rows(con, name, **params)
    return found[0] if found else None


def frame(con: duckdb.DuckDBPyConnection, name: str, /, **params) -> pl.DataFrame:
    """store/sql/NAME.sql as a polars frame."""
    return con.sql(text(name), params=params).pl()


@cache
def statements(name: str) -> tuple[str, ...]:
    """The statements of store/sql/NAME.sql, in order (each ends with `;` at the end of a line)."""
    parts = re.split(r";[ \t]*(?:\n|$)", text(name))
    return tuple(p for p in parts if p.strip() and not all(line.strip().startswith("--") or not line.strip()
                                                            for line in p.splitlines()))


def script(con: duckdb.DuckDBPyConnection, name: str, /, **params) -> None:
    """Run each statement of store/sql/NAME.sql in order, each with the $parameters it names."""
    for statement in statements(name):
        con.execute(statement, {k: v for k, v in params.items() if k in params_of(statement)})
