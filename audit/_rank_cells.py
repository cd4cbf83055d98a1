"""Bradley-Terry rankings of systems read out of core (the derived results at 10M candidates).

`rank(db, pool, by='candidate_id')` (audit.rank; by='prompt' is audit._rank.rank's) reads each comparative
cell as its prompts' kinds, grouped in DuckDB (rank_cell_kinds.sql: per order, the distinct per-prompt vectors
of summed credit and calls per pair of systems, each with how many prompts it stands for, the systems as
integer codes in candidate_id order; where no call is swapped the single order's calls are the both order's,
so they are grouped once and fitted for both orders) instead of one row per call with its strings, and fits
each (cell, order) from those rows (audit._rank.fit_cell with `n_games` and `unit_count`). The fit is that of
rank_calls on the calls one by one (every credit is a multiple of one half, so the sums that replace the
per-call rows are exact), and so is the bootstrap: both draw the kinds numbered by their first prompt in
prompt_id order with the cell's generator (tests/audit/test_rank_cells.py checks it against an independent
fit: scipy's optimiser on the Bradley-Terry log-likelihood, and a bootstrap of the prompts' kinds;
tests/audit/test_rank_kinds.py, the kinds' draws against the prompts' by simulation).
"""

from __future__ import annotations

import os

import numpy as np
import polars as pl

from ._bias import cell_rng
from ._read import reading
from ._rank import ORDERS, _ranks, fit_cell, ranking_frame
from ._rank import rank as rank_by_call


def _fit_part(rows: dict, mask: np.ndarray, systems: np.ndarray, n_boot: int, rng: np.random.Generator,
              prior: float | None) -> pl.DataFrame:
    """_rank_group's frame for the rows of one (cell, order) (`mask` of rank_cell_kinds' rows: the
    order's kinds, each a unit that stands for its `prompts`)."""
    lo_code, hi_code = rows["lo"][mask], rows["hi"][mask]
    present = np.unique(np.concatenate([lo_code, hi_code]))     # the part's systems, in id order
    local = np.full(systems.size, -1, np.int64)
    local[present] = np.arange(present.size)
    ids = systems[present].tolist()
    kind = rows["kind"][mask].astype(np.int64)
    prompts = np.zeros(int(kind.max()) + 1, np.int64)
    prompts[kind] = rows["prompts"][mask]
    n_games = rows["n"][mask]
    fit = fit_cell(kind, local[lo_code], local[hi_code], rows["credit"][mask], len(ids), n_boot, rng, prior,
                   n_games=n_games, unit_count=prompts)
    strength = fit["strength"]
    return pl.DataFrame({
        "id": ids, "strength": strength, "lo": fit["lo"], "hi": fit["hi"],
        "rank": _ranks(strength, ids), "games": fit["games"], "wins": fit["wins"],
        "n_calls": int((n_games * prompts[kind]).sum()), "n_units": int(prompts.sum()),
        "prior": fit["prior"]}).with_columns(pl.col("rank").replace(0, None))


def rank_systems(db: str | os.PathLike | None, pool: str, n_boot: int = 1000, seed: int = 0,
                 prior: float | None = None) -> pl.DataFrame:
    """audit.rank(db, pool, by='candidate_id', ...), read aggregated per cell (the module's doc)."""
    frames = []
    with reading(db) as read:
        pid = read.pool_id(pool)
        cells = read.frame("rank_cells", pool_id=pid)
        systems = np.array(read.frame("rank_systems", pool_id=pid)["candidate_id"].to_list(), dtype=object)
        for judge_id, format_id, judge, fmt, decoding in cells.iter_rows():
            rows = read.numpy("rank_cell_kinds", pool_id=pid, judge_id=judge_id, format_id=format_id,
                              decoding=decoding)
            same = bool(rows["single_is_both"].size and rows["single_is_both"][0])   # no call swapped
            for order in ORDERS:
                mask = rows["ord"] == ("both" if same and order == "single" else order)
                if not mask.any():
                    continue
                rng = cell_rng(seed, judge, fmt, decoding, order)
                frames.append(_fit_part(rows, mask, systems, n_boot, rng, prior).with_columns(
                    pl.lit(None, pl.String).alias("prompt_id"), pl.lit(judge).alias("judge"),
                    pl.lit(fmt).alias("format"), pl.lit(decoding).alias("decoding"), pl.lit(order).alias("order")))
    return ranking_frame(frames)


def rank(db: str | os.PathLike | None, pool: str, by: str = "candidate_id", n_boot: int = 1000,
         seed: int = 0, prior: float | None = None) -> pl.DataFrame:
    """audit.rank (its doc: audit._rank.rank): by='candidate_id' read aggregated per cell (rank_systems),
    by='prompt' from every call (audit._rank.rank)."""
    if by == "candidate_id":
        return rank_systems(db, pool, n_boot=n_boot, seed=seed, prior=prior)
    return rank_by_call(db, pool, by=by, n_boot=n_boot, seed=seed, prior=prior)
