"""audit/_positions.py, listing-position selection of tournament cells: how often the selected
candidate (top-scored, seeded tie-break) is a prompt's first- or last-listed one, against the
uniform rate mean(1/k), worked by hand and against the audit's top1."""

import numpy as np
import pytest

from audit import audit_cells, position_selection, tiebreak_key
from ingest.store import import_pool
from ingest.scoring import import_verdicts
from tests.audit.conftest import _by_hand_top1, candidate


pytestmark = pytest.mark.usefixtures("database_named_by_argument")   # tests/conftest.py


def test_audit_top1_and_position_selection_agree_through_the_database(db, write_jsonl):
    """Reference 1 on each prompt's first-listed candidate, 0 elsewhere: top1 is then exactly the
    share of prompts whose selected candidate is the first-listed one, position_selection's
    first_rate; both must agree for every seed. Prompt sizes 2, 3, 4 (uniform rate mean(1/k))."""
    rows, verdicts = [], []
    for p, k in enumerate([2, 3, 4, 3, 2]):
        ids = [f"c{i}" for i in range(k)]
        rows += [candidate(f"q{p}", c, 1 if i == 0 else 0) for i, c in enumerate(ids)]
        for i in range(k):
            for j in range(i + 1, k):      # every match a TIE: all k candidates tie at 0.5
                verdicts.append({"judge": "j", "format": "tournament", "prompt_id": f"q{p}",
                                 "a_id": ids[i], "b_id": ids[j], "raw": "TIE"})
    import_pool(db, write_jsonl("p.jsonl", rows), "p")
    import_verdicts(db, write_jsonl("v.jsonl", verdicts), "p")
    firsts = []
    for seed in range(12):
        cell = audit_cells(db, "p", seed=seed).to_dicts()[0]
        pos = position_selection(db, "p", seed=seed).to_dicts()[0]
        assert cell["top1"] == pytest.approx(pos["first_rate"])
        # top1_expected = mean(1/k) = (1/2 + 1/3 + 1/4 + 1/3 + 1/2) / 5 = 0.38333
        assert cell["top1_expected"] == pytest.approx((1 / 2 + 1 / 3 + 1 / 4 + 1 / 3 + 1 / 2) / 5)
        assert pos["uniform_rate"] == pytest.approx((1 / 2 + 1 / 3 + 1 / 4 + 1 / 3 + 1 / 2) / 5)
        firsts.append(pos["first_rate"])
    assert len(set(firsts)) > 1     # the seed does change the tie-breaks
    # the default seed is 0 (as curation's): the audit's top1 is then the one of tiebreak_key(n, 0),
    # worked out prompt by prompt as in _by_hand_top1 (every candidate ties at the top)
    sizes = [2, 3, 4, 3, 2]
    ref = np.concatenate([[1.0] + [0.0] * (k - 1) for k in sizes])
    expect = _by_hand_top1(np.zeros(ref.size), ref, sizes, tiebreak_key(ref.size, 0))
    assert audit_cells(db, "p").to_dicts()[0]["top1"] == pytest.approx(expect)
    assert position_selection(db, "p").to_dicts()[0]["first_rate"] == pytest.approx(expect)


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
