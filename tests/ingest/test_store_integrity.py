"""Issue 8: every judge call is stored once, in its own pool, under the right judge.

Each scenario here lost or corrupted data silently before the store held the rules itself.
"""

import json
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import polars as pl
import pytest

from audit import audit_cells
from ingest import UserError
from ingest.store import import_pool
from ingest.store import _database
from ingest.store import ensure_current, writing
from ingest.scoring import replay_journal, ROW_SCHEMA, score, ScoreRequest
from ingest.scoring._journal import journal_path as _journal_path
from ingest.runs import list_runs
from tests.conftest import query_rows
from tests.openai_server import OpenAIServer

EXE = str(Path(sys.executable).with_name("judgeaudit"))


def _rows(responses, prompts=5):
    return [{"prompt_id": f"q{i % prompts}", "prompt": f"Question {i % prompts}", "candidate_id": f"c{i}",
             "response": text, "reference": float(i % 3)} for i, text in enumerate(responses)]


def _request(server, pool, **kw):
    base = dict(pool=pool, judge=f"openai:m1@{server.url}", formats=["binary", "likert5"], concurrency=4,
                timeout=1.0, max_retries=0, retry_base_s=0.01, retry_cap_s=0.05, flush_interval_s=0.05,
                progress=False)
    return ScoreRequest(**{**base, **kw})


def _cells(db, pool):
    return {r["format"]: (r["n_verdicts"], r["parse_rate"]) for r in audit_cells(db, pool).to_dicts()}


def test_scoring_one_pool_leaves_another_pools_failures_alone(db, write_jsonl):
    # Pool a: every 4th response makes the server fail (HTTP 500, no retries) -> 5 of 20 per format.
    a = ["[fault=500]" if i % 4 == 0 else "fine" for i in range(20)]
    import_pool(db, write_jsonl("a.jsonl", _rows(a)), "a")
    import_pool(db, write_jsonl("b.jsonl", _rows(["fine"] * 20)), "b")   # same shape, healthy
    with OpenAIServer() as server:
        score(_request(server, "a"))
        before = _cells(db, "a")
        # 20 calls per format, 15 parsed: parse rate 0.75
        assert before == {"binary": (20, 0.75), "likert5": (20, 0.75)}
        score(_request(server, "b"))
    assert _cells(db, "a") == before
    assert _cells(db, "b") == {"binary": (20, 1.0), "likert5": (20, 1.0)}
    assert query_rows(db, "SELECT count(*) FROM verdicts WHERE status = 'failed'") == [(10,)]


def test_a_judge_name_stands_for_one_judge(db, write_jsonl):
    import_pool(db, write_jsonl("p.jsonl", _rows(["fine"] * 10)), "p")
    with OpenAIServer() as server:
        score(_request(server, "p", judge_name="J"))
        n = server.requests
        with pytest.raises(UserError) as err:
            score(_request(server, "p", judge=f"openai:another-model@{server.url}", judge_name="J"))
        assert server.requests == n            # refused before any call
        assert "model" in str(err.value) and "another-model" in str(err.value) and "--judge-name" in str(err.value)
        with OpenAIServer() as other:           # same model, another endpoint
            with pytest.raises(UserError, match="endpoint"):
                score(_request(other, "p", judge_name="J"))
            assert other.requests == 0
        # scored anew under its own name, it is its own judge with its own cells
        fresh = score(_request(server, "p", judge=f"openai:another-model@{server.url}", judge_name="J2"))
        assert fresh["made"] == 20
    fake = dict(pool="p", formats=["likert5"], progress=False, flush_interval_s=0.05)
    score(ScoreRequest(judge="fake:sim?noise=0.05", **fake))
    with pytest.raises(UserError, match="params"):
        score(ScoreRequest(judge="fake:sim?noise=0.5", **fake))
    assert sorted(audit_cells(db, "p")["judge"].unique().to_list()) == ["J", "J2", "sim"]


def test_credentials_and_query_never_stored_with_the_endpoint(db, write_jsonl):
    import_pool(db, write_jsonl("p.jsonl", _rows(["fine"] * 2)), "p")
    with OpenAIServer() as server:
        url = server.url.replace("http://", "http://user:hunter2@") + "?api-key=hunter2"
        score(_request(server, "p", judge=f"openai:m1@{url}"))
        stored = query_rows(db, "SELECT endpoint, identity FROM judges")[0]
        assert stored[0] == server.url and "hunter2" not in stored[1]
        assert all("hunter2" not in json.dumps(r["config"]) for r in list_runs(db))


def test_two_identical_runs_at_once_store_each_call_once(db, write_jsonl):
    import_pool(db, write_jsonl("p.jsonl", _rows([f"answer {i}" for i in range(60)], prompts=12)), "p")
    with OpenAIServer(latency_s=0.02) as server:
        cmd = [EXE, "score", "--pool", "p", "--judge", f"openai:m1@{server.url}", "--formats", "binary,likert5",
               "--concurrency", "4", "--json"]
        procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
        outs = [p.communicate(timeout=120) for p in procs]
    codes = sorted(p.returncode for p in procs)
    refused = [err for p, (_, err) in zip(procs, outs) if p.returncode != 0]
    assert codes in ([0, 0], [0, 1])
    for err in refused:       # the second was refused, naming the first run's process
        assert "already working on this" in err and "process" in err
    assert query_rows(db, "SELECT count(*), count(DISTINCT (format_id, a_idx)) FROM verdicts") == [(120, 120)]


def _old_database(path: Path) -> None:
    """A database at schema version 2 holding duplicate rows for two calls."""
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE _migrations (id INTEGER NOT NULL, name VARCHAR NOT NULL, "
                "applied_at TIMESTAMP NOT NULL DEFAULT current_timestamp)")
    for number, name, sql in _database._migration_files()[:2]:
        con.execute(sql)
        con.execute("INSERT INTO _migrations (id, name) VALUES (?, ?)", [number, name])
    con.execute("INSERT INTO judges VALUES (1, 'j', 'openai', 'm', 'http://x/v1', '{}')")
    con.execute("INSERT INTO pools (pool_id, name) VALUES (1, 'p'), (2, 'gone')")
    rows = [  # run, a_idx, status, value, created_at
        (1, 0, "failed", None, "2026-01-01 10:00"), (2, 0, "ok", 3.0, "2026-01-01 11:00"),
        (3, 0, "ok", 4.0, "2026-01-01 12:00"), (4, 0, "failed", None, "2026-01-01 13:00"),
        (1, 1, "failed", None, "2026-01-01 10:00"), (2, 1, "no_label", None, "2026-01-01 11:00"),
        (3, 1, "failed", None, "2026-01-01 12:00"),
        (1, 2, "failed", None, "2026-01-01 10:00"), (2, 2, "failed", None, "2026-01-01 11:00"),
    ]
    for run, a, status, value, at in rows:
        con.execute("INSERT INTO verdicts (run_id, pool_id, judge_id, format_id, prompt_idx, a_idx, status, value, "
                    "created_at) VALUES (?, 1, 1, 1, 0, ?, ?, ?, ?)", [run, a, status, value, at])   # schema 2
    con.close()


def test_migration_keeps_one_row_per_call(db):
    _old_database(db)
    ensure_current(db)
    # call 0: the latest parsed answer (run 3, value 4); call 1: the answer (no_label) over failures;
    # call 2: only failures -> the latest attempt (run 2)
    assert query_rows(db, "SELECT a_idx, cell_run_id, status, value FROM verdicts ORDER BY a_idx") == [
        (0, 3, "ok", 4.0), (1, 2, "no_label", None), (2, 2, "failed", None)]
    con = duckdb.connect(str(db))
    try:
        # ids are never reused: the high-water mark covers the deleted pool 2 as well
        assert con.execute("SELECT last_id FROM id_marks WHERE name = 'pools'").fetchall() == [(2,)]
    finally:
        con.close()


def _verdict(a_idx: int, **extra) -> dict:
    return {"pool_id": 1, "judge_id": 1, "format_id": 1, "prompt_idx": 0, "a_idx": a_idx, "b_idx": None,
            "sample": 0, "status": "ok", "decoding": "greedy", **extra}


def test_the_writer_keeps_one_row_per_call_without_an_index(db):
    # Migration 011 dropped the unique index; insert_verdicts holds the rule: a row naming a stored
    # call (a_idx 0, 1 and 2 are stored) is left out, a batch naming one call twice is refused whole.
    _old_database(db)
    ensure_current(db)
    with _database.writer(db) as con:
        assert con.execute("SELECT count(*) FROM duckdb_indexes() WHERE table_name = 'verdicts'").fetchone() == (0,)
    cell_run_of = {(1, 1): 9}       # the judging (judge 1, format 1) stores its rows under cell run 9
    with pytest.raises(ValueError, match=re.escape("1 verdict row(s) repeat a call of the same batch")):
        with writing(db) as unit:
            unit.insert_verdicts(pl.DataFrame([_verdict(5), _verdict(5, status="failed")]), cell_run_of)
    assert query_rows(db, "SELECT count(*) FROM verdicts") == [(3,)]
    with pytest.raises(ValueError, match=re.escape("no cell run for the judging (judge_id, format_id) (1, 1)")):
        with writing(db) as unit:
            unit.insert_verdicts(pl.DataFrame([_verdict(5)]), {(2, 1): 9})
    assert query_rows(db, "SELECT count(*) FROM verdicts") == [(3,)]
    with writing(db) as unit:
        # all stored: nothing lands, so no cell run is needed
        assert unit.insert_verdicts(pl.DataFrame([_verdict(0), _verdict(2)]), {}).height == 0
        # another sample, another decoding or another slot B is another call: those three land,
        # the stored call beside them does not
        new = [_verdict(0, sample=1), _verdict(0, decoding="constrained"), _verdict(0, b_idx=1), _verdict(1)]
        assert unit.insert_verdicts(pl.DataFrame(new), cell_run_of)["a_idx"].to_list() == [0, 0, 0]
    assert query_rows(db, "SELECT a_idx, cell_run_id, count(*) FROM verdicts GROUP BY ALL ORDER BY ALL") == [
        (0, 3, 1), (0, 9, 3), (1, 2, 1), (2, 2, 1)]


def _journal_rows(pool_id: int, statuses: list[str]) -> list[dict]:
    base = {c: None for c in ROW_SCHEMA}
    out = []
    for i, status in enumerate(statuses):
        out.append({**base, "cell_run_id": 1, "pool_id": pool_id, "judge_id": 1, "format_id": 1, "prompt_idx": 0,
                    "a_idx": i // 2, "swapped": False, "sample": 0, "status": status, "attempts": 1,
                    "decoding": "greedy", "value": 1.0 if status == "ok" else None,
                    "raw": "ACCEPT" if status == "ok" else None, "label": "ACCEPT" if status == "ok" else None})
    return out


def _write_journal(db, pool, judge, rows):
    path = _journal_path(db, pool, judge)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_journal_replay_is_idempotent_and_never_lands_on_a_replaced_pool(db, write_jsonl):
    import_pool(db, write_jsonl("p.jsonl", _rows(["fine"] * 4)), "p")
    # call 0: a failure then an answer; call 1: an answer then a failure (the answer stays)
    rows = _journal_rows(1, ["failed", "ok", "ok", "failed"])
    for _ in range(2):
        _write_journal(db, "p", "j", rows)
        replay_journal(db, "p", "j", pool_id_now=1)
        assert query_rows(db, "SELECT a_idx, status, attempts FROM verdicts ORDER BY a_idx") == [
            (0, "ok", 1), (1, "ok", 1)]
    # a parsed answer is never replaced, not even by another answer
    _write_journal(db, "p", "j", [{**_journal_rows(1, ["ok"])[0], "value": 0.0, "raw": "REJECT"}])
    replay_journal(db, "p", "j", pool_id_now=1)
    assert query_rows(db, "SELECT raw FROM verdicts WHERE a_idx = 0") == [("ACCEPT",)]

    import_pool(db, write_jsonl("p2.jsonl", _rows(["other"] * 4)), "p", replace=True)
    assert query_rows(db, "SELECT pool_id FROM pools") == [(2,)]       # a new id, never 1 again
    _write_journal(db, "p", "j", rows)                                    # the old pool's leftovers
    assert replay_journal(db, "p", "j", pool_id_now=2) == 0
    assert query_rows(db, "SELECT count(*) FROM verdicts") == [(0,)]


def test_writer_failure_stops_the_calls_and_fails_the_run(db, write_jsonl, monkeypatch):
    import ingest.scoring._runner as runner
    import_pool(db, write_jsonl("p.jsonl", _rows([f"answer {i}" for i in range(200)], prompts=20)), "p")

    def locked(*_args, **_kw):
        raise duckdb.IOException('Could not set lock on file "x": Conflicting lock is held')

    original = runner.write_rows
    monkeypatch.setattr(runner, "write_rows", locked)
    with OpenAIServer(latency_s=0.01) as server:
        with pytest.raises(UserError, match="could not write verdicts"):
            score(_request(server, "p", formats=["binary"], concurrency=2, flush_interval_s=0.05))
        made = server.requests
    assert made < 60                      # 200 calls planned; the workers stopped soon after the failure
    (run,) = list_runs(db, kind="score")
    assert run["status"] == "failed" and "could not write verdicts" in run["error"]
    assert query_rows(db, "SELECT status FROM cell_runs") == [("failed",)]
    monkeypatch.setattr(runner, "write_rows", original)
    with OpenAIServer(port=server.port) as server:       # the same endpoint, restarted
        again = score(_request(server, "p", formats=["binary"]))
    assert again["recovered_from_journal"] >= 1
    assert query_rows(db, "SELECT count(*), count(DISTINCT a_idx) FROM verdicts") == [(200, 200)]


def test_plan_keys_include_decoding(db, write_jsonl):
    import_pool(db, write_jsonl("p.jsonl", _rows(["fine"] * 6)), "p")
    base = dict(pool="p", judge="fake:sim", formats=["likert5"], progress=False, flush_interval_s=0.05)
    assert score(ScoreRequest(**base))["made"] == 6
    # the same judge and format read the other way is another cell: its calls are made too
    assert score(ScoreRequest(decoding="constrained", **base))["made"] == 6
    assert query_rows(db, "SELECT decoding, count(*) FROM verdicts GROUP BY ALL ORDER BY 1") == [
        ("constrained", 6), ("greedy", 6)]
    assert score(ScoreRequest(**base))["made"] == 0


def test_replacing_a_pool_leaves_nothing_of_the_old_one(db, write_jsonl):
    """Every table that names a pool (verdicts, cell runs, labels, calibrations, subsets, studies...)
    forgets the replaced pool; a study's generations and outcomes go with it."""
    import_pool(db, write_jsonl("p.jsonl", _rows(["fine"] * 6)), "p")
    score(ScoreRequest(pool="p", judge="fake:sim", formats=["likert5"], progress=False, flush_interval_s=0.05))
    con = duckdb.connect(str(db))
    try:
        con.execute("INSERT INTO studies (study_id, name, pool_id, heldout) VALUES (1, 's', 1, '{}')")
        con.execute("INSERT INTO generations (study_id, condition, seed, base_model, prompt_idx, answer, answer_len, "
                    "ref_idx, ref_len, markdown) VALUES (1, 'base', 0, 'm', 0, 'a', 1, 0, 1, false)")
        tables = [r[0] for r in con.execute("SELECT DISTINCT table_name FROM information_schema.columns "
                                            "WHERE column_name = 'pool_id' AND table_name <> 'pools'").fetchall()]
    finally:
        con.close()
    assert {"verdicts", "cell_runs", "pair_labels", "calibrations", "subsets", "studies"} <= set(tables)
    import_pool(db, write_jsonl("p2.jsonl", _rows(["other"] * 6)), "p", replace=True)
    for table in tables:
        assert query_rows(db, f'SELECT count(*) FROM "{table}" WHERE pool_id = 1') == [(0,)], table
    assert query_rows(db, "SELECT count(*) FROM generations") == [(0,)]
