"""audit.rank(by='candidate_id') read aggregated per cell in DuckDB (audit/_rank_cells.py, issue 29)
against an independent reference written from docs/metrics.md 'Rankings (Bradley-Terry)': the calls
read back through the export (audit.verdict_rows), the strengths a maximum of the Bradley-Terry
log-likelihood found by scipy.optimize (not the MM iteration), and a bootstrap that resamples the
prompts with replacement one resample at a time, drawn as counts of the prompts' kinds (prompts with
equal games; tests/audit/test_rank_kinds.py compares that scheme with drawing the prompts), each
refitted by scipy. The pool has many ties,
prompt_ids whose order is not their listing order, systems named out of order, both orientations and
unparsed calls."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

import polars as pl

from audit import rank, verdict_rows
from audit._bias import cell_rng
from audit._rank import ORDERS, _ranks, fit_cell, ranking_frame
from audit._read import reading
from ingest.store.database import Database
from tests.fixtures import synthetic_pool, synthetic_verdicts, write_jsonl

HALF_A_GAME = 0.5      # docs/metrics.md: without a maximum-likelihood fit, half a virtual tie game per met pair


def tied_pool(db, folder, n_prompts: int = 90, seed: int = 4) -> list[dict]:
    """A pool whose tournament verdicts are mostly ties (no slot bias, little spread), its prompt_ids
    unpadded and shuffled (listing order is not prompt_id order), its systems named so that their
    sorted order is not their listing order, two judges, a third of the calls asked twice. Returns
    the pool's rows (in listing order)."""
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
    return rows


# -- the reference, from the definitions ---------------------------------------------------------------

def parsed_calls(db, pool_rows: list[dict]) -> dict:
    """Per (judge, format, decoding): the parsed comparative calls between two different systems, each
    (prompt_id, slot A, slot B, credit of A, swapped): a margin > 0 is a win for A, < 0 for B, 0 half
    each; swapped = the later-listed candidate of the prompt in slot A (the pool's listing order)."""
    listed = {}
    for row in pool_rows:
        listed.setdefault(row["prompt_id"], []).append(row["candidate_id"])
    cells: dict = {}
    for r in verdict_rows(db, "tied").iter_rows(named=True):
        if r["candidate_b"] is None or r["value"] is None or r["candidate_a"] == r["candidate_b"]:
            continue
        a, b, v = r["candidate_a"], r["candidate_b"], r["value"]
        order = listed[r["prompt_id"]]
        credit = 1.0 if v > 0 else 0.0 if v < 0 else 0.5
        cells.setdefault((r["judge"], r["format"], r["decoding"]), []).append(
            (r["prompt_id"], a, b, credit, order.index(a) > order.index(b)))
    return cells


def bt_fit(wins: np.ndarray) -> np.ndarray:
    """log p maximising sum_ij wins[i, j] log(p_i / (p_i + p_j)) over the items with games, centred to
    mean 0 (NaN for an item without games), by scipy's BFGS on the negative log-likelihood."""
    active = (wins + wins.T).sum(axis=1) > 0
    w = wins[np.ix_(active, active)]

    def minus_loglik(theta):
        d = theta[:, None] - theta[None, :]                 # log(p_i / (p_i + p_j)) = -log(1 + e^-(t_i - t_j))
        value = np.sum(w * np.logaddexp(0.0, -d))
        s = w * (1.0 / (1.0 + np.exp(d)))                   # d/dt_i of w_ij log sigma(t_i - t_j)
        return value, -(s.sum(axis=1) - s.sum(axis=0))

    fit = minimize(minus_loglik, np.zeros(w.shape[0]), jac=True, method="BFGS",
                   options={"gtol": 1e-11, "maxiter": 10_000})
    out = np.full(wins.shape[0], np.nan)
    out[active] = fit.x - fit.x.mean()
    return out


def mle_exists(wins: np.ndarray) -> bool:
    """Zermelo/Ford: the items with games are one strongly connected group when an edge i -> j stands
    for every pair where i won (or tied) at least once against j."""
    active = (wins + wins.T).sum(axis=1) > 0
    n, _ = connected_components(csr_matrix(wins[np.ix_(active, active)] > 0), directed=True, connection="strong")
    return n == 1


def reference_part(calls: list[tuple], n_boot: int, rng: np.random.Generator, prior: float | None) -> dict:
    """Per system of one (cell, order): strength, lo, hi, games, wins; with n_calls, n_units, prior."""
    ids = sorted({c[1] for c in calls} | {c[2] for c in calls})
    units = sorted({c[0] for c in calls})                   # the prompts, numbered in prompt_id order
    per_unit = np.zeros((len(units), len(ids), len(ids)))   # per prompt, wins[i, j] of i over j
    for pid, a, b, credit, _ in calls:
        u, i, j = units.index(pid), ids.index(a), ids.index(b)
        per_unit[u, i, j] += credit
        per_unit[u, j, i] += 1.0 - credit
    wins = per_unit.sum(axis=0)
    games = wins + wins.T
    # only the largest connected group of the comparison graph is placed on one scale
    _, label = connected_components(csr_matrix(games > 0), directed=False)
    keep = label == np.argmax(np.bincount(label))
    used = prior if prior is not None else (0.0 if mle_exists(wins[np.ix_(keep, keep)]) else HALF_A_GAME)

    def fit(w):
        w = w[np.ix_(keep, keep)]
        extra = used if used else (0.0 if mle_exists(w) else HALF_A_GAME)   # a resample without an MLE
        return bt_fit(w + extra / 2 * ((w + w.T) > 0))

    strength = np.full(len(ids), np.nan)
    strength[keep] = fit(wins)
    lo, hi = np.full(len(ids), np.nan), np.full(len(ids), np.nan)
    if n_boot:
        # the prompts' kinds: prompts whose games inside the group are equal, numbered by their first
        # prompt; one resample of len(units) prompts with replacement is how many prompts of each kind
        # (multinomial, each kind's share of the prompts), each counting its kind's games
        first: dict[bytes, int] = {}
        count: list[int] = []
        for u in range(len(units)):
            key = per_unit[u][np.ix_(keep, keep)].tobytes()
            if key not in first:
                first[key] = u
                count.append(0)
            count[list(first).index(key)] += 1
        kinds = per_unit[list(first.values())]
        share = np.array(count, float) / len(units)
        draws = [fit(np.tensordot(rng.multinomial(len(units), share).astype(float), kinds, axes=1))
                 for _ in range(n_boot)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)          # a system without games in a resample
            lo[keep], hi[keep] = np.nanpercentile(np.array(draws), [2.5, 97.5], axis=0)
    return {"ids": ids, "strength": strength, "lo": lo, "hi": hi, "games": games.sum(axis=1),
            "wins": wins.sum(axis=1), "n_calls": len(calls), "n_units": len(units), "prior": used}


def reference_rank(db, pool_rows, n_boot: int, seed: int, prior) -> dict:
    """(judge, format, decoding, order, id) -> the reference's row."""
    out = {}
    for (judge, fmt, decoding), calls in parsed_calls(db, pool_rows).items():
        for order, part in (("both", calls), ("single", [c for c in calls if not c[4]])):
            if not part:
                continue
            ref = reference_part(part, n_boot, cell_rng(seed, judge, fmt, decoding, order), prior)
            ranked = sorted((k for k in range(len(ref["ids"])) if not np.isnan(ref["strength"][k])),
                            key=lambda k: (-ref["strength"][k], ref["ids"][k]))       # 1 = strongest
            for k, system in enumerate(ref["ids"]):
                out[(judge, fmt, decoding, order, system)] = {
                    "strength": ref["strength"][k], "lo": ref["lo"][k], "hi": ref["hi"][k],
                    "rank": ranked.index(k) + 1 if k in ranked else None, "games": ref["games"][k],
                    "wins": ref["wins"][k], "n_calls": ref["n_calls"], "n_units": ref["n_units"],
                    "prior": ref["prior"]}
    return out


# -- the tests -------------------------------------------------------------------------------------------

def _nan(x):
    return np.nan if x is None else x


@pytest.mark.parametrize("n_boot,seed,prior", [(0, 0, None), (60, 3, None), (40, 1, 0.0), (40, 2, 1.0)])
def test_rank_by_system_equals_an_independent_fit_and_bootstrap(db, tmp_path, n_boot, seed, prior):
    rows = tied_pool(db, tmp_path)
    calls = parsed_calls(db, rows)
    ties = np.mean([c[3] == 0.5 for part in calls.values() for c in part])
    assert ties > 0.3, ties                                # a pool with many ties, as it says
    want = reference_rank(db, rows, n_boot, seed, prior)
    got = rank(db, "tied", n_boot=n_boot, seed=seed, prior=prior)
    assert set(got["order"]) == {"both", "single"} and got["prompt_id"].is_null().all()
    assert {(r["judge"], r["format"], r["decoding"], r["order"], r["id"]) for r in got.iter_rows(named=True)} \
        == set(want)
    for row in got.iter_rows(named=True):
        ref = want[(row["judge"], row["format"], row["decoding"], row["order"], row["id"])]
        # the fits agree to 1e-6 (BFGS against MM, each to its own tolerance), the counts exactly
        assert [_nan(row[c]) for c in ("strength", "lo", "hi")] == \
            pytest.approx([ref[c] for c in ("strength", "lo", "hi")], abs=1e-6, nan_ok=True), row
        assert (row["rank"], row["games"], row["wins"], row["n_calls"], row["n_units"], row["prior"]) == \
            (ref["rank"], ref["games"], ref["wins"], ref["n_calls"], ref["n_units"], ref["prior"]), row


def test_intervals_hold_the_strength_and_shrink_with_more_prompts(db, tmp_path):
    (tmp_path / "small").mkdir()
    small_db = tmp_path / "small" / "small.duckdb"
    tied_pool(small_db, tmp_path / "small", n_prompts=30)
    tied_pool(db, tmp_path, n_prompts=270)
    small = rank(small_db, "tied", n_boot=200, seed=1)
    large = rank(db, "tied", n_boot=200, seed=1)
    for frame in (small, large):
        placed = frame.drop_nulls("strength")
        assert placed.height > 0
        assert ((placed["lo"] <= placed["strength"]) & (placed["strength"] <= placed["hi"])).all()
    # nine times the prompts: intervals about a third as wide (1 / sqrt(9)); at least half as wide here
    width = {name: (f["hi"] - f["lo"]).drop_nulls().mean() for name, f in (("small", small), ("large", large))}
    assert width["large"] < 0.5 * width["small"], width


# -- the kinds grouped in DuckDB, as before (the reference the kinds grouped in numpy must equal) ----------

def _fit_before(rows: dict, mask: np.ndarray, systems: np.ndarray, n_boot: int, rng, prior) -> pl.DataFrame:
    """One (cell, order)'s frame from the rows of sql/rank_cell_kinds_before.sql under `mask`."""
    lo_code, hi_code = rows["lo"][mask], rows["hi"][mask]
    present = np.unique(np.concatenate([lo_code, hi_code]))
    local = np.full(systems.size, -1, np.int64)
    local[present] = np.arange(present.size)
    ids = systems[present].tolist()
    kind = rows["kind"][mask].astype(np.int64)
    prompts = np.zeros(int(kind.max()) + 1, np.int64)
    prompts[kind] = rows["prompts"][mask]
    n_games = rows["n"][mask]
    fit = fit_cell(kind, local[lo_code], local[hi_code], rows["credit"][mask], len(ids), n_boot, rng, prior,
                   n_games=n_games, unit_count=prompts)
    return pl.DataFrame({
        "id": ids, "strength": fit["strength"], "lo": fit["lo"], "hi": fit["hi"],
        "rank": _ranks(fit["strength"], ids), "games": fit["games"], "wins": fit["wins"],
        "n_calls": int((n_games * prompts[kind]).sum()), "n_units": int(prompts.sum()),
        "prior": fit["prior"]}).with_columns(pl.col("rank").replace(0, None))


def rank_before(db, pool: str, n_boot: int, seed: int, prior) -> pl.DataFrame:
    """audit.rank(by='candidate_id') as it was when DuckDB grouped each cell's kinds (the SQL kept in
    tests/audit/sql/rank_cell_kinds_before.sql: list aggregates of each prompt's pairs, grouped by list)."""
    with reading(db) as read:
        pid = read.pool_id(pool)
        cells = read.frame("rank_cells", pool_id=pid)
        systems = np.array(read.frame("rank_systems", pool_id=pid)["candidate_id"].to_list(), dtype=object)
    frames = []
    with Database.of(db).reading(queries="tests.audit") as read:
        for judge_id, format_id, judge, fmt, decoding in cells.iter_rows():
            rows = read.numpy("rank_cell_kinds_before", pool_id=pid, judge_id=judge_id, format_id=format_id,
                              decoding=decoding)
            same = bool(rows["single_is_both"].size and rows["single_is_both"][0])
            for order in ORDERS:
                mask = rows["ord"] == ("both" if same and order == "single" else order)
                if mask.any():
                    frames.append(_fit_before(rows, mask, systems, n_boot, cell_rng(seed, judge, fmt, decoding, order),
                                              prior).with_columns(
                        pl.lit(None, pl.String).alias("prompt_id"), pl.lit(judge).alias("judge"),
                        pl.lit(fmt).alias("format"), pl.lit(decoding).alias("decoding"),
                        pl.lit(order).alias("order")))
    return ranking_frame(frames)


@pytest.mark.parametrize("n_boot,seed,prior,packed", [(0, 0, None, True), (60, 3, None, True), (40, 2, 1.0, True),
                                                      (60, 3, None, False)])
def test_rank_by_system_equals_the_kinds_grouped_in_duckdb(db, tmp_path, monkeypatch, n_boot, seed, prior, packed):
    # the kinds grouped in numpy (packed into integers, or sorted by prompt and pair) against the SQL
    # that grouped them before: the same frame, bootstrap draws included (to 1e-9; equal in fact)
    from audit import _rank_kinds
    tied_pool(db, tmp_path)
    if not packed:
        monkeypatch.setattr(_rank_kinds, "packed_kinds", lambda *args: None)
    want = rank_before(db, "tied", n_boot, seed, prior)
    got = rank(db, "tied", n_boot=n_boot, seed=seed, prior=prior)
    assert got.drop("strength", "lo", "hi").equals(want.drop("strength", "lo", "hi"))
    for column in ("strength", "lo", "hi"):
        assert got[column].to_list() == pytest.approx(want[column].to_list(), abs=1e-9, nan_ok=True)
    assert got.height > 0 and (got["lo"].drop_nulls().len() > 0) == (n_boot > 0)
    # one judge's cells alone (a refresh's part): those rows of the whole
    one = rank(Database.of(db).scoped([("beta", "tournament")]), "tied", n_boot=n_boot, seed=seed, prior=prior)
    assert one.height > 0 and one.equals(got.filter(pl.col("judge") == "beta"))
