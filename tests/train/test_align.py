"""`judgeaudit align` (train/align.py, docs/metrics.md#aligning-a-judge-align) on a planted fake judge:
a judge that learns from demonstrations carrying a marker (fake:?taught=) is aligned on the planted
set and gains on the held-out prompts with an interval above 0; a judge that learns nothing keeps
its prompt and its interval runs through 0; no held-out prompt's label is ever shown or scored in the
search (every call the judge receives is recorded); the winner is a judge of its own that Drift and
the leaderboard read."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

import ingest.scoring.judges.fake as F
from ingest import UserError
from ingest.scoring.formats import shown_demonstrations
from tests.fixtures import write_jsonl

N_PROMPTS, N_HELD = 60, 20
GOLD_AT = {(3, "c0"), (5, "c1"), (12, "c0"), (30, "c1"), (33, "c0"), (41, "c1"), (47, "c0"), (52, "c1")}


def planted(db, folder, noise: float = 0.45, taught: float = 0.95, seed: int = 7) -> dict:
    """Pool 'al': 60 prompts of two candidates with references uniform in [0, 1]; prompts 40-59 marked
    held out; every candidate labelled by a human: accept when its reference is >= 0.5. Eight
    responses carry the marker GOLD. The judge `teach` (binary, noise `noise`, taught `taught`) scored
    the pool. Returns {prompt_idx: prompt text} of the held-out prompts."""
    from ingest.scoring import ScoreRequest, score
    from ingest.store import import_labels, import_pool
    rng = np.random.default_rng(seed)
    rows, labels = [], []
    for p in range(N_PROMPTS):
        for c in ("c0", "c1"):
            ref = float(rng.random())
            text = f"answer {c} to question {p}" + (f" {F.GOLD}" if (p, c) in GOLD_AT else "")
            rows.append({"prompt_id": f"p{p:02d}", "prompt": f"Question number {p:02d}?", "candidate_id": c,
                         "response": text, "reference": ref, "split": "heldout" if p >= 40 else "pool"})
            labels.append({"prompt_id": f"p{p:02d}", "candidate_id": c, "label": "accept" if ref >= 0.5 else "reject"})
    # the references span [0, 1]: the fake's quality (min-max normalised) is the reference itself, near enough
    import_pool(db, write_jsonl(folder / "pool.jsonl", rows), "al")
    import_labels(db, write_jsonl(folder / "labels.jsonl", labels), "al")
    score(ScoreRequest(pool="al", judge=f"fake:teach?noise={noise}&taught={taught}", formats=["binary"], db=db,
                       progress=False))
    return {p: f"Question number {p:02d}?" for p in range(40, N_PROMPTS)}


@pytest.fixture
def calls(monkeypatch) -> list[dict]:
    """Every call the fake judge receives: its prompt text and the demonstrations it is shown."""
    seen: list[dict] = []
    original = F.FakeJudge.complete

    async def recording(self, messages, settings, hints):
        seen.append({"prompt": hints.texts["prompt"], "shown": shown_demonstrations(messages[-1]["content"])})
        return await original(self, messages, settings, hints)
    monkeypatch.setattr(F.FakeJudge, "complete", recording)
    return seen


def test_align_finds_the_planted_demonstrations_and_gains_on_held_out_prompts(db, tmp_path, calls):
    from train import align
    heldout = planted(db, tmp_path)
    calls.clear()
    doc = align(db, "al", "teach", "binary", demonstrations=2, budget=2000, held_out=0.0)
    # the planted best set: two demonstrations, each a GOLD response
    gold = {(f"p{p:02d}", c) for p, c in GOLD_AT}
    assert len(doc["demonstrations"]) == 2
    assert all((d["prompt_id"], d["candidate_id"]) in gold for d in doc["demonstrations"]), doc["demonstrations"]
    assert all(d["label"] in ("ACCEPT", "REJECT") for d in doc["demonstrations"])
    # the gain on the 20 held-out prompts (40 items) and its interval, above 0
    assert doc["n_heldout_prompts"] == N_HELD and doc["n_heldout_items"] == 2 * N_HELD
    g = doc["gain"]
    assert g["lo"] > 0 and g["value"] == pytest.approx(doc["after"]["value"] - doc["before"]["value"], abs=1e-12)
    assert doc["before"]["lo"] <= doc["before"]["value"] <= doc["before"]["hi"]
    assert doc["stored"] and doc["judge"].startswith("teach-aligned-")
    # no held-out label shown or scored in the search: the held-out prompts are asked twice per item
    # (before and after), and no demonstration any call showed is one of theirs
    asked = [c["prompt"] for c in calls]
    for text in heldout.values():
        assert asked.count(text) == 4
        assert not any(text in d for c in calls for d in c["shown"])
    assert doc["search_calls"] <= 2000 and doc["search_calls"] + 2 * doc["n_heldout_items"] == len(calls)
    # the before agreement is the stored verdicts' agreement on the held-out items, by hand
    from audit import verdict_rows
    v = verdict_rows(db, "al").filter((pl.col("judge") == "teach") & pl.col("prompt_id").is_in(
        [f"p{p:02d}" for p in heldout]))
    labels = {(r["prompt_id"], r["candidate_id"]): r["label"]
              for r in map(json.loads, (tmp_path / "labels.jsonl").read_text().splitlines())}
    hits = [(r["label"] == "ACCEPT") == (labels[(r["prompt_id"], r["candidate_a"])] == "accept") for r in v.to_dicts()]
    assert len(hits) == 2 * N_HELD and doc["before"]["value"] == pytest.approx(np.mean(hits), abs=1e-12)
    # the format's own tau_a, before and after, by hand: each held-out prompt has two candidates, so
    # its tau_a is sign(s0 - s1) x sign(r0 - r1) (0 when the judge ties them); the mean over the 20
    refs = {(r["prompt_id"], r["candidate_id"]): r["reference"]
            for r in map(json.loads, (tmp_path / "pool.jsonl").read_text().splitlines())}
    for side, name in (("before", "teach"), ("after", doc["judge"])):
        s = {(r["prompt_id"], r["candidate_a"]): float(r["label"] == "ACCEPT")
             for r in verdict_rows(db, "al").filter(pl.col("judge") == name).to_dicts()
             if r["prompt_id"] in {f"p{p:02d}" for p in heldout}}
        taus = [np.sign(s[(f"p{p:02d}", "c0")] - s[(f"p{p:02d}", "c1")])
                * np.sign(refs[(f"p{p:02d}", "c0")] - refs[(f"p{p:02d}", "c1")]) for p in heldout]
        assert doc["reference"]["tau_a"][side] == pytest.approx(np.mean(taus), abs=1e-12), side
        assert doc["reference"]["n_prompts"][side] == N_HELD and 0 <= doc["reference"]["top1"][side] <= 1
    assert doc["reference"]["tau_a"]["after"] > doc["reference"]["tau_a"]["before"]
    # the winner is a judge: its identity binds the demonstrations, the leaderboard and Drift read it
    from audit import drift, judges
    board = judges(db, "al")
    assert {"teach", doc["judge"]} <= set(board["judge"])
    moved = drift(db, "al", doc["judge"], "teach")
    assert moved["n_scored"].to_list() == [2 * N_HELD] and moved["n_changed"][0] > 0
    from ingest.store import reading
    with reading(db) as unit:
        jid = {r[1]: r[0] for r in unit.judges().values()}[doc["judge"]]
        params = unit.stored_identity(jid)["params"]
    assert params["demonstrations"] == doc["demonstrations"] and params["instructions"] == doc["instructions"]


def test_a_judge_that_cannot_improve_keeps_its_prompt_and_an_interval_through_zero(db, tmp_path, calls):
    from train import align
    planted(db, tmp_path, taught=0.0)
    doc = align(db, "al", "teach", "binary", demonstrations=2, budget=600, held_out=0.0)
    assert doc["gain"]["lo"] <= 0 <= doc["gain"]["hi"]
    assert not doc["stored"] and doc["judge"] == "teach" and doc["demonstrations"] == []


def test_the_share_split_leaves_its_prompts_out_of_the_search(db, tmp_path, calls):
    """With --held-out 0.25 a quarter of the 40 training prompts joins the evaluation: 30 prompts
    to evaluate; none of their texts is asked in the search or shown."""
    from train import align
    planted(db, tmp_path)
    calls.clear()
    doc = align(db, "al", "teach", "binary", demonstrations=1, budget=300, held_out=0.25)
    assert doc["n_heldout_prompts"] == N_HELD + 10 and doc["n_train_prompts"] == 30
    search = calls[:doc["search_calls"]]
    evaluated = {c["prompt"] for c in calls[doc["search_calls"]:]}
    assert len(evaluated) == 30 and not evaluated & {c["prompt"] for c in search}
    assert not any(t in d for c in calls for d in c["shown"] for t in evaluated)


def test_align_refuses_what_it_cannot_do(db, tmp_path):
    from train import align
    planted(db, tmp_path)
    with pytest.raises(UserError, match="--reflection openai:MODEL@BASE_URL"):
        align(db, "al", "teach", "binary", optimizer="gepa")
    with pytest.raises(UserError, match="expected openai:MODEL@BASE_URL"):
        align(db, "al", "teach", "binary", optimizer="gepa", reflection="gpt-4o")
    with pytest.raises(UserError, match="REFLECT_KEY is not set"):
        align(db, "al", "teach", "binary", optimizer="gepa", reflection="openai:m@http://127.0.0.1:9/v1",
              reflection_api_key_env="REFLECT_KEY")
    with pytest.raises(UserError, match=r"no room for one iteration on 2 items; give a larger --budget \(at least 14"):
        align(db, "al", "teach", "binary", optimizer="gepa", reflection="openai:m@http://127.0.0.1:9/v1", budget=6)
    with pytest.raises(UserError, match="the reflection model of --optimizer gepa"):
        align(db, "al", "teach", "binary", reflection="openai:m@http://127.0.0.1:9/v1")
    with pytest.raises(UserError, match="--constraint: the server's mechanism"):
        align(db, "al", "teach", "binary", constraint="grammar")
    with pytest.raises(UserError, match="no human labels of pairs"):
        align(db, "al", "teach", "tournament")
    with pytest.raises(UserError, match="no such judge"):
        align(db, "al", "nobody", "binary")


def test_align_resumes_and_prints_its_json(db, tmp_path, capsys, calls):
    """The same command again asks nothing twice (the answers cached by the request) and prints the
    same document; `align --json` is the contract's document and the run is recorded as kind align."""
    from ingest.runs import list_runs
    from tests.audit.conftest import main_json
    planted(db, tmp_path)
    calls.clear()
    first = main_json(capsys, "align", "--pool", "al", "--judge", "teach", "--format", "binary", "--budget", "300",
                      "--held-out", "0", "--demonstrations", "1", "--json", "--db", str(db))
    made = len(calls)
    second = main_json(capsys, "align", "--pool", "al", "--judge", "teach", "--format", "binary", "--budget", "300",
                       "--held-out", "0", "--demonstrations", "1", "--json", "--db", str(db))
    assert len(calls) == made and second["calls_made"] == 0 and first["calls_made"] == made
    for key in ("before", "after", "gain", "judge", "demonstrations", "instructions"):
        assert first[key] == second[key], key
    assert set(first["before"]) == {"value", "lo", "hi"} and len(first["demonstrations"]) == 1
    assert set(first["demonstrations"][0]) == {"prompt_id", "candidate_id", "label"}
    runs = list_runs(db, kind="align")
    assert [r["status"] for r in runs] == ["finished", "finished"] and runs[0]["config"]["command"] == "align"


def test_clustered_gain_by_hand():
    """Prompts 0 0 1; before 1 0 1, after 1 1 1: before 2/3, after 1, gain 1/3. A resample of two
    prompts is (p0, p0) with gain sums 2/4 = .5, (p0, p1) 1/3 or (p1, p1) 0, each pair of draws with
    probability 1/4, 1/2, 1/4: the 2.5% and 97.5% points are 0 and .5."""
    from train._align_search import clustered_gain
    out = clustered_gain(np.array([0, 0, 1]), np.array([1, 0, 1.]), np.array([1, 1, 1.]), np.random.default_rng(0))
    assert out["before"]["value"] == pytest.approx(2 / 3) and out["after"]["value"] == 1
    assert out["gain"] == {"value": pytest.approx(1 / 3), "lo": 0.0, "hi": 0.5}


def test_search_keeps_to_its_budget_and_takes_the_best_singles():
    """A scorer whose agreement is the share of demonstrations in {3, 6}: with budget 10 calls and a
    minibatch of 1 item, the wording (1 call), then the 8 singles 0..7 (room for one more call: the
    set), then the set of the two best singles: {3, 6}; 10 calls in all. Had 9 been the good one, it
    would not have been tried."""
    from train._align_search import minibatch_prompts, search
    good = {3, 6}
    got = search(lambda i, demos, items: np.full(len(items), sum(d in good for d in demos) / max(len(demos), 1)),
                 1, ["item"], list(range(12)), 2, 10)
    assert sorted(got["demonstrations"]) == [3, 6] and got["calls"] == 10 and got["agreement"] == 1.0
    assert [t["phase"] for t in got["trace"]] == ["instructions"] + ["demonstration"] * 8 + ["set"]
    # the minibatch: whole prompts while within min(24, budget / (2k + 2)) items, the first always
    assert minibatch_prompts([5, 6, 7, 8], {5: 11, 6: 11, 7: 11, 8: 11}, 100, 1) == {5, 6}
    assert minibatch_prompts([5, 6, 7, 8], {5: 30, 6: 1}, 100, 1) == {5}


def test_gepa_is_refused_by_name_when_the_extra_is_not_installed(db, tmp_path, monkeypatch):
    import sys
    from train import align
    planted(db, tmp_path)
    monkeypatch.setitem(sys.modules, "gepa", None)          # `import gepa` then raises ImportError
    with pytest.raises(UserError, match=r"gepa package is not installed.*judgeaudit\[gepa\]"):
        align(db, "al", "teach", "binary", optimizer="gepa", reflection="openai:m@http://127.0.0.1:9/v1")


def test_gepa_limits_keep_its_calls_within_its_share():
    """n = 10 items, 20 calls: r = 3, v = min(10, (20 - 6 - 1) // 2) = 6, stop at 20 - 6 - 6 = 8: the
    seed costs 6 (< 8: one iteration), the iteration at most 3 + 3 + 6 = 12: 18 <= 20. Too few calls: v < 1."""
    from train._align_gepa import limits
    assert limits(10, 20) == (3, 6, 8)
    r, v, most = limits(24, 100)
    assert (r, v, most) == (3, 24, 70) and most - 1 + 2 * r + v <= 100
    assert limits(2, 6)[1] < 1 and limits(1, 5) == (1, 1, 2)


def test_a_constrained_openai_cell_is_aligned_with_the_mechanism_it_was_scored_with(db, tmp_path):
    """A cell scored under `--constraint grammar` on a server that honours only grammar (and refuses any
    other constraint field with HTTP 400): align, not told the mechanism, asks it by grammar too, so
    every call is constrained and the run ends; told another mechanism, the check call is refused by name."""
    from ingest.scoring import ScoreRequest, score
    from ingest.store import import_labels, import_pool
    from tests.openai_server import OpenAIServer
    from train import align
    rows, labels = [], []
    for p in range(10):
        for c, ok in (("c0", True), ("c1", False)):
            rows.append({"prompt_id": f"p{p}", "prompt": f"Question {p}?", "candidate_id": c,
                         "response": f"answer {c}", "reference": float(ok)})
            labels.append({"prompt_id": f"p{p}", "candidate_id": c, "label": "accept" if ok else "reject"})
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", rows), "g")
    import_labels(db, write_jsonl(tmp_path / "labels.jsonl", labels), "g")
    with OpenAIServer(constraints=("grammar",)) as server:
        score(ScoreRequest(pool="g", judge=f"openai:test-judge@{server.url}", judge_name="served", formats=["binary"],
                           decoding="constrained", constraint="grammar", db=db, progress=False))
        scored = server.constrained_requests
        doc = align(db, "g", "served", "binary", decoding="constrained", demonstrations=1, budget=20, held_out=0.3)
        # every call of the search and the evaluation (and the check call) went out under the grammar
        assert server.constrained_requests - scored == doc["calls_made"] + 1
        with pytest.raises(UserError, match="refused the 'guided_choice' constraint"):
            align(db, "g", "served", "binary", decoding="constrained", constraint="guided_choice", budget=20)
