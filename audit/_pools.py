"""The pools in the database."""

from __future__ import annotations

import os

import polars as pl

from ._db import connect, query


def pools(db: str | os.PathLike | None) -> pl.DataFrame:
    """One row per pool. Columns: name, n_prompts, n_candidates."""
    with connect(db) as con:
        return query(con, "pools").select("name", "n_prompts", "n_candidates")
