"""The pools in the database, and the candidates of one."""

from __future__ import annotations

import os

import polars as pl

from ._db import connect, pool_id, query


def pools(db: str | os.PathLike | None) -> pl.DataFrame:
    """One row per pool. Columns: name, n_prompts, n_candidates."""
    with connect(db) as con:
        return query(con, "pools").select("name", "n_prompts", "n_candidates")


def pool_candidates(db: str | os.PathLike | None, pool: str) -> pl.DataFrame:
    """One row per candidate. Columns: prompt_idx, prompt_id, candidate_id, position, k (candidates
    of its prompt), reference, model, split, response_chars."""
    with connect(db) as con:
        return query(con, "pool_candidates", pool_id=pool_id(con, pool))
