"""The bundled demo seeds an empty database, and the dashboard renders it (Streamlit AppTest)."""

import pytest
from streamlit.testing.v1 import AppTest

from audit import audit_cells, bias, pools
from ingest.demo import DEMO_POOLS, seed_demo
from tests.conftest import REPO


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("demo") / "demo.duckdb"
    assert seed_demo(path) == [p[0] for p in DEMO_POOLS]
    return path


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
    at.switch_page("views/formats.py").run()
    assert not at.exception and len(at.dataframe) == 1   # the Formats page's diagnostics table
    at.switch_page("views/slot_bias.py").run()
    assert not at.exception and len(at.dataframe) >= 1   # the slot-bias table
