"""audit/_stats.py: Holm's step-down adjustment and McNemar's paired test (shared by the probes and
the downstream contrasts), by hand and against scipy."""

import math

import pytest
from scipy import stats

from audit import holm, mcnemar
from tests.audit.conftest import chi2_1df_sf


# -- statistics --------------------------------------------------------------------------------
@pytest.mark.parametrize("b,c", [(0, 5), (3, 9), (7, 7), (1, 20), (12, 30), (40, 10)])
def test_exact_mcnemar_is_scipy_binomtest(b, c):
    got = mcnemar(b, c)
    assert got["p_exact"] == pytest.approx(stats.binomtest(min(b, c), b + c, 0.5).pvalue, rel=1e-12)
    # and by hand: twice the lower binomial tail at 1/2, at most 1
    tail = sum(math.comb(b + c, k) for k in range(min(b, c) + 1)) / 2 ** (b + c)
    assert got["p_exact"] == pytest.approx(min(1.0, 2 * tail), rel=1e-9)
    assert got["test"] == ("exact" if b + c < 25 else "chi2_cc")


def test_continuity_corrected_mcnemar_by_hand():
    # b = 30, c = 12: chi2 = (|30 - 12| - 1)^2 / 42 = 17^2 / 42 = 289 / 42 = 6.880952...
    # a chi-square with 1 df is Z^2, so p = P(|Z| > sqrt(6.880952)) = erfc(sqrt(6.880952 / 2))
    got = mcnemar(30, 12)
    assert got["test"] == "chi2_cc"
    assert got["p_cc"] == pytest.approx(math.erfc(math.sqrt(289 / 42 / 2)), rel=1e-9)   # 0.00871...
    assert got["p"] == got["p_cc"]
    assert 0.0087 < got["p"] < 0.0088
    # no discordant pair: nothing to test
    assert mcnemar(0, 0)["p"] == 1.0


def test_holm_by_hand():
    # sorted: 0.005 x 4 = 0.02; 0.01 x 3 = 0.03; 0.03 x 2 = 0.06; 0.04 x 1 = 0.04 -> running max 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])       # 2 x 0.5 = 1; max(1, 0.9) = 1


def test_holm_caps_at_one_and_keeps_ties_together():
    from audit import holm
    # m = 2: 0.6 x 2 = 1.2 -> capped at 1; 0.7 x 1 = 0.7 -> running max 1
    assert holm([0.6, 0.7]) == [1.0, 1.0]
    # m = 3, a tie: sorted 0.01 x 3 = 0.03, 0.02 x 2 = 0.04, 0.02 x 1 = 0.02 -> running max 0.04
    assert holm([0.02, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])
    assert holm([]) == []


def binom_two_sided(k: int, n: int) -> float:
    """Twice the lower tail of Binomial(n, 1/2) at k = min(b, c), at most 1."""
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n)


@pytest.mark.parametrize("b,c,cc", [
    (0, 0, None),
    (1, 0, 0.0),            # |1 - 0| - 1 = 0
    (3, 0, 4 / 3),          # (3 - 1)^2 / 3
    (1, 4, 4 / 5),          # (|1 - 4| - 1)^2 / 5 = 4 / 5
    (3, 2, 0.0),            # |1| - 1 = 0: the correction floors at 0, not at 1
    (10, 2, 49 / 12),       # (8 - 1)^2 / 12 = 49 / 12 (not 2 x 7 / 12)
    (19, 5, 169 / 24),      # 24 discordant: still the exact test
    (20, 5, 196 / 25),      # 25 discordant: the corrected chi-square
    (5, 20, 196 / 25),
])
def test_mcnemar_by_hand(b, c, cc):
    from audit import mcnemar
    got = mcnemar(b, c)
    assert set(got) == {"p_exact", "p_cc", "p", "test"}
    if cc is None:          # no discordant pair: nothing to test
        assert got == {"p_exact": 1.0, "p_cc": 1.0, "p": 1.0, "test": "exact"}
        return
    n = b + c
    assert got["p_exact"] == pytest.approx(binom_two_sided(min(b, c), n), rel=1e-9)
    assert got["p_exact"] == pytest.approx(stats.binomtest(min(b, c), n, 0.5).pvalue, rel=1e-12)
    assert got["p_cc"] == pytest.approx(chi2_1df_sf(cc), rel=1e-9)
    assert got["test"] == ("exact" if n < 25 else "chi2_cc")
    assert got["p"] == (got["p_exact"] if n < 25 else got["p_cc"])
