"""audit.rank(by='candidate_id') read aggregated per cell in DuckDB (audit/_rank_cells.py, issue 29)
against a copy of the code before it (every call read with its strings, fit_cell game by game), on
a pool with many ties, prompt_ids whose order is not their listing order, systems named out of
order, both orientations and unparsed calls: the same frame, exactly, bootstrap included."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from scipy.sparse import csr_matrix

from audit import rank
from audit._bias import cell_rng
from audit._read import reading
from audit._rank import DEFAULT_PRIOR, ORDERS, RANK_COLUMNS, BOOT_TOL, _edges, _largest_group, _mm_edges, _ranks, _strong
from tests.fixtures import synthetic_pool, synthetic_verdicts, write_jsonl


# -- the code before issue 29's change, verbatim (fit_cell) or as rank_calls ran it (by system) --

def fit_cell(unit: np.ndarray, i: np.ndarray, j: np.ndarray, credit: np.ndarray, n: int,
             n_boot: int, rng: np.random.Generator, prior: float | None = None) -> dict:
    """Bradley-Terry strengths of n items from games (i vs j, credit = i's share of the win), with a
    95% percentile bootstrap that resamples the units (prompts) with replacement.

    Returns strength, lo, hi (arrays of n; NaN outside the largest connected group), games, wins,
    prior (the virtual tie games per met pair that were used: 0 when the MLE exists)."""
    wins = np.zeros((n, n))
    np.add.at(wins, (i, j), credit)
    np.add.at(wins, (j, i), 1.0 - credit)
    games = wins + wins.T
    keep = _largest_group(games) if n > 1 else np.ones(n, bool)
    idx = np.flatnonzero(keep)
    m = idx.size
    ei, ej, wf, wb = _edges(wins[np.ix_(idx, idx)][None])
    used = prior if prior is not None else (0.0 if _strong(ei, ej, wf, wb, m)[0] else DEFAULT_PRIOR)
    strength = np.full(n, np.nan)
    logs, _ = _mm_edges(ei, ej, wf + used / 2, wb + used / 2, m)
    strength[idx] = logs[0]
    lo, hi = np.full(n, np.nan), np.full(n, np.nan)
    if n_boot > 0 and m > 1:
        # each unit's wins on each edge, each way: (n_units, 2E) sparse; a resample is a weighted sum
        remap = np.full(n, -1)
        remap[idx] = np.arange(m)
        inside = keep[i] & keep[j]
        a, b, u, c = remap[i[inside]], remap[j[inside]], unit[inside], credit[inside]
        edge_of = {(x, y): e for e, (x, y) in enumerate(zip(ei.tolist(), ej.tolist()))}
        lo_first = a < b
        e = np.array([edge_of[(min(x, y), max(x, y))] for x, y in zip(a.tolist(), b.tolist())], dtype=np.int64)
        E = ei.size
        fwd_credit = np.where(lo_first, c, 1.0 - c)      # credit of the lower-numbered item ei
        n_units = int(unit.max()) + 1
        per_unit = csr_matrix((np.concatenate([fwd_credit, 1.0 - fwd_credit]),
                               (np.concatenate([u, u]), np.concatenate([e, e + E]))), shape=(n_units, 2 * E))
        chunk = max(1, 2_000_000 // max(2 * E, n_units, m))
        draws = []
        for first in range(0, n_boot, chunk):
            size = min(chunk, n_boot - first)
            weights = rng.multinomial(n_units, np.full(n_units, 1.0 / n_units), size=size).astype(float)
            bw = np.asarray((per_unit.T @ weights.T).T)
            bf, bb = bw[:, :E], bw[:, E:]
            bprior = np.where(_strong(ei, ej, bf, bb, m), 0.0, DEFAULT_PRIOR) if used == 0 \
                else np.full(size, used)
            met = (bf + bb) > 0
            add = bprior[:, None] / 2 * met
            logs, _ = _mm_edges(ei, ej, bf + add, bb + add, m, tol=BOOT_TOL, start=strength[idx])
            draws.append(logs)
        draws = np.concatenate(draws)
        with np.errstate(all="ignore"):
            lo[idx], hi[idx] = np.nanpercentile(draws, [2.5, 97.5], axis=0)
    return {"strength": strength, "lo": lo, "hi": hi, "games": games.sum(axis=1),
            "wins": wins.sum(axis=1), "prior": used}


def _old_rank_group(calls: pl.DataFrame, n_boot: int, rng, prior) -> pl.DataFrame:
    ids = sorted(set(calls["a_id"].to_list()) | set(calls["b_id"].to_list()))
    code = {c: k for k, c in enumerate(ids)}
    a = np.array([code[x] for x in calls["a_id"].to_list()], dtype=np.int64)
    b = np.array([code[x] for x in calls["b_id"].to_list()], dtype=np.int64)
    v = calls["value"].to_numpy()
    credit = np.where(v > 0, 1.0, np.where(v < 0, 0.0, 0.5))
    _, unit = np.unique(calls["prompt_id"].to_numpy(), return_inverse=True)
    fit = fit_cell(unit.astype(np.int64), a, b, credit, len(ids), n_boot, rng, prior)
    strength = fit["strength"]
    return pl.DataFrame({
        "id": ids, "strength": strength, "lo": fit["lo"], "hi": fit["hi"],
        "rank": _ranks(strength, ids), "games": fit["games"], "wins": fit["wins"],
        "n_calls": calls.height, "n_units": int(unit.max()) + 1 if unit.size else 0,
        "prior": fit["prior"]}).with_columns(pl.col("rank").replace(0, None))


def old_rank(db, pool: str, n_boot: int, seed: int, prior=None) -> pl.DataFrame:
    with reading(db) as con:
        calls = con.frame("rank_calls", pool_id=con.pool_id(pool))
    frames = []
    cells = calls.select("judge", "format", "decoding").unique().sort("judge", "format", "decoding")
    for judge, fmt, decoding in cells.iter_rows():
        cell = calls.filter((pl.col("judge") == judge) & (pl.col("format") == fmt) & (pl.col("decoding") == decoding))
        for order in ORDERS:
            part = cell if order == "both" else cell.filter(~pl.col("swapped"))
            if part.height == 0:
                continue
            rng = cell_rng(seed, judge, fmt, decoding, order)
            frames.append(_old_rank_group(part, n_boot, rng, prior).with_columns(
                pl.lit(None, pl.String).alias("prompt_id"), pl.lit(judge).alias("judge"),
                pl.lit(fmt).alias("format"), pl.lit(decoding).alias("decoding"), pl.lit(order).alias("order")))
    return pl.concat(frames, how="vertical_relaxed").select(RANK_COLUMNS).with_columns(pl.selectors.float().fill_nan(None))


def tied_pool(db, folder, n_prompts: int = 90, seed: int = 4) -> None:
    """A pool whose tournament verdicts are mostly ties (no slot bias, little spread), its prompt_ids
    unpadded and shuffled (listing order is not prompt_id order), its systems named so that their
    sorted order is not their listing order, two judges, a third of the calls asked twice."""
    from ingest.scoring import import_verdicts
    from ingest.store import import_pool
    rng = np.random.default_rng(seed)
    rows = synthetic_pool(n_prompts, k_range=(2, 5), seed=seed)
    names = {f"c{i}": name for i, name in enumerate(["zeta", "Alpha", "mid-10", "mid-9", "b"])}
    order = rng.permutation(n_prompts)
    for r in rows:
        r["prompt_id"] = f"q{order[int(r['prompt_id'][1:])]}"
        r["candidate_id"] = names[r["candidate_id"]]
        r["reference"] = 2.0 if r["reference"] is None else 2.0 + 0.2 * (r["reference"] - 2.0)
    verdicts = [v for v in synthetic_verdicts(rows, ("alpha", "beta"), seed, unparsed=0.05, swap_rate=0.7,
                                              slot_bias=0.0) if v["format"] == "tournament"]
    for k, v in enumerate(list(verdicts)):     # a second sample of some calls: rows that stand for several
        if k % 3 == 0:
            verdicts.append({**v, "sample": 1, "raw": v["raw"] if k % 2 else "TIE"})
    import_pool(db, write_jsonl(folder / "pool.jsonl", rows), "tied")
    import_verdicts(db, write_jsonl(folder / "verdicts.jsonl", verdicts), "tied")


@pytest.mark.parametrize("n_boot,seed,prior", [(0, 0, None), (60, 3, None), (40, 1, 0.0), (40, 2, 1.0)])
def test_rank_by_system_equals_the_per_call_code(db, tmp_path, n_boot, seed, prior):
    tied_pool(db, tmp_path)
    old = old_rank(db, "tied", n_boot, seed, prior)
    new = rank(db, "tied", n_boot=n_boot, seed=seed, prior=prior)
    ties = query_ties(db)
    assert ties > 0.3, ties                                # a pool with many ties, as it says
    assert new.height == old.height > 0 and set(new["order"]) == {"both", "single"}
    assert_frame_equal(new, old, check_exact=True)


def query_ties(db) -> float:
    """The share of the pool's parsed tournament calls that are ties."""
    with reading(db) as con:
        calls = con.frame("rank_calls", pool_id=con.pool_id("tied"))
    return float((calls["value"] == 0).mean())
