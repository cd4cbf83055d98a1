"""Curation subsets in the store: save one, with its members and how each was picked, in one
transaction (audit/_subsets.py reads them)."""

from __future__ import annotations

import os

import polars as pl

from . import _sql
from ._database import next_id, transaction, writer
from .connection import pool_id


def save_subset(db: str | os.PathLike | None, pool: str, name: str, summary: dict,
                members: pl.DataFrame, sha256: str | None = None, export_path: str | None = None) -> int:
    """Store a subset (replacing one of the same name in the pool) with its members; its id.

    `summary` as train.curate.curate returns it; `members`: prompt_idx, cand_idx, value,
    pick_tied, cut_tied (the kept picks).
    """
    with writer(db) as con, transaction(con):
        pid = pool_id(con, pool)
        for (old,) in _sql.rows(con, "subsets_named", pool_id=pid, name=name):
            _sql.script(con, "delete_subset", subset_id=old)
        sid = next_id(con, "subsets")
        judge = _sql.first(con, "stored_judge", name=summary.get("judge"))
        fmt = _sql.first(con, "stored_format", name=summary.get("format"))
        _sql.execute(con, "insert_subset", subset_id=sid, pool_id=pid, name=name, judge_id=judge[0] if judge else None,
                     format_id=fmt[0] if fmt else None, policy=summary["policy"], rate=summary["rate"],
                     seed=summary["seed"], judge=summary.get("judge"), format=summary.get("format"),
                     decoding=summary.get("decoding"), score=summary.get("score"),
                     n_eligible=summary["n_eligible"], n_selected=summary["n_selected"],
                     n_pick_tied=summary["n_pick_tied"], n_cut_tied=summary["n_cut_tied"],
                     n_heldout_prompts=summary["n_heldout_prompts"], cut_value=summary["cut_value"],
                     sha256=sha256, export_path=export_path)
        rows = members.select(pl.lit(sid, pl.Int32).alias("subset_id"), "cand_idx", "prompt_idx", "value",
                              "pick_tied", "cut_tied")
        con.register("members_df", rows.to_arrow())
        try:
            _sql.execute(con, "insert_subset_members")
        finally:
            con.unregister("members_df")
    return sid
