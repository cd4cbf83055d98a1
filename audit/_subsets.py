"""Curation subsets as stored (ingest.store writes them), and the texts of a pool's candidates."""

from __future__ import annotations

import os

import polars as pl

from ._db import connect, db_path, pool_id, query

SUBSET_COLUMNS = ("subset_id", "pool", "name", "policy", "judge", "format", "decoding", "score", "rate", "seed",
                  "n_eligible", "n_selected", "n_pick_tied", "n_cut_tied", "n_heldout_prompts", "cut_value",
                  "sha256", "export_path", "created_at")


def candidate_texts(db: str | os.PathLike | None, pool: str, cand_idx: list[int]) -> pl.DataFrame:
    """The prompt and response of the given candidates, in the order given.

    Columns: cand_idx, prompt_idx, prompt_id, candidate_id, prompt, response.
    """
    wanted = pl.DataFrame({"cand_idx": cand_idx, "ord": range(len(cand_idx))},
                          schema={"cand_idx": pl.Int64, "ord": pl.Int64})
    with connect(db) as con:
        pid = pool_id(con, pool)
        con.register("wanted_df", wanted.to_arrow())
        try:
            return query(con, "candidate_texts", pool_id=pid)
        finally:
            con.unregister("wanted_df")


def subsets(db: str | os.PathLike | None, pool: str | None = None) -> pl.DataFrame:
    """Stored subsets (of one pool, or all), newest last. Columns: SUBSET_COLUMNS."""
    with connect(db) as con:
        return query(con, "subsets", pool=pool, sha256=None)


def subset_by_hash(db: str | os.PathLike | None, sha256: str) -> dict | None:
    """The newest stored subset whose exported file has this SHA-256, or None (also when there
    is no database)."""
    if not db_path(db).is_file():
        return None
    with connect(db) as con:
        found = query(con, "subsets", pool=None, sha256=sha256)
    return found.to_dicts()[-1] if found.height else None
