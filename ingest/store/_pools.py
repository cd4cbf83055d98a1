"""Pools: a validated pool file stored under a name, and everything about a pool deleted on --replace."""

from __future__ import annotations

import os

import polars as pl

from .._errors import UserError
from ..files import file_sha256, pool_shape, read_pool
from ._database import next_id, one, transaction, writer
from .connection import find_pool


def _delete_pool(con, pid: int) -> None:
    """Everything stored about a pool (a --replace starts it anew): its children first (subset
    members; a study's generations and outcomes), then every table with a pool_id column."""
    con.execute("DELETE FROM subset_members WHERE subset_id IN "
                "(SELECT subset_id FROM subsets WHERE pool_id = $p)", {"p": pid})
    for child in ("generations", "evaluations"):
        con.execute(f"DELETE FROM {child} WHERE study_id IN (SELECT study_id FROM studies WHERE pool_id = $p)",
                    {"p": pid})
    tables = [r[0] for r in con.execute(
        "SELECT DISTINCT table_name FROM information_schema.columns WHERE column_name = 'pool_id' "
        "AND table_name <> 'pools' AND table_schema = 'main' ORDER BY 1").fetchall()]
    for table in tables:        # names from the catalogue, never from input
        con.execute(f'DELETE FROM "{table}" WHERE pool_id = $p', {"p": pid})
    con.execute("DELETE FROM pools WHERE pool_id = $p", {"p": pid})


def import_pool(db: str | os.PathLike | None, path: str | os.PathLike, name: str,
                replace: bool = False) -> dict:
    """Validate a pool file and store it under `name`. Lands whole or not at all."""
    if not name or not name.strip():
        raise UserError("--pool: a pool name is required")
    data = read_pool(path)          # all validation happens before the database is touched
    digest = file_sha256(path)
    with writer(db) as con, transaction(con):
        old = find_pool(con, name)
        if old is not None and not replace:
            raise UserError(f"pool '{name}' already exists (use --replace to overwrite it and "
                            "its verdicts)")
        replaced = 0
        if old is not None:
            replaced = one(con, "SELECT count(*) FROM verdicts WHERE pool_id = $p", {"p": old})[0]
            _delete_pool(con, old)
        pid = next_id(con, "pools", "pool_id")
        con.execute("INSERT INTO pools (pool_id, name, source_file, source_sha256, layout) "
                    "VALUES ($id, $name, $file, $sha, $layout)",
                    {"id": pid, "name": name, "file": str(path), "sha": digest, "layout": data.layout})
        prompts = data.prompts.with_columns(pl.lit(pid, pl.Int32).alias("pool_id"))
        candidates = data.candidates.with_columns(pl.lit(pid, pl.Int32).alias("pool_id"))
        con.register("prompts_df", prompts.to_arrow())
        con.register("candidates_df", candidates.to_arrow())
        con.execute("INSERT INTO prompts (pool_id, prompt_idx, prompt_id, prompt) "
                    "SELECT pool_id, prompt_idx, prompt_id, prompt FROM prompts_df")
        con.execute("INSERT INTO candidates (pool_id, cand_idx, prompt_idx, candidate_id, position, "
                    "response, reference, model, split) SELECT pool_id, cand_idx, prompt_idx, "
                    "candidate_id, position, response, reference, model, split FROM candidates_df")
        con.unregister("prompts_df")
        con.unregister("candidates_df")
    return {"pool": name, "layout": data.layout, "replaced_verdicts": replaced,
            **pool_shape(data.candidates)}
