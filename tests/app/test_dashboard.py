"""The dashboard through Streamlit's AppTest: every page on the demo, and a scoring run launched
from the Score page."""

import time

import duckdb
import pytest

from tests.app.conftest import run_app
from tests.conftest import query_rows

PAGES = ["overview", "pool", "score", "formats", "slot_bias", "variance", "curate", "report"]


@pytest.mark.parametrize("pool", ["mtbench-formats", "mtbench", "llmbar", "ko-arena-hard"])
def test_every_page_renders(demo_db, monkeypatch, pool):
    at = run_app(demo_db, monkeypatch)
    assert not at.exception
    at.sidebar.selectbox[0].select(pool).run()
    for page in PAGES:
        at.switch_page(f"views/{page}/page.py").run()
        assert not at.exception, (page, [e.value for e in at.exception])
        assert at.header[0].value
    at.switch_page("views/formats/page.py").run()
    assert any("Diagnostics" in s.value for s in at.subheader) and len(at.dataframe) >= 1


def test_every_page_renders_on_a_users_pool(tmp_path, monkeypatch, write_jsonl):
    """A pool of the user's own, first without any verdict (the pages that need verdicts say so),
    then with pointwise verdicts only (none for the slot-bias page): no page raises."""
    from ingest.store import import_pool
    from ingest.scoring import import_verdicts
    from tests.fixtures import synthetic_pool, synthetic_verdicts
    db = tmp_path / "mine.duckdb"
    rows = synthetic_pool(12, seed=3)
    import_pool(db, write_jsonl("pool.jsonl", rows), "mine")
    at = run_app(db, monkeypatch)
    assert at.sidebar.selectbox[0].options == ["mine"]          # a user's database is not seeded
    for stage in ("no verdicts", "pointwise verdicts"):
        for page in PAGES:
            at.switch_page(f"views/{page}/page.py").run()
            assert not at.exception, (stage, page, [e.value for e in at.exception])
            if stage == "no verdicts" and page in ("overview", "formats", "slot_bias", "variance", "curate"):
                assert at.info, page          # e.g. "No verdicts in this pool yet: score it ..."
        if stage == "no verdicts":
            pointwise = [v for v in synthetic_verdicts(rows, seed=3) if v["format"] != "tournament"]
            import_verdicts(db, write_jsonl("verdicts.jsonl", pointwise), "mine")
    at.switch_page("views/formats/page.py").run()
    assert len(at.dataframe) == 1 and len(at.dataframe[0].value) == 6   # 2 judges x 3 formats


def test_fresh_database_seeds_itself(tmp_path, monkeypatch):
    at = run_app(tmp_path / "fresh.duckdb", monkeypatch)
    assert not at.exception
    assert set(at.sidebar.selectbox[0].options) == {"mtbench-formats", "mtbench", "llmbar", "arena-bench",
                                                    "ko-arena-hard"}
    assert at.sidebar.selectbox[0].value == "mtbench-formats" and at.header[0].value == "Overview"


def test_score_page_launches_a_run(tmp_path, monkeypatch, write_jsonl):
    from ingest.store import import_pool
    db = tmp_path / "score.duckdb"
    rows = [{"prompt_id": f"q{i // 3}", "prompt": f"Q{i // 3}", "candidate_id": f"c{i % 3}", "response": f"r{i}",
             "reference": float(i % 3)} for i in range(12)]
    import_pool(db, write_jsonl("pool.jsonl", rows), "mine")
    at = run_app(db, monkeypatch)
    at.switch_page("views/score/page.py").run()
    at.radio[0].set_value("fake")
    at.text_input[0].set_value("dash")
    at.button(key="score-launch").click().run()
    assert not at.exception and "Started run 1" in at.success[0].value
    at.button(key="score-launch").click().run()   # a double click: refused while the first run is alive
    errors = " ".join(e.value for e in at.error)
    assert "Run 1 is already scoring pool 'mine' with judge 'dash'" in errors and "refused" in errors
    assert not any("Started run 2" in s.value for s in at.success)
    deadline = time.time() + 90
    n = 0
    while time.time() < deadline:
        time.sleep(1)
        try:
            n = query_rows(db, "SELECT count(*) FROM verdicts")[0][0]
        except duckdb.Error:          # the run holds the file between batches
            continue
        if n == 36:
            break
    assert n == 36   # 12 candidates x binary, likert5, numeric100
    # a reload (a new browser session) reads the same run from the database
    again = run_app(db, monkeypatch)
    again.switch_page("views/score/page.py").run()
    deadline = time.time() + 30
    while "Run 1 · finished" not in " ".join(m.value for m in again.markdown) and time.time() < deadline:
        time.sleep(0.5)
        again.run()
    assert "Run 1 · finished" in " ".join(m.value for m in again.markdown)
    assert query_rows(db, "SELECT count(*), count(DISTINCT (format_id, a_idx)) FROM verdicts") == [(36, 36)]
