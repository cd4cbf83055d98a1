"""`judgeaudit align` end to end with the bundled model behind a real OpenAI-compatible server
(llama-cpp-python's, tests/llama_server.py) for a short budget: the search stays within its budget,
the held-out items are asked as the judge was and as the winner, and what it stores reads back; and
`--optimizer gepa` with the same server as GEPA's reflection model."""

import pytest

from ingest.store import import_labels, import_pool
from tests.conftest import query_rows
from tests.e2e.test_real_judges import llama_server  # noqa: F401  (the module's server fixture)
from tests.train.test_align import N_HELD, calls, planted  # noqa: F401  (calls: a fixture)

QUESTIONS = [("capital", "What is the capital of France?", "The capital of France is Paris.", "It is Lyon."),
             ("sum", "What is 2 + 2?", "2 + 2 = 4.", "5"),
             ("water", "What is water made of?", "Hydrogen and oxygen (H2O).", "Sand."),
             ("sky", "Why is the sky blue?", "Rayleigh scattering of sunlight.", "Because of the sea."),
             ("legs", "How many legs has a spider?", "Eight.", "Six."),
             ("sun", "Is the Sun a star?", "Yes, a G-type main-sequence star.", "No, it is a planet.")]


def test_align_the_bundled_model_through_llama_cpp(db, write_jsonl, llama_server):  # noqa: F811
    """Constrained by llama.cpp's GBNF grammar, every answer is one of the format's labels (greedy, the
    135M model answers prose that does not parse). --held-out 0: the evaluation prompt is the one the
    pool's own rule sets aside (round(0.1 x 6) = 1 prompt, 2 items); 5 training prompts. Budget 6: the
    minibatch is one prompt (min(24, 6 // 4) = 1 item, the first prompt always whole: 2 items), the
    wording takes 2 calls, then (6 - 2) // 2 - 1 = 1 single demonstration 2 more: 4 search calls; the
    2 held-out items are asked before and after: at most 4 more, plus the constraint's check call."""
    from train import align
    rows, labels = [], []
    for pid, q, good, bad in QUESTIONS:
        rows += [{"prompt_id": pid, "prompt": q, "candidate_id": "good", "response": good, "reference": 1},
                 {"prompt_id": pid, "prompt": q, "candidate_id": "bad", "response": bad, "reference": 0}]
        labels += [{"prompt_id": pid, "candidate_id": "good", "label": "accept"},
                   {"prompt_id": pid, "candidate_id": "bad", "label": "reject"}]
    import_pool(db, write_jsonl("pool.jsonl", rows), "p")
    import_labels(db, write_jsonl("labels.jsonl", labels), "p")
    doc = align(db, "p", f"openai:smollm2-gguf@{llama_server}", "binary", decoding="constrained",
                constraint="grammar", demonstrations=1, budget=6, held_out=0.0, concurrency=2)
    assert doc["original_judge"] == "smollm2-gguf" and doc["search_calls"] == 4
    assert doc["n_heldout_prompts"] == 1 and doc["n_heldout_items"] == 2 and doc["n_train_prompts"] == 5
    for part in ("before", "after", "gain"):
        assert set(doc[part]) == {"value", "lo", "hi"}
        assert doc[part]["lo"] <= doc[part]["value"] <= doc[part]["hi"]
    assert doc["calls_made"] == doc["search_calls"] + (4 if doc["stored"] else 2)
    # every stored answer parsed: a label of the format
    statuses = query_rows(db, "SELECT DISTINCT status, answer IN ('ACCEPT', 'REJECT') FROM verdicts")
    assert statuses == [("ok", True)], statuses
    judges = {name for (name,) in query_rows(db, "SELECT j.name FROM verdicts v JOIN judges j USING (judge_id)")}
    assert judges == ({"smollm2-gguf", doc["judge"]} if doc["stored"] else {"smollm2-gguf"})
    assert query_rows(db, "SELECT count(*) FROM cell_runs WHERE source = 'align'")[0][0] == (2 if doc["stored"] else 1)
    # the held-out prompt holds two parsed candidates with references: the format's tau_a and top-1 are read
    assert doc["reference"]["n_prompts"] == {"before": 1, "after": 1}
    print(f"\nthe bundled model via llama.cpp: {doc['before']} -> {doc['after']}, gain {doc['gain']}, "
          f"tau_a {doc['reference']['tau_a']}, judge {doc['judge']}, {doc['calls_made']} calls")


def test_align_with_gepa_and_the_bundled_model_as_reflection_model(db, tmp_path, llama_server, calls):  # noqa: F811
    """--optimizer gepa on the planted pool of tests/train/test_align.py (the fake judge answers at once),
    with the bundled model behind llama.cpp's server as GEPA's reflection model. Budget 40: the minibatch
    is the first 5 training prompts (min(24, 40 // 4) = 10 items); GEPA takes at most 40 // 2 = 20 of
    the calls (train/_align_gepa.py's limits), the built-in search the rest; GEPA's wording is proposed
    by the reflection model (any text: the 135M model's, 48 tokens at most to keep the test short),
    asked only on the minibatch; the held-out prompts stay out of both."""
    pytest.importorskip("gepa", reason="the optional extra: pip install 'judgeaudit[gepa]'")
    from train import align
    heldout = planted(db, tmp_path)
    calls.clear()
    doc = align(db, "al", "teach", "binary", demonstrations=1, budget=40, held_out=0.0, optimizer="gepa",
                reflection=f"openai:smollm2-gguf@{llama_server}", reflection_max_tokens=48)
    g = doc["gepa"]
    assert doc["optimizer"] == "gepa" and g["reflection_calls"] >= 1 and len(g["candidates"]) >= 1
    assert doc["trace"][0]["instruction"] == "built-in"
    # GEPA's limits: r = 3 reflected items, v = min(10, (20 - 7) // 2) = 6 validation items, stop at 20 - 12 = 8:
    # the seed on the 6, then one iteration of at most 3 + 3 + 6 calls
    assert 6 < g["metric_calls"] <= 18 and doc["search_calls"] <= 40
    search = calls[:len(calls) - 2 * doc["n_heldout_items"]] if doc["stored"] else \
        calls[:len(calls) - doc["n_heldout_items"]]
    assert not {c["prompt"] for c in search} & set(heldout.values())
    assert not any(t in d for c in calls for d in c["shown"] for t in heldout.values())
    if len(g["candidates"]) > 1:                    # a wording GEPA proposed was tried by the search too
        assert "gepa" in {t["instruction"] for t in doc["trace"]} or g["wording"] == g["candidates"][0]
    assert doc["n_heldout_prompts"] == N_HELD and doc["gain"]["lo"] <= doc["gain"]["value"] <= doc["gain"]["hi"]
    print(f"\ngepa with the bundled model reflecting: {g['reflection_calls']} reflection calls, "
          f"{g['metric_calls']} judge calls, scores {g['scores']}, gain {doc['gain']}")
