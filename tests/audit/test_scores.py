"""audit/_scores.py, the score readers: candidate scores per pairing (normalised, rounded), the
listing order, multiples of five, the score values of a pool's cells, blocks of whole prompts and
their tie-break keys, worked by hand (arithmetic in comments)."""

import math
import warnings

import numpy as np
import polars as pl
import pytest

from audit import _scores as _blocks
from audit import score_values, tiebreak_key
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


def test_normalised_scores_of_no_candidates_and_of_a_candidate_without_calls():
    empty = np.array([], np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")       # a candidate without calls is NaN, not a 0/0 warning
        assert normalised_scores("pointwise", 1, 5, empty, empty, np.array([], bool), np.array([]), 0).size == 0
        # likert 1..5: candidate 0 called twice (2, 4), candidate 1 once (5), candidate 2 never
        a = np.array([0, 0, 1])
        got = normalised_scores("pointwise", 1, 5, a, a, np.zeros(3, bool), np.array([2.0, 4.0, 5.0]), 3)
    # (2-1)/4 = 0.25 and (4-1)/4 = 0.75: mean 0.5; (5-1)/4 = 1.0; no call: NaN
    assert got[:2].tolist() == [0.5, 1.0] and math.isnan(got[2])


def test_listing_order_sorts_by_prompt_then_position():
    # already in listing order: the identity
    assert listing_order(np.array([0, 0, 1, 3]), np.array([0, 1, 0, 0])).tolist() == [0, 1, 2, 3]
    # prompt 1 listed before prompt 0 (positions rising): element 1 (prompt 0) comes first
    assert listing_order(np.array([1, 0]), np.array([0, 1])).tolist() == [1, 0]
    # within a prompt, by position: (0, pos 2), (0, pos 0), (0, pos 1) -> 1, 2, 0
    assert listing_order(np.array([0, 0, 0]), np.array([2, 0, 1])).tolist() == [1, 2, 0]


def test_prompt_blocks_by_hand():
    assert _blocks.prompt_blocks(0, 9, 40, 15) == [(0, 3), (4, 7), (8, 9)]     # 3 blocks of ceil(10/3) = 4
    assert _blocks.prompt_blocks(5, 9, 10, 100) == [(5, 9)]
    assert _blocks.prompt_blocks(0, 3, 4, 1) == [(0, 0), (1, 1), (2, 2), (3, 3)]
    assert _blocks.prompt_blocks(0, -1, 0, 10) == [] and _blocks.prompt_blocks(3, 2, 5, 10) == []


def test_tiebreak_keys_are_the_pools_keys_without_drawing_them_all():
    idx = np.array([7, 3, 12, 4])
    assert np.array_equal(_blocks.tiebreak_keys(idx, 9), tiebreak_key(20, 9)[idx])
    assert _blocks.tiebreak_keys(np.zeros(0, np.int64), 9).size == 0


def test_merged_levels_by_hand():
    from audit._scores import merged_levels
    values, counts = merged_levels([(np.array([0.0, 0.5]), np.array([2, 1])), (np.array([0.5, 1.0]), np.array([4, 3]))])
    assert values.tolist() == [0.0, 0.5, 1.0] and counts.tolist() == [2, 5, 3]
    values, counts = merged_levels([])
    assert values.size == 0 and counts.size == 0
