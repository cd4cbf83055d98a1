"""audit/_scores.py, the score readers: candidate scores per pairing (normalised, rounded), the
listing order, multiples of five, and the score values of a pool's cells, worked by hand
(arithmetic in comments)."""

import math

import numpy as np
import polars as pl
import pytest

from audit import score_values
from audit._scores import listing_order, multiples_of_5_share, normalised_scores
from ingest.store import import_pool
from ingest.scoring import import_verdicts
from tests.audit.conftest import _arr, candidate, pointwise


pytestmark = pytest.mark.usefixtures("database_named_by_argument")   # tests/conftest.py

SIG1, SIG2 = 1 / (1 + math.exp(-1)), 1 / (1 + math.exp(-2))


def test_pointwise_one_call_each_normalised_by_the_scale():
    # likert 1..5: (v - 1) / 4 -> 1 -> 0, 5 -> 1, 3 -> 0.5; candidate 3 has no call: NaN
    s = normalised_scores("pointwise", 1, 5, _arr(0, 1, 2), _arr(-1, -1, -1), _arr(0, 0, 0, dtype=bool),
                          np.array([1.0, 5.0, 3.0]), 4)
    assert s[:3].tolist() == [0.0, 1.0, 0.5] and math.isnan(s[3])


def test_pointwise_samples_are_averaged():
    # candidate 0: likert 2 and 3 -> (0.25 + 0.5)/2 = 0.375; candidate 1: 5 -> 1; candidate 2: none
    s = normalised_scores("pointwise", 1, 5, _arr(0, 0, 1), _arr(-1, -1, -1), _arr(0, 0, 0, dtype=bool),
                          np.array([2.0, 3.0, 5.0]), 3)
    assert s[:2].tolist() == [0.375, 1.0] and math.isnan(s[2])


def test_scores_are_rounded_so_the_order_of_summation_cannot_split_a_tie():
    # 0.1 + 0.2 + 0.3 = 0.6000000000000001 but 0.3 + 0.2 + 0.1 = 0.6: without rounding to 12
    # decimals the two candidates (the same three verdicts) would not tie
    assert (0.1 + 0.2 + 0.3) / 3 != (0.3 + 0.2 + 0.1) / 3
    s = normalised_scores("pointwise", 0, 1, _arr(0, 0, 0, 1, 1, 1), _arr(*[-1] * 6), np.zeros(6, bool),
                          np.array([0.1, 0.2, 0.3, 0.3, 0.2, 0.1]), 2)
    assert s[0] == s[1] == 0.2


def test_anchored_scores_read_forward_calls_only():
    # margins -2..2 -> (v + 2)/4; candidate 2's only call is reversed (swapped): no score
    s = normalised_scores("anchored", -2, 2, _arr(0, 1, 2), _arr(1, 1, 1), _arr(0, 0, 1, dtype=bool),
                          np.array([2.0, -2.0, 1.0]), 3)
    assert s[:2].tolist() == [1.0, 0.0] and math.isnan(s[2])
    # two forward calls of candidate 0: (2+2)/4 and (0+2)/4 -> mean 0.75
    s = normalised_scores("anchored", -2, 2, _arr(0, 0), _arr(1, 1), np.zeros(2, bool), np.array([2.0, 0.0]), 2)
    assert s[0] == 0.75 and math.isnan(s[1])


def test_tournament_scores_by_hand():
    # (0 vs 1, +2), (1 vs 0, +1), (0 vs 0, self, ignored), (2 vs 0, -1):
    #   0: sig(2) as A; 1 - sig(1) as B; 1 - sig(-1) = sig(1) as B  -> (sig2 + 1 - sig1 + sig1)/3
    #   1: 1 - sig(2) as B; sig(1) as A                              -> (1 - sig2 + sig1)/2
    #   2: sig(-1) = 1 - sig(1) as A                                 -> 1 - sig1
    s = normalised_scores("tournament", -2, 2, _arr(0, 1, 0, 2), _arr(1, 0, 0, 0), np.zeros(4, bool),
                          np.array([2.0, 1.0, 0.0, -1.0]), 4)
    expect = [(SIG2 + 1) / 3, (1 - SIG2 + SIG1) / 2, 1 - SIG1]
    assert s[:3] == pytest.approx(expect, abs=1e-12) and math.isnan(s[3])
    assert s[0] == pytest.approx(0.6269, abs=1e-4)    # (0.880797 + 1)/3


def test_multiples_of_five_and_listing_order():
    assert multiples_of_5_share(np.array([85.0, 90.0, 87.0])) == pytest.approx(2 / 3)
    assert multiples_of_5_share(np.array([0.0, 100.0])) == 1.0
    assert multiples_of_5_share(np.zeros(0)) is None
    assert listing_order(_arr(0, 0, 1), _arr(0, 1, 0)).tolist() == [0, 1, 2]
    # prompt 0 listed as positions 1, 0; prompt 1 first in the arrays
    assert listing_order(_arr(1, 0, 0), _arr(0, 1, 0)).tolist() == [2, 1, 0]
    assert listing_order(_arr(0, 0), _arr(1, 0)).tolist() == [1, 0]


def test_score_values_and_multiples_of_five(db, write_jsonl):
    import_pool(db, write_jsonl("p.jsonl", [candidate("q", c, i) for i, c in enumerate("abcd")]), "p")
    raws = [("q", "a", "85"), ("q", "b", "90"), ("q", "c", "87"), ("q", "d", "85")]
    likert = [("q", "a", "3"), ("q", "b", "3"), ("q", "c", "5"), ("q", "d", "nope")]
    import_verdicts(db, write_jsonl("v.jsonl", pointwise("j", "numeric100", raws)
                                    + pointwise("j", "likert5", likert)), "p")
    got = score_values(db, "p")
    assert got.columns == ["judge", "format", "decoding", "score", "s", "n", "mult5"]
    assert got.schema["n"] == pl.UInt32 and got.schema["s"] == pl.Float64      # as in an empty table
    num = got.filter(pl.col("format") == "numeric100").sort("s").select("s", "n", "mult5").rows()
    # 85 twice, 87 once, 90 once; 85 and 90 are multiples of 5
    assert num == [(0.85, 2, True), (0.87, 1, False), (0.9, 1, True)]
    lik = got.filter(pl.col("format") == "likert5").sort("s").select("s", "n", "mult5").rows()
    # (3-1)/4 = 0.5 twice, (5-1)/4 = 1 once; not a 0-100 scale: mult5 is null
    assert lik == [(0.5, 2, None), (1.0, 1, None)]
    # every row names its cell: judge j, imported verdicts read greedily, the parsed labels' values
    assert got.select("judge", "decoding", "score").unique().rows() == [("j", "greedy", "label")]
