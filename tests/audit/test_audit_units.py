"""The audit's building blocks on hand-sized arrays, each expected value worked out in a comment:
candidate scores per pairing, rounding before comparison, group layouts, the metric helpers'
edge cases, the slot-scheme wording."""

import math
import warnings

import numpy as np
import pytest

from audit import _metrics as m
from audit._cells import dense_groups
from audit._report import _slot_scheme
from audit._scores import listing_order, multiples_of_5_share, normalised_scores
from ingest.store import import_pool
from ingest.scoring import import_verdicts


pytestmark = pytest.mark.usefixtures("database_named_by_argument")   # tests/conftest.py

SIG1, SIG2 = 1 / (1 + math.exp(-1)), 1 / (1 + math.exp(-2))
NO = np.zeros(0, dtype=bool)


def _arr(*xs, dtype=np.int64):
    return np.array(xs, dtype=dtype)


# --- normalised_scores ---------------------------------------------------------------------

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


# --- layouts and helpers -------------------------------------------------------------------

def test_dense_groups_keep_prompts_with_enough_members():
    # prompts 5,5,7,9,9,9: sizes 2, 1, 3; with min_size 2 prompt 7 goes, the rest renumber 0, 1
    keep, g = dense_groups(_arr(5, 5, 7, 9, 9, 9), 2)
    assert keep.tolist() == [True, True, False, True, True, True] and g.tolist() == [0, 0, 1, 1, 1]
    keep, g = dense_groups(_arr(5, 5, 7), 3)
    assert keep.tolist() == [False, False, False] and g.size == 0
    keep, g = dense_groups(_arr(4), 1)
    assert keep.tolist() == [True] and g.tolist() == [0]
    keep, g = dense_groups(_arr(), 2)
    assert keep.size == 0 and g.size == 0


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


# --- report wording ------------------------------------------------------------------------

@pytest.mark.parametrize("run, b_row, text", [
    (None, None, "unknown"),
    ({"source": "import", "schedule": None}, None, "imported verdicts"),
    ({"source": "score", "schedule": "anchored"}, None, "candidate in slot A against the prompt's anchor"),
    ({"source": "score", "schedule": "listing"}, None, "tournament, earlier-listed candidate always Response A"),
    ({"source": "score", "schedule": "balanced"}, None, "tournament, each candidate in slot A as often as in B"),
    ({"source": "score", "schedule": "both"},
     {"n_reverse_calls": 3, "n_calls": 9, "n_pairs": 2},
     "tournament, every pair in both orders; 3 of 9 calls in the reverse order, 2 items seen in both orders"),
    ({"source": "score", "schedule": "custom"}, None, "custom"),
    ({"source": "score", "schedule": None}, None, ""),
])
def test_slot_scheme_wording(run, b_row, text):
    assert _slot_scheme(run, b_row) == text


# --- empty and degenerate pools ------------------------------------------------------------

def test_a_pool_without_verdicts_gives_empty_tables_with_their_columns(db, write_jsonl):
    import audit
    import_pool(db, write_jsonl("p.jsonl", [{"prompt_id": "q", "prompt": "P", "candidate_id": "a",
                                             "response": "a"}]), "p")
    assert audit.audit_cells(db, "p").columns == audit.CELL_COLUMNS and audit.audit_cells(db, "p").height == 0
    assert audit.bias(db, "p").columns == audit.BIAS_COLUMNS and audit.bias(db, "p").height == 0
    for frame, columns in ((audit.candidate_scores(db, "p"), ["judge", "format", "decoding", "score", "cand_idx",
                                                               "prompt_idx", "position", "s", "r"]),
                           (audit.score_values(db, "p"), ["judge", "format", "decoding", "score", "s", "n", "mult5"]),
                           (audit.stability(db, "p"), ["judge", "format", "decoding", "score", "metric", "full",
                                                       "sub_size", "mean", "sd", "shift"]),
                           (audit.effective_levels(db, "p"), ["judge", "format", "decoding", "score", "alpha",
                                                              "d_alpha", "n_candidates"]),
                           (audit.position_selection(db, "p"), ["judge", "format", "decoding", "n_prompts",
                                                                "first_rate", "last_rate", "uniform_rate"])):
        assert frame.height == 0 and frame.columns == columns


def test_a_cell_without_any_parsed_verdict(db, write_jsonl):
    import audit
    import_pool(db, write_jsonl("p.jsonl", [{"prompt_id": "q", "prompt": "P", "candidate_id": c,
                                             "response": c, "reference": 1} for c in "ab"]), "p")
    v = [{"judge": "j", "format": "likert5", "prompt_id": "q", "candidate_id": c, "raw": "no idea"} for c in "ab"]
    # a tournament whose only call is a self-comparison: no candidate gets a tournament score
    v.append({"judge": "j", "format": "tournament", "prompt_id": "q", "a_id": "a", "b_id": "a", "raw": "TIE"})
    import_verdicts(db, write_jsonl("v.jsonl", v), "p")
    cells = {c["format"]: c for c in audit.audit_cells(db, "p").to_dicts()}
    for fmt, n_verdicts, rate in (("likert5", 2, 0.0), ("tournament", 1, 1.0)):
        c = cells[fmt]
        assert (c["n_verdicts"], c["parse_rate"], c["n_candidates"], c["n_prompts"], c["distinct"],
                c["n_ranked_prompts"]) == (n_verdicts, rate, 0, 0, 0, 0)
        assert c["tie_prob"] is None and c["top1"] is None and c["spearman"] is None
    pos = audit.position_selection(db, "p").to_dicts()
    assert pos == [{"judge": "j", "format": "tournament", "decoding": "greedy", "n_prompts": 0,
                    "first_rate": None, "last_rate": None, "uniform_rate": None}]


def test_a_tournament_cell_without_scores_does_not_stop_the_next_one(db, write_jsonl):
    import audit
    import_pool(db, write_jsonl("p.jsonl", [{"prompt_id": "q", "prompt": "P", "candidate_id": c,
                                             "response": c, "reference": 1} for c in "abc"]), "p")
    # judge "a" (listed first) only compares a with itself: no scores.
    # judge "b": (a, b, A+) scores a = sig(1) > b = 1 - sig(1); c unscored: of the 2 scored, the
    #   selected a is the first listed.
    # judge "c": (b, c, B++) scores b = sig(-2) < c = 1 - sig(-2); a unscored: of the 2 scored
    #   (b, c), the selected c is the last listed.
    v = [{"judge": "a", "format": "tournament", "prompt_id": "q", "a_id": "a", "b_id": "a", "raw": "TIE"},
         {"judge": "b", "format": "tournament", "prompt_id": "q", "a_id": "a", "b_id": "b", "raw": "A+"},
         {"judge": "c", "format": "tournament", "prompt_id": "q", "a_id": "b", "b_id": "c", "raw": "B++"}]
    import_verdicts(db, write_jsonl("v.jsonl", v), "p")
    got = audit.position_selection(db, "p").rows()
    assert got == [("a", "tournament", "greedy", 0, None, None, None), ("b", "tournament", "greedy", 1, 1.0, 0.0, 0.5),
                   ("c", "tournament", "greedy", 1, 0.0, 1.0, 0.5)]


