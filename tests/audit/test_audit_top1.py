"""top1 and the judge's top candidate (DESIGN.md 'Metric definitions'):

- with no tied tops, top1 (one seeded tie-break) equals top1_expected (the exact expectation);
- averaged over many seeds, top1 approaches top1_expected;
- the tie-break picks the judge-top candidate with the LARGEST seeded key;
- the audit's top1 (PromptStats) and the selection that position_selection makes (selected_member)
  pick the same candidate.
"""

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit import _metrics as m
from audit import tiebreak_key
from audit._cells import compute_cells
from audit._scores import Scores
from tests.audit.conftest import _by_hand_top1


pytestmark = pytest.mark.usefixtures("database_named_by_argument")   # tests/conftest.py


def _scores(S, r, sizes):
    """Scores for cells S (cells x n) over prompts of the given sizes, in listing order."""
    S = np.atleast_2d(np.asarray(S, float))
    n = S.shape[1]
    prompt = np.repeat(np.arange(len(sizes)), sizes)
    position = np.concatenate([np.arange(k) for k in sizes])
    cells = pl.DataFrame({"judge": [f"j{c}" for c in range(S.shape[0])], "format": ["f"] * S.shape[0],
                          "decoding": ["greedy"] * S.shape[0], "score": ["label"] * S.shape[0],
                          "kind": ["pointwise"] * S.shape[0], "n_verdicts": [n] * S.shape[0],
                          "n_parsed": (~np.isnan(S)).sum(axis=1).tolist(),
                          "mult5_share": [None] * S.shape[0], "nominal_levels": [5] * S.shape[0]})
    return Scores(cells, S, prompt, position, np.asarray(r, float), np.arange(n))


# Four prompts of sizes 3, 4, 2, 5 with tied tops (expected share of reference-top among judge-top):
#   p0: s (1,1,1),     r (3,2,1)     judge-top {0,1,2}, ref-top {0}      -> 1/3
#   p1: s (1,1,0,0),   r (2,1,2,0)   judge-top {0,1},   ref-top {0,2}    -> 1/2
#   p2: s (1,0),       r (0,1)       judge-top {0},     ref-top {1}      -> 0
#   p3: s (2,2,2,2,1), r (3,3,1,0,2) judge-top {0..3},  ref-top {0,1}    -> 2/4
# top1_expected = (1/3 + 1/2 + 0 + 1/2) / 4 = 1/3
SIZES = [3, 4, 2, 5]
S_TIED = [1, 1, 1, 1, 1, 0, 0, 1, 0, 2, 2, 2, 2, 1]
R_TIED = [3, 2, 1, 2, 1, 2, 0, 0, 1, 3, 3, 1, 0, 2]


def test_top1_expected_by_hand_and_top1_follows_the_largest_key():
    sc = _scores(S_TIED, R_TIED, SIZES)
    for seed in range(40):
        cell = compute_cells(sc, seed=seed).to_dicts()[0]
        assert cell["top1_expected"] == pytest.approx(1 / 3)
        # top1_uniform = mean of |ref-top| / k = (1/3 + 2/4 + 1/2 + 2/5) / 4 = 1.7333.../4
        assert cell["top1_uniform"] == pytest.approx((1 / 3 + 1 / 2 + 1 / 2 + 2 / 5) / 4)
        key = tiebreak_key(len(S_TIED), seed)
        assert cell["top1"] == pytest.approx(_by_hand_top1(np.array(S_TIED), np.array(R_TIED), SIZES, key))


def test_compute_cells_default_seed_is_0():
    # p0 alone: s (1,1,1), r (3,2,1). Seed 0's keys (.637, .270, .041) pick candidate 0, the
    # reference top: top1 = 1. Seed 1's (.512, .950, .144) pick candidate 1: top1 = 0.
    sc = _scores(S_TIED[:3], R_TIED[:3], [3])
    keys = [tiebreak_key(3, seed) for seed in (0, 1)]
    assert [int(np.argmax(k)) for k in keys] == [0, 1]
    assert compute_cells(sc).to_dicts()[0]["top1"] == 1.0


def test_top1_averaged_over_seeds_approaches_top1_expected():
    # Per seed, top1 = mean of 4 Bernoulli(1/3, 1/2, 0, 1/2) draws; its variance is
    # (2/9 + 1/4 + 0 + 1/4) / 16 = 0.045139, so the mean of 3000 seeds has sd sqrt(0.045139/3000)
    # = 0.003879. Allow 4.5 sd.
    s, r = np.array(S_TIED, float), np.array(R_TIED, float)
    n_seeds, n = 3000, s.size
    # the pool repeated once per seed, each copy with that seed's keys: one PromptStats for all
    group = np.repeat(np.arange(len(SIZES) * n_seeds), SIZES * n_seeds)
    keys = np.concatenate([tiebreak_key(n, seed) for seed in range(n_seeds)])
    top1 = m.PromptStats(group, np.tile(r, n_seeds), keys).compute(np.tile(s, n_seeds))["top1"]
    draws = top1.reshape(n_seeds, len(SIZES)).mean(axis=1)
    stats = m.PromptStats(group[:n], r, np.zeros(n))
    assert abs(np.mean(draws) - 1 / 3) < 4.5 * math.sqrt(0.045139 / 3000)
    assert stats.compute(s)["top1_expected"].mean() == pytest.approx(1 / 3)
    # and each tied member of p0 is picked a third of the time: sd sqrt(2/9/3000) = 0.0086
    picks = [int(np.argmax(tiebreak_key(s.size, seed)[:3])) for seed in range(3000)]
    assert np.allclose(np.bincount(picks, minlength=3) / 3000, 1 / 3, atol=4.5 * math.sqrt(2 / 9 / 3000))


@st.composite
def untied_pools(draw):
    """Prompts whose judge-top candidate is unique (other scores may tie), references with ties."""
    sizes = draw(st.lists(st.integers(2, 6), min_size=1, max_size=6))
    s, r = [], []
    for k in sizes:
        rest = draw(st.lists(st.sampled_from([0.0, 0.25, 0.5]), min_size=k - 1, max_size=k - 1))
        top_at = draw(st.integers(0, k - 1))
        s += rest[:top_at] + [1.0] + rest[top_at:]
        r += draw(st.lists(st.sampled_from([0.0, 1.0, 2.0]), min_size=k, max_size=k))
    return np.array(s), np.array(r), sizes, draw(st.integers(0, 10_000))


@settings(max_examples=80, deadline=None)
@given(untied_pools())
def test_without_tied_tops_top1_equals_top1_expected(data):
    s, r, sizes, seed = data
    cell = compute_cells(_scores(s, r, sizes), seed=seed).to_dicts()[0]
    assert cell["top_tied"] == 0.0
    assert cell["top1"] == cell["top1_expected"]
    # and both are the share of prompts whose single judge-top is reference-top
    assert cell["top1"] == pytest.approx(_by_hand_top1(s, r, sizes, np.zeros(s.size)))


@st.composite
def tied_groups(draw):
    sizes = draw(st.lists(st.integers(1, 8), min_size=1, max_size=10))
    n = sum(sizes)
    s = np.array(draw(st.lists(st.sampled_from([0.0, 1.0, 2.0]), min_size=n, max_size=n)))
    r = np.array(draw(st.lists(st.sampled_from([0.0, 1.0]), min_size=n, max_size=n)))
    key = np.random.default_rng(draw(st.integers(0, 10_000))).random(n)
    return np.repeat(np.arange(len(sizes)), sizes), s, r, key


@settings(max_examples=120, deadline=None)
@given(tied_groups())
def test_prompt_stats_and_selected_member_pick_the_same_candidate(data):
    group, s, r, key = data
    chosen = m.selected_member(group, s, key)
    # selected_member: one index per group, the judge-top member with the largest key (by hand)
    assert chosen.size == group.max() + 1
    for g, i in enumerate(chosen):
        members = np.flatnonzero(group == g)
        tops = members[s[members] == s[members].max()]
        assert i == tops[np.argmax(key[tops])]
    # PromptStats' top1 is whether that same member is reference-top
    rt = np.array([r[i] == r[group == group[i]].max() for i in range(r.size)])
    top1 = m.PromptStats(group, r, key).compute(s)["top1"]
    assert np.array_equal(top1, rt[chosen].astype(float))


