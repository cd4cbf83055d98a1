"""audit/_pool_summary.py: the Pool page's summary of a pool (counts, prompts per k, references and
response lengths in 30 equal bins) and its first 200 candidates, worked by hand."""

import polars as pl
import pytest

from audit import pool_candidates, pool_head, pool_summary
from ingest.store import import_pool


pytestmark = pytest.mark.usefixtures("database_named_by_argument")   # tests/conftest.py


def _part(frame, part):
    return frame.filter(pl.col("part") == part).select("x", "width", "n").rows()


def test_counts_sizes_and_bins_by_hand(db, write_jsonl):
    # q: a (reference 0, 10 characters), b (reference 3, 40 characters); r: c (no reference, 25
    # characters, held out)
    rows = [{"prompt_id": "q", "prompt": "Q?", "candidate_id": "a", "response": "x" * 10, "reference": 0},
            {"prompt_id": "q", "prompt": "Q?", "candidate_id": "b", "response": "x" * 40, "reference": 3},
            {"prompt_id": "r", "prompt": "R?", "candidate_id": "c", "response": "x" * 25, "split": "heldout"}]
    import_pool(db, write_jsonl("p.jsonl", rows), "p")
    got = pool_summary(db, "p")
    assert got.columns == ["part", "x", "width", "n"]
    # 2 prompts, 3 candidates, 2 with a reference, 1 held out
    assert _part(got, "count") == [(0.0, 1.0, 2), (1.0, 1.0, 3), (2.0, 1.0, 2), (3.0, 1.0, 1)]
    # one prompt of 1 candidate, one of 2
    assert _part(got, "k") == [(1.0, 1.0, 1), (2.0, 1.0, 1)]
    # references 0 and 3: 30 bins of width 3/30 = 0.1; 0 in the first (x 0), 3 in the last (x 2.9)
    ref = _part(got, "reference")
    assert [n for _, _, n in ref] == [1, 1]
    assert [x for x, _, _ in ref] == pytest.approx([0.0, 2.9]) and ref[0][1] == pytest.approx(0.1)
    # lengths 10, 25, 40: width 30/30 = 1; bins 0 (x 10), 15 (x 25) and 29, the last, closed (x 39)
    assert _part(got, "chars") == [(10.0, 1.0, 1), (25.0, 1.0, 1), (39.0, 1.0, 1)]


def test_one_value_is_one_bin_and_no_value_none(db, write_jsonl):
    # every response 7 characters: one bin of width 1 at 7; no reference at all: no reference bins
    rows = [{"prompt_id": f"q{i}", "prompt": "Q?", "candidate_id": "c", "response": "seven!!"} for i in range(4)]
    import_pool(db, write_jsonl("p.jsonl", rows), "p")
    got = pool_summary(db, "p")
    assert _part(got, "chars") == [(7.0, 1.0, 4)]
    assert _part(got, "reference") == []
    assert _part(got, "k") == [(1.0, 1.0, 4)]


def test_the_head_is_the_first_200_candidates(db, write_jsonl):
    rows = [{"prompt_id": f"q{i // 3:03d}", "prompt": "Q?", "candidate_id": f"c{i % 3}", "response": "r"}
            for i in range(205)]
    import_pool(db, write_jsonl("p.jsonl", rows), "p")
    head = pool_head(db, "p")
    assert head.height == 200
    assert list(zip(head["prompt_id"], head["candidate_id"])) == \
        [(f"q{i // 3:03d}", f"c{i % 3}") for i in range(200)]
    assert head.equals(pool_candidates(db, "p").head(200))
