"""audit/_comparisons.py: the parsed comparative calls of a pool, each oriented to its item (x the
earlier-listed candidate of a tournament pair), on a hand-made pool."""

import polars as pl
import pytest

import audit
from audit import COMPARISON_COLUMNS, comparisons
from ingest.store import import_pool
from ingest.scoring import import_verdicts
from tests.train.test_pairs import hand  # noqa: F401  (the hand-made pool of the pairs tests, and its fixture)


pytestmark = pytest.mark.usefixtures("database_named_by_argument")   # tests/conftest.py


def test_each_call_oriented_to_its_item_by_hand(db, write_jsonl):
    # prompt q lists a, b, c (positions 0, 1, 2), prompt r lists e then d
    rows = [{"prompt_id": p, "prompt": f"question {p}", "candidate_id": c, "response": c, "reference": 1.0}
            for p, cs in (("q", "abc"), ("r", "ed")) for c in cs]
    import_pool(db, write_jsonl("p.jsonl", rows), "p")
    calls = [("q", "a", "b", "A+"),       # forward: x a, y b, margin +1 for slot A
             ("q", "b", "a", "B++"),      # reversed (b listed later is in slot A): x a, y b, swapped, -2
             ("q", "c", "a", "TIE"),      # reversed: x a, y c, swapped, 0
             ("q", "b", "c", "not sure"), # unparsed: left out
             ("q", "a", "a", "TIE"),      # a self-comparison: left out
             ("r", "d", "e", "A++")]      # d is listed after e: reversed, x e, y d, +2
    v = [{"judge": "j", "format": "tournament", "prompt_id": p, "a_id": a, "b_id": b, "raw": raw}
         for p, a, b, raw in calls]
    v.append({"judge": "j", "format": "likert5", "prompt_id": "q", "candidate_id": "a", "raw": "4"})   # pointwise
    import_verdicts(db, write_jsonl("v.jsonl", v), "p")
    got = comparisons(db, "p")
    assert tuple(got.columns) == COMPARISON_COLUMNS
    # cand_idx in listing order over the pool: a 0, b 1, c 2, e 3, d 4; prompt q 0, r 1
    assert got.select("prompt_idx", "x", "y", "swapped", "value").rows() == [
        (0, 0, 1, False, 1.0), (0, 0, 1, True, -2.0), (0, 0, 2, True, 0.0), (1, 3, 4, True, 2.0)]
    assert set(got["judge"]) == {"j"} and set(got["format"]) == {"tournament"} and set(got["decoding"]) == {"greedy"}


def test_a_pool_without_comparative_calls_has_none(db, write_jsonl):
    import_pool(db, write_jsonl("p.jsonl", [{"prompt_id": "q", "prompt": "Q?", "candidate_id": c,
                                             "response": c} for c in "ab"]), "p")
    got = comparisons(db, "p")
    assert got.height == 0 and tuple(got.columns) == COMPARISON_COLUMNS


def test_comparisons_orient_each_call(hand):
    calls = audit.comparisons(hand, "hand")
    # p1's two calls are the same item (x = c0 = 3, y = c1 = 4), the second shown swapped
    p1 = calls.filter(pl.col("prompt_idx") == 1)
    assert p1.select("x", "y", "swapped", "value").rows() == [(3, 4, False, 1.0), (3, 4, True, 1.0)]
