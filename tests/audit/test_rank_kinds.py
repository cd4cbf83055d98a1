"""The rankings' bootstrap over the prompts' kinds (audit._rank.fit_cell, audit._rank_kinds.prompt_kinds):
resampling n prompts with replacement and summing their games is drawing Multinomial(n, count_k / n)
prompts of each kind k (prompts whose games are equal) and summing count x the kind's games. The kinds
by hand; where every prompt is a kind of its own, the draws of the prompts number for number; by
simulation over 30 small pools with ties, the interval ends of the kinds' scheme against the prompts'
scheme (the one before, spelled out here) within their Monte Carlo error, and the point fit unchanged;
the kinds read from the database, by hand; the kinds packed into integers equal to the kinds sorted
by prompt and pair, and both to grouping the prompts' vectors one by one in Python."""

from __future__ import annotations

import math
import warnings

import numpy as np
import polars as pl
import pytest
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from audit import rank, rank_calls
from audit._bias import cell_rng
from audit._rank import bt_mm, mle_exists
from audit import _rank_kinds
from audit._rank_cells import _lookup, cell_kinds
from audit._rank_kinds import equal_segments, packed_kinds, prompt_kinds, sorted_kinds, unit_kinds
from audit._read import reading
from ingest.scoring import import_verdicts
from ingest.store import import_pool
from tests.fixtures import write_jsonl


def _calls(games, judge="sim", fmt="f"):
    """games: (a_id, b_id, value, prompt_id), every call forward -> a calls frame."""
    return pl.DataFrame([{"judge": judge, "format": fmt, "a_id": a, "b_id": b, "value": float(v), "swapped": False,
                          "prompt_id": p} for a, b, v, p in games])


def test_unit_kinds_by_hand():
    # five units over three columns: u0 = (1, 0, 2); u1 = (0, 1, 0); u2 = u0 written as 0.5 + 0.5 in
    # column 0 with an explicit zero in column 1; u3 empty; u4 = u1. Weights 1, 1, 1, 1, 3: the kinds in
    # the order of their first unit are u0 (u0, u2: 2), u1 (u1, u4: 1 + 3 = 4) and u3 (1)
    rows = [0, 0, 1, 2, 2, 2, 2, 4]
    cols = [0, 2, 1, 0, 0, 1, 2, 1]
    vals = [1.0, 2.0, 1.0, 0.5, 0.5, 0.0, 2.0, 1.0]
    kinds, counts = unit_kinds(csr_matrix((vals, (rows, cols)), shape=(5, 3)), np.array([1, 1, 1, 1, 3.0]))
    assert kinds.toarray().tolist() == [[1.0, 0.0, 2.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]
    assert counts.tolist() == [2.0, 4.0, 1.0]


def test_where_every_prompt_is_a_kind_the_draws_are_the_prompts():
    # 40 prompts of x vs y, prompt k with k + 2 calls (so no two prompts alike): one tie each and the
    # rest wins of x or y at random. Every prompt is its own kind, numbered in prompt order, so the
    # cell's generator draws Multinomial(40, 1/40 each) as it drew the prompts before. Two items have a
    # closed form, strength_x = log(W_x / W_y) / 2, and both W > 0 in every resample (the ties)
    rng = np.random.default_rng(5)
    games, share = [], []
    for k in range(40):
        outcomes = [0] + [int(v) for v in rng.choice([-1, 1], size=k + 1)]
        games += [("x", "y", v, f"q{k:02d}") for v in outcomes]
        share.append(sum(1.0 if v > 0 else 0.5 if v == 0 else 0.0 for v in outcomes))
    n_calls = np.arange(40) + 2.0
    out = rank_calls(_calls(games), n_boot=500, seed=4).filter(pl.col("order") == "both")
    x = out.filter(pl.col("id") == "x").row(0, named=True)
    draw = cell_rng(4, "sim", "f", "greedy", "both").multinomial(40, np.full(40, 1 / 40), size=500)
    won = draw @ np.array(share)
    lo, hi = np.percentile(np.log(won / (draw @ n_calls - won)) / 2, [2.5, 97.5])
    assert [x["lo"], x["hi"]] == pytest.approx([lo, hi], abs=1e-12)


# -- old against new, by simulation ------------------------------------------------------------------------

STRENGTH = {"s0": 0.6, "s1": 0.2, "s2": -0.2, "s3": -0.6}
N_BOOT = 2000


def _tied_pool(seed: int) -> tuple[pl.DataFrame, int]:
    """80 prompts; each asks one random pair of the four systems once (two pairs with chance 0.3): a tie with chance 0.3,
    else a Bradley-Terry win at STRENGTH. Returns (calls, how many distinct prompts there are)."""
    rng = np.random.default_rng(seed)
    names = list(STRENGTH)
    games, seen = [], set()
    for q in range(80):
        asked = []
        for _ in range(1 + int(rng.random() < 0.3)):
            a, b = rng.choice(4, size=2, replace=False)
            d = STRENGTH[names[a]] - STRENGTH[names[b]]
            v = 0 if rng.random() < 0.3 else (1 if rng.random() < 1 / (1 + math.exp(-d)) else -1)
            games.append((names[a], names[b], v, f"q{q:02d}"))
            asked.append((min(a, b), max(a, b), v if a < b else -v))
        seen.add(tuple(sorted(asked)))
    return _calls(games), len(seen)


def _by_prompts(calls: pl.DataFrame, n_boot: int, rng: np.random.Generator):
    """The scheme before, spelled out: n_boot resamples of the n prompts (Multinomial(n, 1/n each),
    n_boot x n draws), each resample's wins the drawn prompts' summed, a prior as the fit's (half a game
    per met pair in a resample without an MLE when the fit needed none), refitted by MM from the fit.
    Returns (ids, strength, wins, lo, hi, sd of the draws)."""
    ids = sorted(set(calls["a_id"]) | set(calls["b_id"]))
    prompts = sorted(set(calls["prompt_id"]))
    per_prompt = np.zeros((len(prompts), len(ids), len(ids)))
    for a, b, v, q in calls.select("a_id", "b_id", "value", "prompt_id").iter_rows():
        credit = 1.0 if v > 0 else 0.0 if v < 0 else 0.5
        per_prompt[prompts.index(q), ids.index(a), ids.index(b)] += credit
        per_prompt[prompts.index(q), ids.index(b), ids.index(a)] += 1.0 - credit
    wins = per_prompt.sum(axis=0)
    _, label = connected_components(csr_matrix(wins + wins.T > 0), directed=False)
    assert (label == 0).all()                              # one group: every system is placed
    used = 0.0 if mle_exists(wins) else 0.5
    strength, _ = bt_mm(wins + used / 2 * (wins + wins.T > 0))
    draws = rng.multinomial(len(prompts), np.full(len(prompts), 1 / len(prompts)), size=n_boot).astype(float)
    boot = np.tensordot(draws, per_prompt, axes=1)                       # (n_boot, items, items)
    extra = np.full(n_boot, used) if used else np.where(mle_exists(boot), 0.0, 0.5)
    logs, _ = bt_mm(boot + extra[:, None, None] / 2 * (boot + np.swapaxes(boot, 1, 2) > 0), tol=1e-8,
                    start=strength)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        lo, hi = np.nanpercentile(logs, [2.5, 97.5], axis=0)
        sd = np.nanstd(logs, axis=0)
    return ids, strength, wins, lo, hi, sd


def test_the_kinds_draw_what_the_prompts_drew():
    # The resampling scheme changed (B draws over the K kinds, not B x n over the prompts): over 30
    # pools of 80 prompts with many ties and few distinct prompts, both schemes' interval ends with
    # 2,000 resamples each, the old one from a generator of its own.
    # Tolerance: a percentile q estimated from B draws of a distribution with sd s near normal has a
    # Monte Carlo error of sqrt(q (1 - q) / B) / phi(z_q) * s = sqrt(0.025 * 0.975 / 2000) / 0.0584 * s
    # = 0.0598 s at q = 2.5% or 97.5%; two independent estimates differ by sqrt(2) x that = 0.0845 s.
    # Every end of 30 x 4 x 2 = 240 within 5 of those (0.42 s: a normal beyond 5 sd once in 1.7M), and
    # the mean of the differences in those units within 0.5 (no scheme's ends on one side of the other's;
    # measured: the largest 2.9, the mean 0.02, their sd 1.02, as the error predicts).
    # The point fit is the same to 1e-9 and the games and wins exactly.
    z = []
    for seed in range(30):
        calls, n_kinds = _tied_pool(seed)
        assert n_kinds < 60                                # fewer kinds than prompts: the draws differ
        new = rank_calls(calls, n_boot=N_BOOT, seed=seed).filter(pl.col("order") == "both").sort("id")
        ids, strength, wins, lo, hi, sd = _by_prompts(calls, N_BOOT, np.random.default_rng(1000 + seed))
        assert new["id"].to_list() == ids
        assert new["strength"].to_list() == pytest.approx(strength.tolist(), abs=1e-9)
        assert new["wins"].to_list() == wins.sum(axis=1).tolist()
        assert new["games"].to_list() == (wins + wins.T).sum(axis=1).tolist()
        unit = 0.0845 * sd
        z += ((new["lo"].to_numpy() - lo) / unit).tolist() + ((new["hi"].to_numpy() - hi) / unit).tolist()
    z = np.array(z)
    assert np.abs(z).max() < 5, np.abs(z).max()
    assert abs(z.mean()) < 0.5, z.mean()


def test_the_schemes_differ_where_the_draws_are_wrong():
    # the check above can fail: the prompts' scheme against a bootstrap over 40 prompts instead of 80
    # (intervals sqrt(2) wider) is off by far more than 5 Monte Carlo errors
    calls, _ = _tied_pool(0)
    new = rank_calls(calls, n_boot=N_BOOT, seed=0).filter(pl.col("order") == "both").sort("id")
    half = calls.filter(pl.col("prompt_id") < "q40")
    *_, lo, hi, sd = _by_prompts(half, N_BOOT, np.random.default_rng(7))
    z = (new["hi"].to_numpy() - new["lo"].to_numpy() - (hi - lo)) / (0.0845 * sd)
    assert np.abs(z).max() > 5


# -- the kinds read from the database ----------------------------------------------------------------------

def _read_kinds(db, pool: str) -> tuple[list[tuple], bool]:
    """The first cell's kinds as rows (order, kind, prompts, lo, hi, credit, n), 'both' then 'single',
    and whether the single order is the both order (no call swapped)."""
    with reading(db) as read:
        pid = read.pool_id(pool)
        judge_id, format_id, *_, decoding = read.frame("rank_cells", pool_id=pid).row(0)
        codes, places = read.numpy("rank_candidate_codes", pool_id=pid), read.numpy("rank_prompt_order", pool_id=pid)
        kinds = cell_kinds(read, pid, judge_id, format_id, decoding, _lookup(codes["cand_idx"], codes["code"]),
                           _lookup(places["prompt_idx"], places["place"]))
    rows = [(order, int(k), int(part["prompts"][k]), int(lo), int(hi), float(c), int(n))
            for order, part in kinds.items()
            for k, lo, hi, c, n in zip(part["kind"], part["lo"], part["hi"], part["credit"], part["n"])]
    return rows, kinds.get("single") is kinds["both"]


def test_the_kinds_duckdb_reads_by_hand(db, tmp_path):
    # six prompts listed x, y, z, their prompt_ids out of listing order. q0, q2, q4: x beat y once (A+);
    # q1, q3: y tied z (TIE); q5: x-z asked both ways, x won both (A+ forward, B+ with z in slot A).
    # Both orders: three kinds in the order of their first prompt (q0 3 prompts, q1 2, q5 1); the single
    # (forward) order: q5's vector is one win of x over z, its own kind as well.
    # Systems x, y, z are codes 0, 1, 2; credit is the lower code's.
    rows = [{"prompt_id": f"q{k}", "prompt": f"Q{k}", "candidate_id": c, "response": f"{c} to {k}"}
            for k in (5, 4, 3, 2, 1, 0) for c in ("x", "y", "z")]
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", rows), "kinds")
    verdicts = [("q0", "x", "y", "A+"), ("q2", "x", "y", "A+"), ("q4", "x", "y", "A+"), ("q1", "y", "z", "TIE"),
                ("q3", "y", "z", "TIE"), ("q5", "x", "z", "A+"), ("q5", "z", "x", "B+")]
    lines = [{"judge": "J", "format": "tournament", "prompt_id": q, "a_id": a, "b_id": b, "raw": r}
             for q, a, b, r in verdicts]
    import_verdicts(db, write_jsonl(tmp_path / "verdicts.jsonl", lines), "kinds")
    got, single_is_both = _read_kinds(db, "kinds")
    assert got == [
        ("both", 0, 3, 0, 1, 1.0, 1), ("both", 1, 2, 1, 2, 0.5, 1), ("both", 2, 1, 0, 2, 2.0, 2),
        ("single", 0, 3, 0, 1, 1.0, 1), ("single", 1, 2, 1, 2, 0.5, 1), ("single", 2, 1, 0, 2, 1.0, 1)]
    assert not single_is_both                          # q5's z-x call is swapped: the orders differ
    # the ranking counts the prompts and calls the kinds stand for: 7 calls over 6 prompts both ways,
    # 6 forward; x: 3 wins over y and 2 over z, 5 games
    out = rank(db, "kinds", n_boot=50).sort("order", "id")
    assert out.filter(pl.col("order") == "both")["n_units"].to_list() == [6, 6, 6]
    assert out.filter(pl.col("order") == "both")["n_calls"].to_list() == [7, 7, 7]
    assert out.filter(pl.col("order") == "single")["n_calls"].to_list() == [6, 6, 6]
    assert out.filter((pl.col("order") == "both") & (pl.col("id") == "x")).select("wins", "games").row(0) == (5.0, 5.0)
    # the same calls one by one (rank_calls) give the same frame, bootstrap included
    calls = pl.DataFrame([{"judge": "J", "format": "tournament", "prompt_id": q, "a_id": a, "b_id": b,
                           "value": {"A+": 1.0, "TIE": 0.0, "B+": -1.0}[r], "swapped": a == "z" and b == "x"}
                          for q, a, b, r in verdicts])
    assert out.equals(rank_calls(calls, n_boot=50).sort("order", "id"))


def test_without_a_swapped_call_the_single_order_is_the_both_order_grouped_once(db, tmp_path):
    # every call forward (x in slot A, as the pool lists it): the single order's calls are the both
    # order's, so only 'both' is grouped, and 'single' is the same kinds; the ranking still has both orders, each the
    # calls one by one (rank_calls), bootstrap included: q0, q1 x beat y; q2 y tied z; q3 x lost to z
    rows = [{"prompt_id": f"q{k}", "prompt": f"Q{k}", "candidate_id": c, "response": f"{c} to {k}"}
            for k in range(4) for c in ("x", "y", "z")]
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", rows), "fwd")
    verdicts = [("q0", "x", "y", "A+"), ("q1", "x", "y", "A+"), ("q2", "y", "z", "TIE"), ("q3", "x", "z", "B+")]
    lines = [{"judge": "J", "format": "tournament", "prompt_id": q, "a_id": a, "b_id": b, "raw": r}
             for q, a, b, r in verdicts]
    import_verdicts(db, write_jsonl(tmp_path / "verdicts.jsonl", lines), "fwd")
    got, single_is_both = _read_kinds(db, "fwd")
    # kinds by first prompt: q0 (x-y 1 win, 2 prompts), q2 (y-z half), q3 (x-z no win)
    both = [("both", 0, 2, 0, 1, 1.0, 1), ("both", 1, 1, 1, 2, 0.5, 1), ("both", 2, 1, 0, 2, 0.0, 1)]
    assert got == both + [("single", *row[1:]) for row in both]
    assert single_is_both
    out = rank(db, "fwd", n_boot=50).sort("order", "id")
    assert out["order"].to_list() == ["both"] * 3 + ["single"] * 3
    calls = pl.DataFrame([{"judge": "J", "format": "tournament", "prompt_id": q, "a_id": a, "b_id": b,
                           "value": {"A+": 1.0, "TIE": 0.0, "B+": -1.0}[r], "swapped": False}
                          for q, a, b, r in verdicts])
    assert out.equals(rank_calls(calls, n_boot=50).sort("order", "id"))


# -- the prompts' kinds from the calls (audit._rank_kinds.prompt_kinds) -------------------------------------

def _kinds_one_by_one(unit, a, b, credit) -> list[tuple]:
    """The definition, in Python: each prompt's vector {(lo, hi): [lo's credit in halves, calls]} (A's
    credit, or 2 minus it where B is the lower code), the prompts taken in order (unit is the place in
    prompt_id order) and a kind per new vector. Rows (kind, prompts, lo, hi, credit, n), sorted by
    kind and pair."""
    vectors: dict[int, dict] = {}
    for u, x, y, c in zip(unit.tolist(), a.tolist(), b.tolist(), credit.tolist()):
        entry = vectors.setdefault(u, {}).setdefault((min(x, y), max(x, y)), [0, 0])
        entry[0] += c if x <= y else 2 - c
        entry[1] += 1
    kinds: dict[tuple, list] = {}
    for u in sorted(vectors):
        key = tuple(sorted((pair, c, n) for pair, (c, n) in vectors[u].items()))
        kinds.setdefault(key, [len(kinds), 0])[1] += 1
    return sorted((k, count, lo, hi, c / 2, n) for key, (k, count) in kinds.items() for (lo, hi), c, n in key)


def _rows(kinds: dict) -> list[tuple]:
    return [(int(k), int(kinds["prompts"][k]), int(a), int(b), float(c), int(n))
            for k, a, b, c, n in zip(kinds["kind"], kinds["lo"], kinds["hi"], kinds["credit"], kinds["n"])]


def _random_calls(seed: int, n_prompts: int, n_systems: int, per_prompt: int, repeat: float):
    """Calls of prompts (places 0..n_prompts - 1, some without a call) between random systems in
    either slot (a system against itself too), some asked again, in no order: (unit, a, b, A's credit
    in halves)."""
    rng = np.random.default_rng(seed)
    n = n_prompts * per_prompt
    unit = rng.integers(0, n_prompts, n)
    a, b = rng.integers(0, n_systems, n), rng.integers(0, n_systems, n)
    again = rng.random(n) < repeat                         # the same prompt and pair asked once more
    unit, a, b = np.r_[unit, unit[again]], np.r_[a, a[again]], np.r_[b, b[again]]
    credit = rng.choice([0, 1, 2], size=unit.size, p=[0.4, 0.3, 0.3])
    order = rng.permutation(unit.size)
    return unit[order], a[order], b[order], credit[order]


def test_prompt_kinds_by_hand():
    # places 0..3; systems 0, 1, 2. Prompt 3: 0 beat 1 twice, once from slot B (4 halves, 2 calls);
    # prompt 1: 1-2 tied once; prompt 0: 0 beat 1 and lost to it (2 halves, 2 calls) and 1-2 tied;
    # prompt 2: 2-1 tied. Kinds by first prompt: 0 (prompt 0), 1 (prompts 1, 2), 2 (prompt 3)
    unit = np.array([3, 1, 0, 3, 0, 2, 0])
    a, b = np.array([0, 1, 0, 1, 1, 2, 0]), np.array([1, 2, 1, 0, 2, 1, 1])
    credit = np.array([2, 1, 2, 0, 1, 1, 0])
    want = [(0, 1, 0, 1, 1.0, 2), (0, 1, 1, 2, 0.5, 1), (1, 2, 1, 2, 0.5, 1), (2, 1, 0, 1, 2.0, 2)]
    assert _rows(prompt_kinds(unit, a, b, credit)) == want == _kinds_one_by_one(unit, a, b, credit)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    for found in (packed_kinds(unit, a * 3 + b, credit, 3),
                  sorted_kinds(unit, lo * 3 + hi, np.where(a <= b, credit, 2 - credit), 9)):
        assert [x.tolist() for x in found] == [[0, 1, 3], [1, 2, 1]]   # each kind's first prompt, its prompts


@pytest.mark.parametrize("seed,n_prompts,n_systems,per_prompt,repeat,packs", [
    (0, 300, 3, 2, 0.0, True),        # few kinds: one packed column
    (1, 500, 4, 6, 0.3, True),        # a tournament of four, some calls asked twice
    (2, 400, 6, 8, 0.5, True),        # 21 pairs: several columns
    (3, 300, 40, 5, 0.2, False),      # 820 pairs: too many to pack, sorted
    (4, 50, 2, 30, 0.9, True),        # many calls per prompt: wide digits
])
def test_prompt_kinds_packed_and_sorted_are_the_kinds_one_by_one(monkeypatch, seed, n_prompts, n_systems,
                                                                   per_prompt, repeat, packs):
    unit, a, b, credit = _random_calls(seed, n_prompts, n_systems, per_prompt, repeat)
    want = _kinds_one_by_one(unit, a, b, credit)
    assert _rows(prompt_kinds(unit, a, b, credit)) == want
    packed = packed_kinds(unit, a * n_systems + b, credit, n_systems)
    assert (packed is not None) == packs
    if packed is not None:
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        by_sort = sorted_kinds(unit, lo * n_systems + hi, np.where(a <= b, credit, 2 - credit), n_systems ** 2)
        assert [x.tolist() for x in packed] == [x.tolist() for x in by_sort]
    monkeypatch.setattr(_rank_kinds, "packed_kinds", lambda *args: None)     # the sorted way alone
    assert _rows(prompt_kinds(unit, a, b, credit)) == want
    # every segment's digest the same: each is checked against its group's first, and grouped whole
    monkeypatch.setattr(_rank_kinds, "equal_segments", lambda token, seg, width: equal_segments(
        token, seg, width, digests=lambda t, s, w: np.zeros(s.size, np.uint64)))
    assert _rows(prompt_kinds(unit, a, b, credit)) == want


def test_prompt_kinds_of_no_call_and_of_systems_too_many_to_key():
    empty = prompt_kinds(np.zeros(0, int), np.zeros(0, int), np.zeros(0, int), np.zeros(0, int))
    assert all(v.size == 0 for v in empty.values())
    # codes as large as 2^31: (prompt, pair) keyed on the pairs met, numbered; too many to pack
    unit, a, b, credit = _random_calls(5, 200, 5, 3, 0.3)
    big = np.array([0, 7, 2 ** 20, 2 ** 30, 2 ** 31])
    want = [(k, count, int(big[lo]), int(big[hi]), c, n)
            for k, count, lo, hi, c, n in _kinds_one_by_one(unit, a, b, credit)]
    assert _rows(prompt_kinds(unit, big[a], big[b], credit)) == want
