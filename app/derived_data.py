"""The reading pages' stored results beyond the audit's cells (issue 29: Rankings, Report, Judges,
What labels are worth, Pool), re-exported by app/data.py: each reads app/derived.py's `cached_result`
(this process's copy, else the stored frame, else computed once with a progress bar and stored) with
the arguments the page passes, so a page's first view on a pool whose last run refreshed them
(`judgeaudit derive`, or the run itself) computes nothing. Other arguments (a slider moved) are
stored too, computed once per pool state."""

from __future__ import annotations

import json

import polars as pl

from app.database_state import db_file, db_state
from app.derived import MOVED_SHOWN, cached_result, price_args


def _stored(name: str, pool: str, *args) -> pl.DataFrame:
    return cached_result(name, *db_state(), pool, *args)


def reader(name: str):
    """(pool, *args) -> the stored result `name` (app/data.py's readers of the audit's per-cell results)."""
    return lambda pool, *args: _stored(name, pool, *args)


def rank(pool: str, by: str = "candidate_id", n_boot: int = 100) -> pl.DataFrame:
    """audit.rank of the pool (the Rankings page: 100 resamples on first view)."""
    return _stored("rank", pool, by, int(n_boot))


def style_rank(pool: str, n_boot: int, seed: int = 0, cell: tuple[str, str, str] | None = None,
               penalty: float = 0.0) -> pl.DataFrame:
    """audit.style_rank of one cell: without a bootstrap or a penalty, the stored fit of every cell
    filtered to it (each cell is fitted on its own: the same numbers); else that cell's fit alone
    (the Rankings page's toggles: a bootstrap, the ridge fallback), stored under those arguments."""
    if n_boot == 0 and seed == 0 and not penalty:
        frame = _stored("style_rank", pool, 0, 0)
        if cell is None:
            return frame
        return frame.filter((pl.col("judge") == cell[0]) & (pl.col("format") == cell[1])
                            & (pl.col("decoding") == cell[2]))
    return _stored("style_rank", pool, int(n_boot), int(seed), tuple(cell) if cell else None, float(penalty))


def placeholders(pool: str) -> dict:
    """audit.placeholder_texts of the pool as a dict (app.placeholders' warning)."""
    return _stored("placeholders", pool).to_dicts()[0]


def checklist(pool: str) -> dict:
    """audit.checklist's document (its generated_at: when it was computed from this state of the pool)."""
    return json.loads(_stored("checklist", pool)["json"][0])


def judges_board(pool: str) -> pl.DataFrame:
    """audit.judges for the pool at the prices in the server's judgeaudit.toml (ingest.endpoints)."""
    from ingest.endpoints import prices
    return _stored("judges_board", pool, price_args(prices(db_file())))


def estimate(pool: str, target: str, baseline: str | None = None, alpha: float = 0.05) -> pl.DataFrame:
    """audit.estimate of the pool (What labels are worth)."""
    return _stored("estimate", pool, target, baseline, float(alpha))


def systems(pool: str) -> list[str]:
    """The pool's distinct candidate_ids, sorted (the baselines What labels are worth offers)."""
    return _stored("systems", pool)["candidate_id"].to_list()


def pool_summary(pool: str) -> pl.DataFrame:
    """app.pool_summary.summary of the pool's candidates: counts, prompts per k, binned references and lengths."""
    return _stored("pool_summary", pool)


def pool_head(pool: str) -> pl.DataFrame:
    """The pool's first candidates (app.pool_summary.HEAD), as audit.pool_candidates lists them."""
    return _stored("pool_head", pool)


def export_counts(pool: str) -> pl.DataFrame:
    """audit.export_counts of the pool: the verdict export's rows per (sample, status)."""
    return _stored("export_counts", pool)


def call_count(pool: str, formats: list[str], schedule: str, swap: str) -> dict:
    """The calls `judgeaudit score` would plan: {"total", "per_format"} (ingest.scoring.count_calls),
    stored per form (formats, schedule, swap as typed)."""
    frame = _stored("call_count", pool, tuple(formats), schedule, str(swap))
    per = dict(zip(frame["format"].to_list(), frame["n"].to_list()))
    return {"total": sum(per.values()), "per_format": per}


def drift(pool: str, judge: str, against: str) -> pl.DataFrame:
    """audit.drift of `judge` against `against` (the Drift page; its first two judges stored by the run)."""
    return _stored("drift", pool, judge, against)


def drift_items(pool: str, judge: str, against: str) -> pl.DataFrame:
    """audit.drift_items of `judge` against `against`: the first MOVED_SHOWN calls that moved."""
    return _stored("drift_items", pool, judge, against, None, MOVED_SHOWN)
