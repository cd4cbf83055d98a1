"""Curation subsets as stored (ingest.store writes them), and the texts of a pool's candidates."""

from __future__ import annotations

import os

import polars as pl

from ingest.store.database import Database

from ._read import reading

SUBSET_COLUMNS = ("subset_id", "pool", "name", "policy", "judge", "format", "decoding", "score", "rate", "seed",
                  "n_eligible", "n_selected", "n_pick_tied", "n_cut_tied", "n_heldout_prompts", "cut_value",
                  "sha256", "export_path", "created_at")


def candidate_texts(db: str | os.PathLike | None, pool: str, cand_idx: list[int]) -> pl.DataFrame:
    """The prompt and response of the given candidates, in the order given.

    Columns: cand_idx, prompt_idx, prompt_id, candidate_id, prompt, response.
    """
    wanted = pl.DataFrame({"cand_idx": cand_idx, "ord": range(len(cand_idx))},
                          schema={"cand_idx": pl.Int64, "ord": pl.Int64})
    with reading(db) as read:
        pid = read.pool_id(pool)
        with read.frames(wanted_df=wanted):
            return read.frame("candidate_texts", pool_id=pid)


def subsets(db: str | os.PathLike | None, pool: str | None = None) -> pl.DataFrame:
    """Stored subsets (of one pool, or all), newest last. Columns: SUBSET_COLUMNS."""
    with reading(db) as read:
        return read.frame("subsets", pool=pool, sha256=None)


def subset_by_hash(db: str | os.PathLike | None, sha256: str) -> dict | None:
    """The newest stored subset whose exported file has this SHA-256, or None (also when there
    is no database)."""
    if not Database.of(db).exists():
        return None
    with reading(db) as read:
        found = read.frame("subsets", pool=None, sha256=sha256)
    return found.to_dicts()[-1] if found.height else None
