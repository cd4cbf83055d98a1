"""audit.reference_agreement: the format's own tau_a and top1 (DESIGN.md 'Metric definitions') on a
set of calls, as `align` reports them before -> after. Worked by hand below."""

import math

import numpy as np

from audit import reference_agreement


def test_pointwise_by_hand():
    # binary (0/1). Prompt 0: candidates 0, 1, 2 with references 0.9, 0.5, 0.1 and scores 1, 0, 0:
    #   (0,1) concordant, (0,2) concordant, (1,2) tied in s -> tau_a = (2 - 0) / 3 = 2/3; top: 0 = ref top -> 1.
    # Prompt 1: candidates 3, 4, references 0.2, 0.8, scores 1, 0: discordant -> tau_a = -1; top1 0.
    # Prompt 2: candidates 5, 6, references 0.3, 0.9, both 1: tied -> tau_a = 0; top1: the judge-top member
    #   with the larger seeded key (np.random.default_rng(0).random(7)) is reference-top when it is 6.
    # Prompt 3: candidate 7 alone (and 8 unparsed): no pair, left out.
    calls = [{"a_idx": 0, "b_idx": None, "value": 1}, {"a_idx": 1, "b_idx": None, "value": 0},
             {"a_idx": 2, "b_idx": None, "value": 0}, {"a_idx": 3, "b_idx": None, "value": 1},
             {"a_idx": 4, "b_idx": None, "value": 0}, {"a_idx": 5, "b_idx": None, "value": 1},
             {"a_idx": 6, "b_idx": None, "value": 1}, {"a_idx": 7, "b_idx": None, "value": 1},
             {"a_idx": 8, "b_idx": None, "value": None}]
    prompt_of = {0: 0, 1: 0, 2: 0, 3: 1, 4: 1, 5: 2, 6: 2, 7: 3, 8: 3}
    refs = {0: 0.9, 1: 0.5, 2: 0.1, 3: 0.2, 4: 0.8, 5: 0.3, 6: 0.9, 7: 0.5, 8: 0.1}
    key = np.random.default_rng(0).random(9)
    t = 1.0 if key[6] > key[5] else 0.0
    got = reference_agreement(None, 0.0, 1.0, calls, prompt_of, refs)
    assert got["n_prompts"] == 3
    assert math.isclose(got["tau_a"], (2 / 3 - 1 + 0) / 3, abs_tol=1e-12)
    assert math.isclose(got["top1"], (1 + 0 + t) / 3, abs_tol=1e-12)


def test_likert_scale_is_normalised_but_order_is_what_counts():
    # likert 1..5: scores 5, 3 against references 0.1, 0.9: discordant -> tau_a -1, top1 0
    calls = [{"a_idx": 0, "b_idx": None, "value": 5}, {"a_idx": 1, "b_idx": None, "value": 3}]
    got = reference_agreement(None, 1.0, 5.0, calls, {0: 0, 1: 0}, {0: 0.1, 1: 0.9})
    assert got == {"tau_a": -1.0, "top1": 0.0, "n_prompts": 1}


def test_tournament_by_hand():
    # One prompt, candidates 0, 1, 2 with references 3, 2, 1; margins in favour of slot A:
    # (0 v 1) +2, (0 v 2) +1, (1 v 2) -1. A candidate's score = mean of sigma(v) as A, 1 - sigma(v) as B:
    #   c0 = (s(2) + s(1)) / 2 = (0.8808 + 0.7311) / 2 = 0.806
    #   c1 = (1 - s(2) + s(-1)) / 2 = (0.1192 + 0.2689) / 2 = 0.194
    #   c2 = (1 - s(1) + 1 - s(-1)) / 2 = (0.2689 + 0.7311) / 2 = 0.5
    # s orders 0 > 2 > 1, r orders 0 > 1 > 2: (0,1) C, (0,2) C, (1,2) D -> tau_a = 1/3; top1 = 1.
    # A second prompt whose only call did not parse holds no score: left out.
    calls = [{"a_idx": 0, "b_idx": 1, "value": 2}, {"a_idx": 0, "b_idx": 2, "value": 1},
             {"a_idx": 1, "b_idx": 2, "value": -1}, {"a_idx": 3, "b_idx": 4, "value": None}]
    got = reference_agreement("tournament", -2.0, 2.0, calls, {0: 0, 1: 0, 2: 0, 3: 1, 4: 1},
                              {0: 3, 1: 2, 2: 1, 3: 1, 4: 2})
    assert got["n_prompts"] == 1
    assert math.isclose(got["tau_a"], 1 / 3, abs_tol=1e-12) and got["top1"] == 1.0


def test_nothing_to_rank():
    assert reference_agreement(None, 0, 1, [{"a_idx": 0, "b_idx": None, "value": None}], {0: 0}, {0: 1.0}) == \
        {"tau_a": None, "top1": None, "n_prompts": 0}
    assert reference_agreement("anchored", -2, 2, [{"a_idx": 0, "b_idx": 1, "value": 1}], {0: 0, 1: 0},
                               {0: 1.0, 1: 0.0}) == {"tau_a": None, "top1": None, "n_prompts": 0}
