"""audit/_pools.py: the pools of a database and their candidates, and pools whose texts are
placeholders (audit.placeholder_texts on real pools in a DuckDB file, and the warning's words,
app.placeholders)."""

import pytest

from audit import placeholder_texts, pool_candidates, pools
from app.placeholders import placeholder_words
from ingest.store import import_pool
from tests.audit.conftest import candidate


pytestmark = pytest.mark.usefixtures("database_named_by_argument")   # tests/conftest.py


def _rows(n, response):
    return [{"prompt_id": f"q{i // 2}", "prompt": f"Question {i // 2}?", "candidate_id": f"c{i % 2}",
             "response": response(i), "reference": float(i % 2)} for i in range(n)]


def test_a_pool_of_notices_is_flagged_and_a_real_one_is_not(db, write_jsonl):
    # 6 of 8 responses are notices (75% >= 50%): flagged; a real answer that mentions a placeholder is not one
    notice = "[answer text not distributed with demo-v1; {} characters]"
    import_pool(db, write_jsonl("n.jsonl", _rows(8, lambda i: notice.format(1000 + i) if i < 6 else
                                                 "A real answer, with a [placeholder] inside.")), "notices")
    import_pool(db, write_jsonl("r.jsonl", _rows(8, lambda i: "An answer of some length " * (i + 1))), "real")
    got = placeholder_texts(db, "notices").to_dicts()[0]
    # 6 notices of 59 characters ("[answer text not distributed with demo-v1; 1000 characters]"), the only
    # lengths counted (the real answers, 43 characters, are not placeholders)
    assert got == {"n_prompts": 4, "placeholder_prompts": 0, "n_responses": 8, "placeholder_responses": 6,
                   "min_chars": 59, "max_chars": 59, "example": got["example"], "flagged": True}
    assert got["example"].startswith("[answer text not distributed with demo-v1;")
    real = placeholder_texts(db, "real").to_dicts()[0]
    assert (real["placeholder_responses"], real["flagged"], real["example"]) == (0, False, None)
    words = placeholder_words(got, "train")
    assert words.startswith("**This pool's texts are placeholders**: 6 of its 8 responses (59 characters each) "
                            "are notices such as “[answer text not distributed with demo-v1;")
    assert "Curate & Train would train on these placeholders" in words
    assert placeholder_words(real, "train") is None


def test_pools_and_pool_candidates(db, write_jsonl):
    import_pool(db, write_jsonl("a.jsonl", [candidate("q", "x", 2.5, "hello"), candidate("q", "y", None, "hi"),
                                            candidate("r", "z", 1, "")]), "a")
    import_pool(db, write_jsonl("b.jsonl", [candidate("q", "x", 1)]), "b")
    assert pools(db).rows() == [("a", 2, 3), ("b", 1, 1)]
    got = pool_candidates(db, "a").select("prompt_id", "candidate_id", "position", "k", "reference",
                                          "response_chars").rows()
    assert got == [("q", "x", 0, 2, 2.5, 5), ("q", "y", 1, 2, None, 2), ("r", "z", 0, 1, 1.0, 1)]
