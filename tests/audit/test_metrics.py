"""audit/_metrics.py, the pure numpy metric helpers, on hand-sized arrays: edge cases, exactness,
the bootstrap means and the two-way variance shares (arithmetic in comments)."""

import math
import warnings

import numpy as np
import pytest

from audit import _metrics as m
from tests.audit.conftest import _arr


pytestmark = pytest.mark.usefixtures("database_named_by_argument")   # tests/conftest.py


def test_metric_helpers_on_empty_and_tiny_inputs():
    assert math.isnan(m.renyi_levels(np.zeros(0), 2)) and math.isnan(m.renyi_levels(np.array([0.0]), 1))
    assert m.renyi_levels(np.array([0.25, 0.75, 0.0]), 0) == 2.0        # zero shares are not levels
    assert m.group_starts(_arr()).size == 0 and m.group_starts(_arr(3, 3, 4)).tolist() == [0, 2]
    assert m.selected_member(_arr(), np.zeros(0), np.zeros(0)).size == 0
    values, counts = m.levels(np.zeros(0))
    assert values.size == 0 and counts.size == 0
    assert math.isnan(m.rank_correlation(_arr(0), 1, np.array([1.0])))
    assert math.isnan(m.pearson(np.array([1.0]), np.array([2.0])))
    assert m.pearson(np.array([1.0, 2.0]), np.array([5.0, 3.0])) == -1.0      # two points: a line
    assert m.rank_correlation(_arr(0, 1), 2, np.array([1.0, 2.0])) == 1.0
    assert math.isnan(m.pearson(np.array([1.0, 1.0]), np.array([2.0, 3.0])))
    assert m.pearson(np.array([1.0, 2.0, 4.0]), np.array([1.0, 3.0, 2.0])) == pytest.approx(0.3273268, abs=1e-7)
    # two groups: (s 1, 0 | r 0, 1) discordant; (s 2, 2 | r 1, 1) tied in both
    n0, cd, n1, n2 = m.pair_counts(_arr(0, 0, 1, 1), np.array([1.0, 0, 2, 2]), np.array([0.0, 1, 1, 1]), 2)
    assert (n0.tolist(), cd.tolist(), n1.tolist(), n2.tolist()) == ([1, 1], [-1, 0], [0, 1], [0, 1])
    # trailing groups of one member have no pairs: (s 2, 1 | r 1, 2) discordant, then two singletons
    n0, cd, n1, n2 = m.pair_counts(_arr(0, 0, 1, 2), np.array([2.0, 1, 5, 5]), np.array([1.0, 2, 0, 0]), 3)
    assert (n0.tolist(), cd.tolist(), n1.tolist(), n2.tolist()) == ([1, 0, 0], [-1, 0, 0], [0, 0, 0], [0, 0, 0])
    n0, cd, n1, n2 = m.pair_counts(_arr(0, 0, 1, 1, 2), np.array([2.0, 2, 1, 0, 5]), np.array([1.0, 1, 2, 3, 0]), 3)
    assert (cd.tolist(), n1.tolist(), n2.tolist()) == ([0, -1, 0], [1, 0, 0], [1, 0, 0])
    n0, cd, n1, n2 = m.pair_counts(_arr(), np.zeros(0), np.zeros(0), 2)
    assert n0.tolist() == [0, 0] and cd.tolist() == [0, 0]
    tau_a, tau_b, somers = m.kendall_variants(n0=np.array([1.0, 1.0, 0.0]), cd=np.array([-1.0, 0.0, 0.0]),
                                              n1=np.array([0.0, 1.0, 0.0]), n2=np.array([0.0, 1.0, 0.0]))
    assert tau_a[:2].tolist() == [-1.0, 0.0] and math.isnan(tau_a[2])
    assert tau_b[0] == -1.0 and math.isnan(tau_b[1]) and math.isnan(somers[1]) and somers[0] == -1.0
    assert m.top_tied(_arr(0, 0, 1, 1, 1), np.array([2.0, 2, 1, 3, 0])).tolist() == [True, False]
    assert m.top_tied(_arr(), np.zeros(0)).size == 0                     # no groups, no answers
    # one group of one member, and a lone member after a tied pair: nobody shares the top
    assert m.top_tied(_arr(0), np.array([0.5])).tolist() == [False]
    assert m.top_tied(_arr(0, 0, 1), np.array([1.0, 1, 3])).tolist() == [True, False]


def test_pearson_of_a_small_spread_and_undefined_means_without_a_warning():
    # x = 1, 2, 3 (dx = -1, 0, 1, sxx = 2); y = 0, 0.1, 0.3 (mean 4/30, dy = (-4, -1, 5)/30,
    # syy = 42/900, sxy = (4 + 5)/30 = 0.3): r = 0.3 / sqrt(2 * 42/900) = 9 / sqrt(84) = 0.98198
    assert m.pearson(np.array([1.0, 2, 3]), np.array([0.0, 0.1, 0.3])) == pytest.approx(9 / math.sqrt(84))
    assert m.pearson(np.array([1.0, 2, 3]), np.array([0.01, 0.02, 0.03])) == pytest.approx(1.0)  # a line
    # a constant side (either one): NaN, quietly (no 0/0 warning)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isnan(m.pearson(np.array([1.0, 2, 3]), np.array([2.0, 2, 2])))
        assert math.isnan(m.pearson(np.array([2.0, 2, 2]), np.array([1.0, 2, 3])))


def test_level_codes_use_the_smallest_type_and_stay_exact_past_it():
    for n_levels, dtype in ((3, np.int8), (127, np.int8), (300, np.int16), (40_000, np.int32)):
        values = np.arange(n_levels, dtype=float) / 7
        x = values[::-1].copy()
        codes = m.level_codes(x, values)
        assert codes.dtype == dtype and np.array_equal(codes, np.arange(n_levels)[::-1])


def test_bootstrap_means_of_a_constant_and_of_one_row():
    rng = np.random.default_rng(0)
    out = m.bootstrap_means(np.full((5, 2), 3.0), 7, rng)
    assert out.shape == (7, 2) and np.all(out == 3.0)
    # one item: every resample is that item
    assert np.all(m.bootstrap_means(np.array([[1.5, -2.0]]), 4, rng) == [1.5, -2.0])
    # the mean over many resamples of (0, 1) is 1/2: sd of one resample mean of 2 is 0.3536,
    # of 20000 of them 0.0025
    assert m.bootstrap_means(np.array([0.0, 1.0]), 20_000, rng).mean() == pytest.approx(0.5, abs=0.0125)


def test_bootstrap_means_are_taken_in_double_precision_whatever_the_input_type():
    # values 1, 2, 2 held as float16: a resample of three has mean (3 + number of 2s drawn) / 3,
    # one of 3/3, 4/3, 5/3, 6/3 exactly in double precision; float16 arithmetic would give 4/3 as
    # 1.333 and 5/3 as 1.667 (off by ~3e-4)
    out = m.bootstrap_means(np.array([1, 2, 2], dtype=np.float16), 200, np.random.default_rng(0))
    assert out.dtype == np.float64 and out.shape == (200, 1)
    assert np.abs(out * 3 - np.round(out * 3)).max() < 1e-12 and set(np.round(out * 3).ravel()) <= {3, 4, 5, 6}
    assert {4, 5} <= set(np.round(out * 3).ravel())      # 200 draws: P(no 4/3) = (1 - 6/27)^200 ~ 0


def test_bootstrap_means_in_several_chunks_and_of_no_columns():
    # 2 rows x 100,000 columns: 2e7 // 2e5 = 100 resamples a chunk, so 101 resamples take two.
    # Row 0 is all 0 and row 1 all 1: a resample mean is (number of row-1 draws) / 2 in every column
    # alike (one set of resampled rows serves every column): 0, 0.5 or 1
    values = np.vstack([np.zeros(100_000), np.ones(100_000)])
    out = m.bootstrap_means(values, 101, np.random.default_rng(0))
    assert out.shape == (101, 100_000)
    assert np.all(out == out[:, :1]) and set(out[:, 0]) <= {0.0, 0.5, 1.0}
    # rows without columns (nothing to average): an empty table of n_boot rows, not an error
    assert m.bootstrap_means(np.zeros((3, 0)), 5, np.random.default_rng(0)).shape == (5, 0)


def test_two_way_shares_of_a_constant_table_are_undefined():
    # 0.4 is not exact in binary: the grand mean's rounding leaves SS_total ~ 1e-32, not 0, and
    # shares of that noise would be meaningless numbers
    out = m.two_way_shares(np.full((2, 3), 0.4))
    assert out["ss_total"] < 1e-24
    assert all(math.isnan(out[k]) for k in ("share_format", "share_judge", "share_residual"))


def test_two_way_shares_rounding_allowance_scales_with_the_values():
    shares = ("share_format", "share_judge", "share_residual")
    # all zeros: SS_total = 0 exactly, the allowance 0 too; undefined, not 0/0
    assert all(math.isnan(v) for k, v in m.two_way_shares(np.zeros((2, 2))).items() if k in shares)
    # a constant of about 400: the grand mean's rounding leaves SS_total ~ 2e-26 (squared rounding
    # of numbers near 400, 400^2 x 1e-32), far below the allowance 6 (1e-12 x 400.4)^2 ~ 1e-18
    out = m.two_way_shares(np.full((2, 3), 400.4))
    assert 0 < out["ss_total"] < 1e-24 and all(math.isnan(out[k]) for k in shares)
    # a real difference of 1e-6 around 1 is not rounding: 1 + 1e-6 (0, 1 | 0, 0) has the shares of
    # (0, 1 | 0, 0): grand 1/4, SS_total = 3/16 + 9/16 = 3/4, format means (0, 1/2): SS_f = 2 (1/16 +
    # 1/16) = 1/4, judge means (1/2, 0): SS_j = 1/4, residual 1/4 -> a third each
    out = m.two_way_shares(1 + 1e-6 * np.array([[0.0, 1.0], [0.0, 0.0]]))
    assert out["ss_total"] == pytest.approx(0.75e-12, rel=1e-6)
    assert [out[k] for k in shares] == pytest.approx([1 / 3] * 3, rel=1e-6)
