"""The audit's per-view layouts (audit/_metrics.py PromptMatrix, levels' probe): every cell's numbers
are those of the per-cell layouts they replace (PromptStats over dense_groups of the cell's candidates,
m.top_tied, a sort), exactly, on pools full of ties, missing scores and missing references."""

from __future__ import annotations

import numpy as np
import pytest

from audit import _metrics as m
from audit._cells import PoolView, cell_parts, dense_groups
from audit._scores import Scores


def _pool(rng, n_prompts, sizes=(1, 2, 3, 4, 5, 8)):
    size = rng.choice(sizes, n_prompts)
    group = np.repeat(np.arange(n_prompts), size)
    return group, rng.integers(0, 4, group.size), rng.random(group.size)   # references on 4 levels: ties


@pytest.mark.parametrize("seed", range(6))
def test_the_matrix_gives_prompt_stats_of_any_subset(seed):
    rng = np.random.default_rng(seed)
    group, r, key = _pool(rng, 400)
    matrix = m.PromptMatrix(group, r, key)
    for share in (1.0, 0.9, 0.5):
        present = rng.random(group.size) < share
        s = rng.integers(0, 3, group.size).astype(np.int8)              # 3 score levels: ties everywhere
        keep, g = dense_groups(group[present], 2)
        idx = np.flatnonzero(present)[keep]
        expect = m.PromptStats(g, r[idx], key[idx]).compute(s[idx])
        n, got = matrix.compute(s, present)
        assert n == (int(g[-1]) + 1 if g.size else 0) and n > 0
        for name, v in expect.items():
            assert np.array_equal(got[name], v, equal_nan=True), (share, name)
        # top_tied over the groups of >= 2 present members, as m.top_tied counts them
        tied = m.top_tied(g, s[idx])
        assert matrix.top_tied(s, present) == (int(tied.sum()), tied.size)


def test_the_matrix_refuses_groups_it_does_not_lay_out():
    group = np.repeat([0, 1], [3, m.SMALL_GROUP + 1])
    with pytest.raises(ValueError, match="groups of at most"):
        m.PromptMatrix(group, np.zeros(group.size), np.zeros(group.size))


def _old_parts(view, s):
    """cell_parts' ranked and top_tied parts as the per-cell layouts computed them (PoolView.ranked and
    tie_layout, which the view keeps for prompts too large for its matrix)."""
    valid = ~np.isnan(s)
    values, _ = m.levels(s[valid])
    code = m.level_codes(s, values)
    both = valid & view.has_r
    out = {}
    idx, g = view.pairs_layout(valid)
    if idx.size:
        t = m.top_tied(g, code[idx]).astype(float)
        out["top_tied"] = (float(t.sum()), t.size)
    idx, stats = view.ranked(both)
    if idx.size:
        st = stats.compute(code[idx])
        out["n_ranked_prompts"] = stats.n_groups
        for name in ("top1", "top1_expected", "top1_uniform"):
            out[name] = (float(st[name].sum()), st[name].size)
        if np.array_equal(both, valid):
            out["top_tied"] = (float(st["top_tied"].sum()), st["top_tied"].size)
        tau_a, tau_b, somers = m.kendall_variants(st["n0"], st["cd"], st["n1"], st["n2"])
        for name, v in (("tau_a", tau_a), ("tau_b", tau_b), ("somers_d", somers)):
            v = v[~np.isnan(v)]
            out[name] = (float(v.sum()), v.size)
    return out


@pytest.mark.parametrize("big", [False, True], ids=["matrix", "a prompt too large for it"])
def test_cell_parts_are_the_per_cell_layouts(big):
    rng = np.random.default_rng(11)
    group, _, _ = _pool(rng, 300)
    if big:
        group = np.concatenate([group, np.full(m.SMALL_GROUP + 6, group[-1] + 1)])
    n = group.size
    reference = rng.integers(0, 5, n).astype(float)
    reference[rng.random(n) < 0.1] = np.nan                              # missing references
    S = np.round(rng.integers(0, 4, (4, n)) / 3.0, m.ROUND)
    S[1, rng.random(n) < 0.2] = np.nan                                   # unparsed calls
    S[2, np.isnan(reference)] = np.nan                                   # scored where referenced alone
    sc = Scores(None, S, group, np.zeros(n, np.int64), reference, np.arange(n))
    view = PoolView(sc, seed=3)
    assert (view.matrix() is None) == big
    for c in range(S.shape[0]):
        got, expect = cell_parts(view, S[c]), _old_parts(view, S[c])
        for name, v in expect.items():
            assert got[name] == v, (c, name)


def test_levels_are_the_sorted_distinct_values_and_their_counts():
    rng = np.random.default_rng(2)
    few = rng.integers(0, 5, 10_000) / 4.0
    late = few.copy()
    late[-3:] = 0.3                      # a value the first PROBE elements do not show: the sort decides
    many = rng.random(10_000)            # more values than PROBE_LEVELS
    small = np.array([0.5, 0.25, 0.5])   # no more than PROBE elements
    for x in (few, late, many, small):
        values, counts = m.levels(x)
        expect_values, expect_counts = np.unique(x, return_counts=True)
        assert np.array_equal(values, expect_values) and np.array_equal(counts, expect_counts)
        assert counts.dtype == np.int64
    assert m.levels(late)[1][np.searchsorted(m.levels(late)[0], 0.3)] == 3
