"""Scoring with real models: the bundled SmolLM2 in-process, and the same GGUF served by a real
OpenAI-compatible server we did not write (llama-cpp-python's). Slow-ish: a model load each."""

import pytest

from audit import audit_cells, bias
from ingest import UserError
from ingest.store import import_pool
from ingest.scoring.formats import BUILTIN
from ingest.scoring import score, ScoreRequest
from tests.conftest import query_rows

FIVE = ["binary", "likert5", "numeric100", "anchored", "tournament"]
POOL = [
    {"prompt_id": "capital", "prompt": "What is the capital of France?", "candidate_id": "good",
     "response": "The capital of France is Paris.", "reference": 2},
    {"prompt_id": "capital", "prompt": "What is the capital of France?", "candidate_id": "bad",
     "response": "I think it is Lyon.", "reference": 0},
    {"prompt_id": "sum", "prompt": "What is 2 + 2?", "candidate_id": "good", "response": "2 + 2 = 4.", "reference": 1},
    {"prompt_id": "sum", "prompt": "What is 2 + 2?", "candidate_id": "bad", "response": "5", "reference": 0},
]


def _statuses(db):
    return query_rows(db, "SELECT f.name, count(*), count(v.value), count(v.expected) FROM verdicts v "
                          "JOIN formats f USING (format_id) GROUP BY f.name ORDER BY f.name")


@pytest.fixture
def llama_server(bundled_llama_server):
    """The session's llama.cpp server on the bundled model (tests/conftest.py): loaded once for every module."""
    return bundled_llama_server


def test_llama_cpp_server_all_five_formats(db, write_jsonl, llama_server):
    import_pool(db, write_jsonl("pool.jsonl", POOL), "p")
    result = score(ScoreRequest(pool="p", judge=f"openai:smollm2-gguf@{llama_server}", formats=FIVE,
                                concurrency=2, swap_sample="all", timeout=120, max_retries=1, progress=False))
    # 4 pointwise calls x 3; anchored: 4 forward (2 self) + 2 reverse; tournament: 2 pairs + 2 swaps
    assert result["planned"] == 12 + 6 + 4
    assert result["made"] == 22 and result["failed"] == 0 and result["status"] == "finished"
    rows = {name: (n, parsed) for name, n, parsed, _ in _statuses(db)}
    assert rows == {k: (v, rows[k][1]) for k, v in
                    {"anchored": 6, "binary": 4, "likert5": 4, "numeric100": 4, "tournament": 4}.items()}
    cells = audit_cells(db, "p")
    assert sorted(set(cells["format"])) == sorted(FIVE) and set(cells["decoding"]) == {"greedy"}
    assert all(cells["n_verdicts"].to_list())
    b = bias(db, "p", n_boot=50)
    assert set(b["format"]) == {"anchored", "tournament"} and b.filter(b["format"] == "anchored")["n_self"][0] == 2
    models = query_rows(db, "SELECT DISTINCT judge_model FROM cell_runs")
    assert models and models[0][0]            # the model id the server reported is recorded


def test_local_judge_in_process(db, write_jsonl, shared_bundled_judge):   # the session's model, loaded once
    import_pool(db, write_jsonl("pool.jsonl", POOL), "p")
    result = score(ScoreRequest(pool="p", judge="local:smollm2", formats=["binary", "likert5", "numeric100",
                                                                         "tournament"], decoding="constrained",
                                progress=False))
    assert result["made"] == 12 + 2 and result["failed"] == 0
    got = {name: (n, parsed, expected) for name, n, parsed, expected in _statuses(db)}
    # the label-constrained reading: always a label, with its distribution (comparative ones too)
    for fmt in ("binary", "likert5", "numeric100"):
        assert got[fmt] == (4, 4, 4)
    assert got["tournament"][:2] == (2, 2)
    cells = audit_cells(db, "p")
    assert {("likert5", "expected"), ("numeric100", "expected")} <= set(zip(cells["format"], cells["score"]))
    assert set(cells["decoding"]) == {"constrained"}


def test_llama_cpp_server_constrained_by_grammar(db, write_jsonl, llama_server):
    """llama-cpp-python's server honours a GBNF grammar: under --decoding constrained every verdict
    is one of the format's labels; a field it does not know (vLLM's guided_choice) it silently
    ignores, which the check call made before the run tells the user."""
    import_pool(db, write_jsonl("pool.jsonl", POOL), "p")
    judge = f"openai:smollm2-gguf@{llama_server}"
    with pytest.raises(UserError, match="ignored it"):
        score(ScoreRequest(pool="p", judge=judge, formats=["binary"], decoding="constrained",
                           constraint="guided_choice", timeout=120, progress=False))
    assert query_rows(db, "SELECT count(*) FROM verdicts") == [(0,)]
    formats = ["binary", "likert5", "anchored"]
    result = score(ScoreRequest(pool="p", judge=judge, formats=formats, decoding="constrained",
                                constraint="grammar", concurrency=2, timeout=120, max_retries=1, progress=False))
    assert result["made"] == 4 + 4 + 4 and result["failed"] == 0
    rows = query_rows(db, "SELECT f.name, v.raw, v.status, v.decoding FROM verdicts v JOIN formats f USING (format_id)")
    for name, raw, status, decoding in rows:
        assert status == "ok" and decoding == "constrained"
        assert raw in BUILTIN[name].answer_values(), (name, raw)     # exactly a label, nothing around it
    cells = audit_cells(db, "p")
    assert set(zip(cells["format"], cells["decoding"], cells["parse_rate"])) >= {
        ("binary", "constrained", 1.0), ("likert5", "constrained", 1.0), ("anchored", "constrained", 1.0)}
