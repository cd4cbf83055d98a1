"""The bundled demo seeds an empty database, and the dashboard renders it (Streamlit AppTest)."""

import pytest
from streamlit.testing.v1 import AppTest

from audit import audit_cells, bias, pools
from ingest.demo import DEMO_POOLS, seed_demo
from tests.conftest import REPO


def test_demo_pools_and_real_figures(demo_db):
    got = {r["name"]: r for r in pools(demo_db).to_dicts()}
    assert got["mtbench"]["n_candidates"] == 480 and got["mtbench"]["n_prompts"] == 80
    assert got["mtbench-formats"]["n_candidates"] == 24 and got["mtbench-formats"]["n_prompts"] == 6   # 6 x 4 systems
    assert got["llmbar"]["n_candidates"] == 702
    assert got["arena-bench"]["n_candidates"] == 3792
    assert seed_demo(demo_db) == []                      # already seeded: nothing to do
    ko = bias(demo_db, "ko-arena-hard", n_boot=200).to_dicts()[0]
    # the source README: +0.20 points for slot A, 74.5% same preference in both orders (all 500
    # questions; the demo keeps 100)
    assert ko["b"] == pytest.approx(0.20, abs=0.03) and ko["consistency"] == pytest.approx(0.745, abs=0.03)
    arena = audit_cells(demo_db, "arena-bench").to_dicts()[0]
    assert arena["distinct"] == 10 and arena["top_tied"] > 0.5


def test_seeding_leaves_a_users_own_database_alone(db, write_jsonl):
    from ingest.store import import_pool
    import_pool(db, write_jsonl("p.jsonl", [{"prompt_id": "q", "prompt": "x", "candidate_id": "a",
                                             "response": "r"}]), "mine")
    assert seed_demo(db) == []
    assert pools(db)["name"].to_list() == ["mine"]


def test_dashboard_renders_the_demo(demo_db, monkeypatch):
    monkeypatch.setenv("JUDGEAUDIT_DB", str(demo_db))
    at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=120).run()
    assert not at.exception
    assert at.sidebar.selectbox[0].options == sorted(p[0] for p in DEMO_POOLS)
    # the landing page: the Overview of the five-format demo
    assert at.header[0].value == "Overview" and at.sidebar.selectbox[0].value == "mtbench-formats"
    at.sidebar.selectbox[0].select("llmbar").run()
    at.switch_page("views/formats/page.py").run()
    assert not at.exception and len(at.dataframe) == 1   # the Formats page's diagnostics table
    at.switch_page("views/slot_bias/page.py").run()
    assert not at.exception and len(at.dataframe) >= 1   # the slot-bias table


def test_the_five_format_demo_opens_calibration_with_kappas_and_variance(demo_db, monkeypatch):
    """The MT-Bench votes on the five-format demo's pairs are stored at seeding: Calibration shows a
    kappa for each comparative cell of the bundled model's judges (the llama.cpp demo judge in both
    decoding modes, the in-process one and the two repeat judges); the MT-Bench votes are stored
    on the MT-Bench pool too (Rankings' style section)."""
    import json

    from audit import stored_labels
    from ingest.demo import HERE
    from tests.conftest import query_rows
    pairs = {(r["prompt_id"], r["candidate_id"]) for r in map(json.loads, open(HERE / "mtbench-formats-pool.jsonl"))}
    votes = [r for r in map(json.loads, open(HERE / "mtbench-human-labels.jsonl"))
             if (r["prompt_id"], r["a_id"]) in pairs and (r["prompt_id"], r["b_id"]) in pairs]
    # 6 prompts x C(4, 2) = 36 pairs of the demo's 4 systems; the experts voted 68 times on 32 of them
    assert len(votes) == 68 and len({(r["prompt_id"], frozenset((r["a_id"], r["b_id"]))) for r in votes}) == 32
    assert stored_labels(demo_db, "mtbench-formats").height == 68
    # every MT-Bench vote, an annotator's identical repeat once: 1,689 rows, 1,688 distinct
    all_votes = len({(r["prompt_id"], frozenset((r["a_id"], r["b_id"])), r["annotator"])
                     for r in map(json.loads, open(HERE / "mtbench-human-labels.jsonl"))})
    assert sorted(query_rows(demo_db, "SELECT p.name, count(*) FROM pair_labels JOIN pools p USING (pool_id) GROUP BY 1")) \
        == [("mtbench", all_votes), ("mtbench-formats", 68)]   # the other demo pools keep their Import button
    monkeypatch.setenv("JUDGEAUDIT_DB", str(demo_db))
    at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=180).run()
    at.switch_page("views/calibration/page.py").run()
    assert not at.exception and not at.info
    table = at.dataframe[0].value
    assert sorted(zip(table["judge"], table["format"], table["decoding"])) == [
        ("smollm2-demo", "anchored", "constrained"), ("smollm2-demo", "anchored", "greedy"),
        ("smollm2-demo", "tournament", "constrained"), ("smollm2-demo", "tournament", "greedy"),
        ("smollm2-demo-t0.7", "tournament", "sampled"),
        ("smollm2-demo-t1", "anchored", "constrained"), ("smollm2-demo-t1", "tournament", "constrained"),
        ("smollm2-local", "anchored", "constrained"), ("smollm2-local", "tournament", "constrained"),
        ("smollm2-panel", "anchored", "constrained"), ("smollm2-panel", "tournament", "constrained")]  # the jury
    assert table["kappa"].notna().all() and (table["n"] > 0).all()
    at.switch_page("views/variance/page.py").run()     # four judges of one model now: a decomposition, no notice
    assert not at.exception and not at.info and len(at.dataframe) == 2   # the split and leave-one-judge-out
