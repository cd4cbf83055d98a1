"""Scoring with real models: the bundled SmolLM2 in-process, and the same GGUF served by a real
OpenAI-compatible server we did not write (llama-cpp-python's). Slow-ish: a model load each."""

import subprocess
import sys

import pytest

from audit import audit_cells, bias
from ingest import import_pool
from ingest.runner import ScoreRequest, score
from tests.conftest import free_port, query_rows, wait_http

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


@pytest.fixture(scope="module")
def llama_server():
    pytest.importorskip("llama_cpp", reason="llama-cpp-python[server] is installed by `make test`")
    from ingest.judges.local import gguf_path
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(gguf_path()),
                             "--n_threads", "2", "--n_ctx", "2048", "--host", "127.0.0.1", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    if not wait_http(url + "/models"):
        proc.kill()
        pytest.fail("llama_cpp.server did not come up within 120 s")
    yield url
    proc.terminate()
    proc.wait(timeout=30)


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
    assert sorted(set(cells["format"]) - {f + "+expected" for f in FIVE}) == sorted(FIVE)
    assert all(cells["n_verdicts"].to_list())
    b = bias(db, "p", n_boot=50)
    assert set(b["format"]) == {"anchored", "tournament"} and b.filter(b["format"] == "anchored")["n_self"][0] == 2
    models = query_rows(db, "SELECT DISTINCT judge_model FROM cell_runs")
    assert models and models[0][0]            # the model id the server reported is recorded


def test_local_judge_in_process(db, write_jsonl):
    import_pool(db, write_jsonl("pool.jsonl", POOL), "p")
    result = score(ScoreRequest(pool="p", judge="local:smollm2", formats=["binary", "likert5", "numeric100",
                                                                         "tournament"], progress=False))
    assert result["made"] == 12 + 2 and result["failed"] == 0
    got = {name: (n, parsed, expected) for name, n, parsed, expected in _statuses(db)}
    # pointwise verdicts come from the label-constrained reading: always a label, with its distribution
    for fmt in ("binary", "likert5", "numeric100"):
        assert got[fmt] == (4, 4, 4)
    assert got["tournament"][0] == 2            # free generation: parsed or not, each call is a row
    cells = audit_cells(db, "p")
    assert {"likert5+expected", "numeric100+expected"} <= set(cells["format"])
