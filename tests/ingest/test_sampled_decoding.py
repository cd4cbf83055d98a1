"""`sampled` decoding has its own name (issue 26; DESIGN.md 'One word per thing'): the free answer
at temperature 0 is greedy, above 0 it is sampled, in the store and every output. Scoring at T > 0
stores sampled; migration 013 rewrites the greedy calls that earlier versions stored for such runs."""

import json

import duckdb
import pytest

from audit import audit_cells, consistency
from ingest._errors import UserError
from ingest.scoring import ScoreRequest, score
from ingest.store import ensure_current, import_pool

ROWS = [{"prompt_id": f"q{i // 3}", "prompt": f"Question {i // 3}", "candidate_id": f"c{i % 3}",
         "response": "answer " * (1 + i % 3), "reference": float(i % 3)} for i in range(12)]


def _score(db, name, **kw):
    return score(ScoreRequest(pool="p", judge=f"fake:{name}?noise=0.5", formats=["likert5"], db=db, progress=False,
                              flush_interval_s=0.05, **kw))


def _modes(db) -> dict:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return dict(con.execute("SELECT j.name, list(DISTINCT v.decoding) FROM verdicts v "
                                "JOIN judges j USING (judge_id) GROUP BY 1").fetchall())
    finally:
        con.close()


@pytest.fixture
def pool(db, write_jsonl):
    import_pool(db, write_jsonl("p.jsonl", ROWS), "p")
    return db


def test_a_run_above_temperature_0_stores_sampled_and_at_0_greedy(pool):
    hot = _score(pool, "hot", samples=2, temperature=0.7)
    cold = _score(pool, "cold")
    assert (hot["decoding"], cold["decoding"]) == ("sampled", "greedy")
    assert _modes(pool) == {"hot": ["sampled"], "cold": ["greedy"]}
    cells = audit_cells(pool, "p")
    assert set(cells.filter(cells["judge"] == "hot")["decoding"]) == {"sampled"}
    assert consistency(pool, "p").filter(consistency(pool, "p")["judge"] == "hot")["decoding"].to_list() == ["sampled"]


def test_sampled_at_temperature_0_is_refused_and_asked_for_by_name_is_the_same(pool):
    with pytest.raises(UserError, match="--decoding sampled: the free answer at a temperature above 0"):
        _score(pool, "x", decoding="sampled")
    assert _score(pool, "y", decoding="sampled", temperature=0.5)["decoding"] == "sampled"
    # constrained stays constrained at any temperature
    assert _score(pool, "z", decoding="constrained", temperature=0.5)["decoding"] == "constrained"


def test_migration_013_rewrites_the_greedy_calls_of_runs_above_temperature_0(pool):
    _score(pool, "hot", samples=2, temperature=0.7)
    _score(pool, "cold")
    # the database as version 12 left it: the T = 0.7 calls stored as greedy, the mode greedy in the settings
    con = duckdb.connect(str(pool))
    con.execute("UPDATE verdicts SET decoding = 'greedy'")
    greedy = '{"mode": "greedy"}'
    con.execute(f"UPDATE cell_runs SET decoding_settings = json_merge_patch(decoding_settings, '{greedy}')")
    con.execute("DELETE FROM _migrations WHERE id = 13")
    n_before = con.execute("SELECT count(*) FROM verdicts").fetchone()[0]
    con.close()
    assert _modes(pool) == {"hot": ["greedy"], "cold": ["greedy"]}
    ensure_current(pool)
    assert _modes(pool) == {"hot": ["sampled"], "cold": ["greedy"]}
    con = duckdb.connect(str(pool), read_only=True)
    settings = dict(con.execute("SELECT j.name, c.decoding_settings FROM cell_runs c JOIN judges j USING (judge_id)")
                    .fetchall())
    assert con.execute("SELECT count(*) FROM verdicts").fetchone()[0] == n_before   # no row lost or doubled
    assert con.execute("SELECT max(id) FROM _migrations").fetchone()[0] >= 13
    con.close()
    assert json.loads(settings["hot"])["mode"] == "sampled" and json.loads(settings["hot"])["temperature"] == 0.7
    assert json.loads(settings["cold"])["mode"] == "greedy"
    # the rewritten calls are the ones a resumed run finds: nothing is asked again
    assert _score(pool, "hot", samples=2, temperature=0.7)["already_done"] == 24   # 12 candidates x 2 samples


def test_migration_013_renames_the_demos_t07_judge_seeded_as_greedy(db):
    # a demo database seeded before the t0.7 file said sampled: its calls were stored as greedy
    from ingest.demo import HERE, format_specs
    from ingest.scoring import import_verdicts
    import_pool(db, HERE / "mtbench-formats-pool.jsonl", "mtbench-formats")
    import_verdicts(db, HERE / "mtbench-formats-t07-verdicts.jsonl", "mtbench-formats", format_specs=format_specs())
    con = duckdb.connect(str(db))
    con.execute("UPDATE verdicts SET decoding = 'greedy'")
    con.execute("DELETE FROM _migrations WHERE id = 13")
    con.close()
    assert _modes(db) == {"smollm2-demo-t0.7": ["greedy"]}
    ensure_current(db)
    assert _modes(db) == {"smollm2-demo-t0.7": ["sampled"]}
