"""audit/_subsets.py: curation subsets as the store keeps them (newest last, by pool, by the SHA-256
of the exported file) and the texts of chosen candidates in the order asked."""

import polars as pl
import pytest

from audit import SUBSET_COLUMNS, candidate_texts, subset_by_hash, subsets
from ingest.store import import_pool, save_subset


pytestmark = pytest.mark.usefixtures("database_named_by_argument")   # tests/conftest.py


def _pool(db, write_jsonl, name):
    rows = [{"prompt_id": f"q{p}", "prompt": f"Question {p}?", "candidate_id": c, "response": f"{c} to {p}"}
            for p in range(2) for c in ("a", "b")]
    import_pool(db, write_jsonl(f"{name}.jsonl", rows), name)


def _summary(n_selected):
    return {"policy": "full", "rate": 0.5, "seed": 0, "n_eligible": 2, "n_selected": n_selected,
            "n_pick_tied": 0, "n_cut_tied": 0, "n_heldout_prompts": 0, "cut_value": 1.0}


def _members(cands):
    return pl.DataFrame({"prompt_idx": [c // 2 for c in cands], "cand_idx": cands, "value": [1.0] * len(cands),
                         "pick_tied": [False] * len(cands), "cut_tied": [False] * len(cands)})


def test_subsets_by_pool_newest_last_and_by_hash(db, write_jsonl):
    _pool(db, write_jsonl, "one")
    _pool(db, write_jsonl, "two")
    save_subset(db, "one", "first", _summary(1), _members([0]), sha256="aa" * 32)
    save_subset(db, "two", "other", _summary(2), _members([1, 3]), sha256="bb" * 32)
    save_subset(db, "one", "second", _summary(2), _members([0, 2]), sha256="aa" * 32)
    every = subsets(db)
    assert tuple(every.columns) == SUBSET_COLUMNS
    assert every.select("pool", "name", "n_selected").rows() == [("one", "first", 1), ("two", "other", 2),
                                                                 ("one", "second", 2)]
    assert subsets(db, "one")["name"].to_list() == ["first", "second"]
    # two subsets share a file hash: the newest one
    assert subset_by_hash(db, "aa" * 32)["name"] == "second"
    assert subset_by_hash(db, "bb" * 32)["pool"] == "two"
    assert subset_by_hash(db, "cc" * 32) is None
    # saving under a name already used in the pool replaces that subset: the new one, newest, last
    save_subset(db, "one", "first", _summary(2), _members([1, 2]))
    assert subsets(db, "one").select("name", "n_selected").rows() == [("second", 2), ("first", 2)]


def test_no_database_has_no_subset(tmp_path):
    assert subset_by_hash(tmp_path / "none.duckdb", "aa" * 32) is None
    assert not (tmp_path / "none.duckdb").exists()


def test_candidate_texts_in_the_order_asked(db, write_jsonl):
    _pool(db, write_jsonl, "one")
    # cand_idx 0 a/q0, 1 b/q0, 2 a/q1, 3 b/q1
    got = candidate_texts(db, "one", [3, 0, 2])
    assert got.select("cand_idx", "prompt_id", "candidate_id", "prompt", "response").rows() == [
        (3, "q1", "b", "Question 1?", "b to 1"), (0, "q0", "a", "Question 0?", "a to 0"),
        (2, "q1", "a", "Question 1?", "a to 1")]
    assert candidate_texts(db, "one", []).height == 0
