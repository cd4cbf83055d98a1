"""Curation subsets in the store: save one, with its members and how each was picked, in one
transaction (audit/_subsets.py reads them)."""

from __future__ import annotations

import os

import polars as pl

from ._database import next_id, one, transaction, writer
from .connection import pool_id


def save_subset(db: str | os.PathLike | None, pool: str, name: str, summary: dict,
                members: pl.DataFrame, sha256: str | None = None, export_path: str | None = None) -> int:
    """Store a subset (replacing one of the same name in the pool) with its members; its id.

    `summary` as train.curate.curate returns it; `members`: prompt_idx, cand_idx, value,
    pick_tied, cut_tied (the kept picks).
    """
    with writer(db) as con, transaction(con):
        pid = pool_id(con, pool)
        old = [r[0] for r in con.execute("SELECT subset_id FROM subsets WHERE pool_id = $p AND name = $n",
                                         {"p": pid, "n": name}).fetchall()]
        for sid in old:
            con.execute("DELETE FROM subset_members WHERE subset_id = $s", {"s": sid})
            con.execute("DELETE FROM subsets WHERE subset_id = $s", {"s": sid})
        sid = next_id(con, "subsets", "subset_id")
        judge = one(con, "SELECT judge_id FROM judges WHERE name = $n", {"n": summary.get("judge")})
        fmt = one(con, "SELECT format_id FROM formats WHERE name = $n", {"n": summary.get("format")})
        con.execute("""
            INSERT INTO subsets (subset_id, pool_id, name, judge_id, format_id, policy, rate, seed, judge, format,
                                 decoding, score, n_eligible, n_selected, n_pick_tied, n_cut_tied, n_heldout_prompts, cut_value,
                                 sha256, export_path)
            VALUES ($sid, $pid, $name, $jid, $fid, $policy, $rate, $seed, $judge, $format, $decoding, $score,
                    $n_eligible,
                    $n_selected, $n_pick_tied, $n_cut_tied, $n_heldout, $cut, $sha, $path)""",
                    {"sid": sid, "pid": pid, "name": name, "jid": judge[0] if judge else None,
                     "fid": fmt[0] if fmt else None, "policy": summary["policy"], "rate": summary["rate"],
                     "seed": summary["seed"], "judge": summary.get("judge"), "format": summary.get("format"),
                     "decoding": summary.get("decoding"), "score": summary.get("score"),
                     "n_eligible": summary["n_eligible"], "n_selected": summary["n_selected"],
                     "n_pick_tied": summary["n_pick_tied"], "n_cut_tied": summary["n_cut_tied"],
                     "n_heldout": summary["n_heldout_prompts"], "cut": summary["cut_value"],
                     "sha": sha256, "path": export_path})
        rows = members.select(pl.lit(sid, pl.Int32).alias("subset_id"), "cand_idx", "prompt_idx", "value",
                              "pick_tied", "cut_tied")
        con.register("members_df", rows.to_arrow())
        con.execute("INSERT INTO subset_members (subset_id, cand_idx, prompt_idx, value, pick_tied, cut_tied) "
                    "SELECT subset_id, cand_idx, prompt_idx, value, pick_tied, cut_tied FROM members_df")
        con.unregister("members_df")
    return sid
