"""Curation subsets in the store: save one (with its members and how they were picked), read the
texts to export, find a subset by the hash of its exported file. Writes in one transaction."""

from __future__ import annotations

import os

import polars as pl

from . import _db
from ._errors import UserError
from .store import _next_id, pool_id

SUBSET_COLUMNS = ("subset_id", "pool", "name", "policy", "judge", "format", "decoding", "score", "rate", "seed", "n_eligible",
                  "n_selected", "n_pick_tied", "n_cut_tied", "n_heldout_prompts", "cut_value", "sha256",
                  "export_path", "created_at")


def _pool(con, pool: str) -> int:
    pid = pool_id(con, pool)
    if pid is None:
        raise UserError(f"--pool: no pool named '{pool}'")
    return pid


def candidate_texts(db: str | os.PathLike | None, pool: str, cand_idx: list[int]) -> pl.DataFrame:
    """The prompt and response of the given candidates, in the order given.

    Columns: cand_idx, prompt_idx, prompt_id, candidate_id, prompt, response.
    """
    with _db.reader(db) as con:
        pid = _pool(con, pool)
        con.register("wanted_df", pl.DataFrame({"cand_idx": cand_idx, "ord": range(len(cand_idx))},
                                               schema={"cand_idx": pl.Int64, "ord": pl.Int64}).to_arrow())
        try:
            return _db.frame(con, """
                SELECT c.cand_idx::BIGINT AS cand_idx, c.prompt_idx::BIGINT AS prompt_idx, p.prompt_id,
                       c.candidate_id, p.prompt, c.response
                FROM wanted_df w
                JOIN candidates c ON c.pool_id = $pool AND c.cand_idx = w.cand_idx
                JOIN prompts p ON p.pool_id = c.pool_id AND p.prompt_idx = c.prompt_idx
                ORDER BY w.ord""", {"pool": pid})
        finally:
            con.unregister("wanted_df")


def save_subset(db: str | os.PathLike | None, pool: str, name: str, summary: dict,
                members: pl.DataFrame, sha256: str | None = None, export_path: str | None = None) -> int:
    """Store a subset (replacing one of the same name in the pool) with its members; its id.

    `summary` as train.curate.curate returns it; `members`: prompt_idx, cand_idx, value,
    pick_tied, cut_tied (the kept picks).
    """
    with _db.writer(db) as con, _db.transaction(con):
        pid = _pool(con, pool)
        old = [r[0] for r in con.execute("SELECT subset_id FROM subsets WHERE pool_id = $p AND name = $n",
                                         {"p": pid, "n": name}).fetchall()]
        for sid in old:
            con.execute("DELETE FROM subset_members WHERE subset_id = $s", {"s": sid})
            con.execute("DELETE FROM subsets WHERE subset_id = $s", {"s": sid})
        sid = _next_id(con, "subsets", "subset_id")
        judge = _db.one(con, "SELECT judge_id FROM judges WHERE name = $n", {"n": summary.get("judge")})
        fmt = _db.one(con, "SELECT format_id FROM formats WHERE name = $n", {"n": summary.get("format")})
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


_SELECT = """
    SELECT s.subset_id, p.name AS pool, s.name, s.policy, s.judge, s.format, s.decoding, s.score, s.rate, s.seed, s.n_eligible,
           s.n_selected, s.n_pick_tied, s.n_cut_tied, s.n_heldout_prompts, s.cut_value, s.sha256,
           s.export_path, s.created_at
    FROM subsets s JOIN pools p ON p.pool_id = s.pool_id"""


def subsets(db: str | os.PathLike | None, pool: str | None = None) -> pl.DataFrame:
    """Stored subsets (of one pool, or all), newest last. Columns: SUBSET_COLUMNS."""
    with _db.reader(db) as con:
        if pool is None:
            return _db.frame(con, _SELECT + " ORDER BY s.subset_id")
        return _db.frame(con, _SELECT + " WHERE p.name = $pool ORDER BY s.subset_id", {"pool": pool})


def subset_by_hash(db: str | os.PathLike | None, sha256: str) -> dict | None:
    """The newest stored subset whose exported file has this SHA-256, or None (also when there
    is no database)."""
    if not _db.db_path(db).is_file():
        return None
    _db.ensure_current(db)
    with _db.reader(db) as con:
        found = _db.frame(con, _SELECT + " WHERE s.sha256 = $sha ORDER BY s.subset_id DESC LIMIT 1",
                          {"sha": sha256})
    return found.to_dicts()[0] if found.height else None
