"""The audit on real judge data, checked against independent counts: the LLMBar slice committed
under tests/data (runs everywhere, CI included) and arena-bench from ../shared/data (when present)."""

import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from audit import audit_cells, bias
from ingest.store import import_pool
from ingest.scoring import import_verdicts
from tests.conftest import SHARED_DATA


pytestmark = pytest.mark.usefixtures("database_named_by_argument")   # tests/conftest.py

LLMBAR = Path(__file__).resolve().parents[1] / "data" / "llmbar"   # see its README (MIT, credit)
ARENA = SHARED_DATA / "arena_bench_v1"


def _rows(path):
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def test_llmbar_slot_bias_equals_an_independent_count(db, tmp_path):
    instances = [r for r in _rows(LLMBAR / "instances.jsonl") if r["subset"] == "LLMBar/Natural"]
    keep = {r["instance_id"] for r in instances}
    pool = tmp_path / "pool.jsonl"
    with open(pool, "w") as fh:
        for r in instances:
            for out in (1, 2):
                fh.write(json.dumps({"prompt_id": r["instance_id"], "prompt": r["input"],
                                     "candidate_id": f"o{out}", "response": r[f"output_{out}"],
                                     "reference": int(r["gold"] == out)}) + "\n")
    verdicts = [r for r in _rows(LLMBAR / "pairwise_verdicts.jsonl")
                if r["instance_id"] in keep and r["strategy"] == "Vanilla"]
    vfile = tmp_path / "verdicts.jsonl"
    with open(vfile, "w") as fh:
        for r in verdicts:
            a = r["output_in_slot_a"]
            raw = "" if r["winner"] is None else ("Output (a)" if r["chose_slot_a"] else "Output (b)")
            fh.write(json.dumps({"judge": r["judge"], "format": "llmbar-pair", "prompt_id": r["instance_id"],
                                 "a_id": f"o{a}", "b_id": f"o{3 - a}", "raw": raw}) + "\n")
    spec = tmp_path / "llmbar-pair.toml"
    spec.write_text('name = "llmbar-pair"\nkind = "comparative"\nlabels = { "Output (a)" = 1, "Output (b)" = -1 }\n')
    import_pool(db, pool, "natural")
    import_verdicts(db, vfile, "natural", format_specs=[spec])

    # Independent count. Item = an instance judged in both orders; x = output_1 (listed first).
    # v_fwd = +1 if slot A won with output_1 in A; v_rev = +1 if slot A won with output_2 in A.
    orders = defaultdict(dict)
    for r in verdicts:
        if r["winner"] is not None:
            orders[(r["judge"], r["instance_id"])][r["order"]] = 1 if r["chose_slot_a"] else -1
    expect = defaultdict(lambda: {"b": [], "consistent": []})
    for (judge, _), o in orders.items():
        if len(o) == 2:
            expect[judge]["b"].append((o["original"] + o["swapped"]) / 2)
            expect[judge]["consistent"].append(np.sign(o["original"]) == -np.sign(o["swapped"]))
    got = {row["judge"]: row for row in bias(db, "natural", n_boot=300).to_dicts()}
    assert set(got) == set(expect) == {"GPT-4", "ChatGPT", "ChatGPT-0301", "PaLM2", "LLaMA2", "Falcon"}
    assert len(instances) == 85 and len(verdicts) == 1020           # the committed slice, whole
    for judge, e in expect.items():
        assert got[judge]["n_pairs"] == len(e["b"])
        assert got[judge]["b"] == pytest.approx(np.mean(e["b"]))
        assert got[judge]["consistency"] == pytest.approx(np.mean(e["consistent"]))
        # b = share of slot-A wins over both orders, mapped to -1..1: 2 * P(A) - 1
    # the README's sanity figures: ChatGPT and Falcon lean to slot A far more than GPT-4
    assert got["GPT-4"]["b"] < got["ChatGPT"]["b"] < got["Falcon"]["b"]

    cells = {row["judge"]: row for row in audit_cells(db, "natural").to_dicts()}
    for judge in expect:   # parse rate: verdicts with a winner / all verdicts of the judge
        mine = [r for r in verdicts if r["judge"] == judge]
        assert cells[judge]["n_verdicts"] == len(mine)
        assert cells[judge]["parse_rate"] == pytest.approx(sum(r["winner"] is not None for r in mine) / len(mine))
    # GPT-4 Vanilla on Natural: ~95% correct per order -> top-1 (gold) expectation far above 1/2
    assert cells["GPT-4"]["top1_expected"] > 0.85 and cells["GPT-4"]["top1_uniform"] == 0.5


@pytest.mark.skipif(not ARENA.exists(), reason="../shared/data is not beside the repository")
def test_arena_bench_pointwise_scale_ties(db, tmp_path):
    src = ARENA
    scores = _rows(src / "scores.jsonl")
    prompts = {q["question_id"]: q["prompt"] for q in _rows(src / "questions.jsonl")}
    pool, vfile = tmp_path / "pool.jsonl", tmp_path / "v.jsonl"
    with open(pool, "w") as fp, open(vfile, "w") as fv:
        for s in scores:
            fp.write(json.dumps({"prompt_id": s["question_id"], "prompt": prompts[s["question_id"]],
                                 "candidate_id": s["model"], "response": "-"}) + "\n")
            raw = "" if s["score"] is None else str(s["score"])
            fv.write(json.dumps({"judge": "gpt-4", "format": "ten", "prompt_id": s["question_id"],
                                 "candidate_id": s["model"], "raw": raw}) + "\n")
    spec = tmp_path / "ten.toml"
    spec.write_text('name = "ten"\nrange = [1, 10]\n')
    import_pool(db, pool, "arena")
    import_verdicts(db, vfile, "arena", format_specs=[spec])
    cell = audit_cells(db, "arena").to_dicts()[0]
    valid = np.array([s["score"] for s in scores if s["score"] is not None])
    _, counts = np.unique(valid, return_counts=True)
    p = counts / counts.sum()
    assert cell["n_candidates"] == len(valid) and cell["parse_rate"] == pytest.approx(len(valid) / len(scores))
    assert cell["distinct"] == 10 and cell["tie_prob"] == pytest.approx(np.sum(p ** 2))
    by_q = defaultdict(list)
    for s in scores:
        if s["score"] is not None:
            by_q[s["question_id"]].append(s["score"])
    tied = [sum(v == max(vs) for v in vs) >= 2 for vs in by_q.values() if len(vs) >= 2]
    assert cell["top_tied"] == pytest.approx(np.mean(tied))
