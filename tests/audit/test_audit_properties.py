"""Property tests: the vectorised audit against scipy.stats on random data full of ties, unparsed
verdicts (NaN scores) and missing references."""

import math
import warnings

import numpy as np
import polars as pl
import pytest
import scipy.stats as ss
from hypothesis import given, settings
from hypothesis import strategies as st

from audit import _metrics as m
from audit._cells import compute_cells, dense_groups
from audit._scores import Scores

S_VALUES = [0.0, 0.25, 0.5, 1.0, float("nan")]
R_VALUES = [0.0, 1.0, 2.0, float("nan")]


@st.composite
def pools(draw):
    sizes = draw(st.lists(st.integers(1, 7), min_size=1, max_size=8))
    n = sum(sizes)
    n_cells = draw(st.integers(1, 3))
    S = np.array([[draw(st.sampled_from(S_VALUES)) for _ in range(n)] for _ in range(n_cells)])
    r = np.array([draw(st.sampled_from(R_VALUES)) for _ in range(n)])
    prompt = np.repeat(np.arange(len(sizes)), sizes)
    position = np.concatenate([np.arange(k) for k in sizes])
    shuffle = np.random.default_rng(draw(st.integers(0, 1000))).permutation(n)  # cand_idx order != listing
    return S[:, shuffle], r[shuffle], prompt[shuffle], position[shuffle]


def _scores(S, r, prompt, position):
    cells = pl.DataFrame({"judge": [f"j{c}" for c in range(S.shape[0])],
                          "format": ["f"] * S.shape[0], "decoding": ["greedy"] * S.shape[0],
                          "score": ["label"] * S.shape[0], "kind": ["pointwise"] * S.shape[0],
                          "n_verdicts": [S.shape[1]] * S.shape[0],
                          "n_parsed": (~np.isnan(S)).sum(axis=1).tolist(),
                          "mult5_share": [None] * S.shape[0], "nominal_levels": [5] * S.shape[0]})
    return Scores(cells, S, prompt, position, r, np.lexsort((position, prompt)))


def _reference_cell(s, r, prompt, position):
    """Independent, loop-based computation of the DESIGN.md definitions with scipy."""
    out = {}
    ok = ~np.isnan(s)
    if ok.any():
        _, counts = np.unique(s[ok], return_counts=True)
        p = counts / counts.sum()
        out.update(distinct=len(counts), tie_prob=float(np.sum(p ** 2)),
                   n_prompts=len(np.unique(prompt[ok])))   # prompts with a parsed score
    both = ok & ~np.isnan(r)
    if both.sum() >= 2:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out["spearman"] = ss.spearmanr(s[both], r[both]).statistic
    taus_a, taus_b, somers, expected, uniform, tied = [], [], [], [], [], []
    for q in np.unique(prompt):
        sel = (prompt == q) & ok
        if sel.sum() >= 2:
            sq = s[sel]
            tied.append(np.sum(sq == sq.max()) >= 2)
        sel = (prompt == q) & both
        if sel.sum() < 2:
            continue
        order = np.argsort(position[sel])
        sq, rq = s[sel][order], r[sel][order]
        n = len(sq)
        cd = sum(np.sign(sq[i] - sq[j]) * np.sign(rq[i] - rq[j]) for i in range(n) for j in range(i + 1, n))
        taus_a.append(cd / (n * (n - 1) / 2))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tb = ss.kendalltau(sq, rq, variant="b").statistic
            if not math.isnan(tb):
                taus_b.append(tb)
            if len(np.unique(rq)) > 1:
                # scipy answers nan for a constant s; DESIGN.md's (C-D)/(n0-n2) is then 0/(n0-n2) = 0
                somers.append(ss.somersd(rq, sq).statistic if len(np.unique(sq)) > 1 else 0.0)
        jt, rt = sq == sq.max(), rq == rq.max()
        expected.append(np.sum(jt & rt) / np.sum(jt))
        uniform.append(np.sum(rt) / n)
    mean = lambda xs: float(np.mean(xs)) if xs else None  # noqa: E731
    out.update(tau_a=mean(taus_a), tau_b=mean(taus_b), somers_d=mean(somers),
               top1_expected=mean(expected), top1_uniform=mean(uniform),
               top_tied=mean([float(t) for t in tied]), n_ranked_prompts=len(taus_a))
    return out


def _close(a, b):
    if a is None or (isinstance(a, float) and math.isnan(a)):
        return b is None or (isinstance(b, float) and math.isnan(b))
    return b is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


@settings(max_examples=150, deadline=None)
@given(pools())
def test_cells_match_scipy(data):
    S, r, prompt, position = data
    got = compute_cells(_scores(S, r, prompt, position), seed=1).to_dicts()
    for c, row in enumerate(got):
        expect = _reference_cell(S[c], r, prompt, position)
        for key, value in expect.items():
            assert _close(value, row[key]), (key, value, row[key])
        assert row["n_candidates"] == int((~np.isnan(S[c])).sum())
        if row["top1"] is not None:
            assert 0.0 <= row["top1"] <= 1.0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 4), max_size=12), st.integers(1, 3))
def test_dense_groups_match_a_loop(prompts, min_size):
    prompt = np.sort(np.array(prompts, np.int64))
    keep, g = dense_groups(prompt, min_size)
    sizes = {q: prompts.count(q) for q in prompts}
    expect_keep = [sizes[q] >= min_size for q in prompt.tolist()]
    kept = [q for q in prompt.tolist() if sizes[q] >= min_size]
    expect_g = [sorted(set(kept)).index(q) for q in kept]      # 0..G-1 in prompt order
    assert keep.tolist() == expect_keep and g.tolist() == expect_g
    assert g.dtype == np.int64                                   # ids index arrays, even when empty


def test_levels_and_prompt_stats_of_nothing_and_prompt_stats_of_groups_of_one():
    # no elements: no groups
    values, counts = m.levels(np.zeros(0))                   # no values: no levels, integer counts
    assert values.size == 0 and counts.size == 0 and counts.dtype == m.levels(np.ones(2))[1].dtype == np.int64
    none = m.PromptStats(np.zeros(0, np.int64), np.zeros(0), np.zeros(0))
    assert none.n_groups == 0 and none.compute(np.zeros(0)) == {}
    # two groups of one member: no pairs, so n0 = C - D = n1 = n2 = 0 per group; the lone member
    # is judge-top and reference-top: top1 = top1_expected = top1_uniform = 1, no tied top
    st_ = m.PromptStats(np.array([0, 1]), np.array([2.0, 5.0]), np.array([0.3, 0.6])).compute(np.array([0, 1]))
    assert {k: v.tolist() for k, v in st_.items()} == {
        "n": [1.0, 1.0], "n0": [0.0, 0.0], "cd": [0.0, 0.0], "n1": [0.0, 0.0], "n2": [0.0, 0.0],
        "top1": [1.0, 1.0], "top1_expected": [1.0, 1.0], "top1_uniform": [1.0, 1.0], "top_tied": [0.0, 0.0]}


def test_rank_correlation_of_a_constant_side_is_nan_without_a_warning():
    # x constant (one level): sxx = 0; y constant (all ranks (m+1)/2): syy = 0. Either way rho is
    # undefined, and the answer is NaN before any 0/0 is computed.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isnan(m.rank_correlation(np.zeros(3, np.int64), 1, np.array([1.0, 2.0, 3.0])))
        assert math.isnan(m.rank_correlation(np.array([0, 1, 1]), 2, np.array([2.0, 2.0, 2.0])))
        assert math.isnan(m.pearson(np.array([1.0, 1.0, 1.0]), np.array([1.0, 2.0, 3.0])))
        assert math.isnan(m.pearson(np.array([1.0, 2.0, 3.0]), np.array([5.0, 5.0, 5.0])))


@settings(max_examples=40, deadline=None)
@given(st.integers(65, 120), st.integers(0, 10_000))
def test_large_groups_take_the_offset_path_and_agree(k, seed):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 4, size=2 * k).astype(float)
    r = rng.integers(0, 6, size=2 * k).astype(float)
    group = np.repeat([0, 1], k)
    stats = m.PromptStats(group, r, rng.random(2 * k)).compute(s)
    tau_a, tau_b, somers = m.kendall_variants(stats["n0"], stats["cd"], stats["n1"], stats["n2"])
    for g in (0, 1):
        sl = slice(g * k, (g + 1) * k)
        assert tau_b[g] == pytest.approx(ss.kendalltau(s[sl], r[sl], variant="b").statistic)
        assert somers[g] == pytest.approx(ss.somersd(r[sl], s[sl]).statistic)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([0.0, 1.0, 2.0, 2.5]), min_size=1, max_size=40),
       st.lists(st.integers(0, 400), min_size=1, max_size=600))
def test_levels_codes_and_ranks_match_numpy_and_rankdata(few, many):
    # few levels take the comparison path of level_codes, many (up to 401) the search path
    for x in (np.array(few), np.array(many) / 7.0):
        values, counts = m.levels(x)
        expected_values, expected_counts = np.unique(x, return_counts=True)
        assert np.array_equal(values, expected_values) and np.array_equal(counts, expected_counts)
        codes = m.level_codes(x, values)
        assert np.array_equal(values[codes], x)
        assert np.allclose(m.ranks_of_codes(codes, values.size), ss.rankdata(x))
        y = np.resize(np.array(few), x.size)[::-1] * 3 + np.arange(x.size) % 2    # ties on both sides
        rho = m.rank_correlation(codes, values.size, ss.rankdata(y))
        if np.unique(x).size > 1 and np.unique(y).size > 1:
            assert rho == pytest.approx(ss.spearmanr(x, y).statistic, abs=1e-12)
        else:
            assert np.isnan(rho)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 30), min_size=1, max_size=12), st.sampled_from([0, 0.5, 1, 2, 3, float("inf")]))
def test_renyi_levels_match_numpy(counts, alpha):
    p = np.array(counts, float) / sum(counts)
    if alpha == 1:
        expect = np.exp(ss.entropy(p))
    elif alpha == 0:
        expect = len(p)
    elif math.isinf(alpha):
        expect = 1 / p.max()
    else:
        expect = np.sum(p ** alpha) ** (1 / (1 - alpha))
    assert m.renyi_levels(p, alpha) == pytest.approx(expect)


def test_two_way_shares_match_a_hand_anova():
    # judges x formats: rows (1, 2, 3) and (3, 4, 8). grand mean 3.5
    t = np.array([[1.0, 2.0, 3.0], [3.0, 4.0, 8.0]])
    # SS_total = 6.25+2.25+.25+.25+.25+20.25 = 29.5
    # format means (2, 3, 5.5): SS_format = 2 * (2.25 + .25 + 4) = 13
    # judge means (2, 5): SS_judge = 3 * (2.25 + 2.25) = 13.5; residual = 3
    out = m.two_way_shares(t)
    assert out["ss_total"] == pytest.approx(29.5)
    assert out["share_format"] == pytest.approx(13 / 29.5)
    assert out["share_judge"] == pytest.approx(13.5 / 29.5)
    assert out["share_residual"] == pytest.approx(3 / 29.5)


def test_large_pools_computed_two_cells_at_a_time_match_one_at_a_time():
    # >= 100k candidates takes the threaded path; the same cells one by one must agree exactly
    rng = np.random.default_rng(7)
    n = 100_000
    prompt = np.repeat(np.arange(n // 4), 4)
    position = np.tile(np.arange(4), n // 4)
    r = rng.integers(0, 5, n).astype(float)
    S = rng.integers(0, 5, (3, n)).astype(float) / 4
    S[1, rng.random(n) < 0.1] = np.nan
    together = compute_cells(_scores(S, r, prompt, position), seed=3)
    alone = pl.concat([compute_cells(_scores(S[c:c + 1], r, prompt, position), seed=3) for c in range(3)])
    assert together.drop("judge").equals(alone.drop("judge"))


def test_stored_row_order_does_not_change_the_audit(tmp_path):
    """The audit reads candidates and verdicts without ORDER BY (sorting a million rows costs more
    than placing them): shuffling the stored rows leaves the diagnostics unchanged."""
    import duckdb
    from polars.testing import assert_frame_equal

    from audit import audit_cells
    from tests.fixtures import build_db
    db = tmp_path / "order.duckdb"
    build_db(db, tmp_path, n_prompts=40, seed=7)
    before = audit_cells(db, "synth")
    con = duckdb.connect(str(db))
    con.execute("SELECT setseed(0.25)").fetchall()
    for table in ("candidates", "verdicts"):
        con.execute(f"CREATE TEMP TABLE shuffled AS SELECT * FROM {table} ORDER BY random()")
        con.execute(f"DELETE FROM {table}")
        con.execute(f"INSERT INTO {table} SELECT * FROM shuffled")
        con.execute("DROP TABLE shuffled")
    stored = [r[0] for r in con.execute("SELECT cand_idx FROM candidates").fetchall()]
    con.close()
    assert stored != sorted(stored)
    assert_frame_equal(audit_cells(db, "synth"), before, check_exact=False, rel_tol=1e-9)
