"""audit/_read.py, the audit's door to the database: the error a reader says to the user, named
queries of audit/sql with bound parameters, and a handle scoped to some judges."""

from pathlib import Path

import polars as pl
import pytest

from audit._read import AuditError, reading
from ingest.store import import_pool
from ingest.scoring import import_verdicts
from tests.fixtures import synthetic_pool, synthetic_verdicts


def test_an_unknown_pool_names_the_known_ones(db, write_jsonl):
    import audit
    import_pool(db, write_jsonl("p.jsonl", [{"prompt_id": "q", "prompt": "P", "candidate_id": "a",
                                             "response": "a"}]), "known")
    with pytest.raises(audit.AuditError, match=r"^no pool named 'nope' \(known: known\)$"):
        audit.audit_cells(db, "nope")


def test_the_database_defaults_to_judgeaudit_db_then_the_working_folder(db, write_jsonl, monkeypatch):
    from audit import pools
    from ingest.store.database import Database
    import_pool(db, write_jsonl("p.jsonl", [{"prompt_id": "q", "prompt": "P", "candidate_id": "a",
                                             "response": "a"}]), "p")
    monkeypatch.setenv("JUDGEAUDIT_DB", str(db))
    assert pools(None).rows() == [("p", 1, 1)] and Database().path == db.resolve()
    assert Database("x.duckdb").path.name == "x.duckdb"
    monkeypatch.delenv("JUDGEAUDIT_DB")
    assert Database().path == Path.cwd() / "judgeaudit.duckdb"


def test_an_unknown_pool_in_a_database_without_pools(db):
    import audit
    from ingest.store import writing
    with writing(db):           # the schema, migrated, and no pool
        pass
    with pytest.raises(audit.AuditError, match=r"^no pool named 'p' \(known: none\)$"):
        audit.audit_cells(db, "p")


def test_an_unknown_pool_names_the_known_ones_in_order(db, write_jsonl):
    import audit
    from ingest.store import import_pool
    for name in ("zeta", "alpha"):
        import_pool(db, write_jsonl(f"{name}.jsonl", [{"prompt_id": "q", "prompt": "Q?", "candidate_id": "c",
                                                       "response": "A."}]), name)
    with pytest.raises(audit.AuditError, match=r"^no pool named 'p' \(known: alpha, zeta\)$"):
        audit.audit_cells(db, "p")


def test_a_missing_database_is_an_audit_error_naming_the_file(tmp_path):
    import audit
    missing = tmp_path / "nowhere.duckdb"
    with pytest.raises(AuditError, match="nowhere.duckdb"):
        with reading(missing):
            pass
    with pytest.raises(AuditError, match="nowhere.duckdb"):
        audit.audit_cells(missing, "p")
    assert not missing.exists()          # a reader never creates the file


def test_a_reading_runs_a_named_query_with_its_parameters_bound(db, write_jsonl):
    for name, n in (("one", 1), ("two", 2)):
        import_pool(db, write_jsonl(f"{name}.jsonl", [{"prompt_id": f"q{i}", "prompt": f"{name} {i}?",
                                                       "candidate_id": "c", "response": "A."} for i in range(n)]), name)
    with reading(db) as read:
        # audit/sql/pools.sql: one row per pool, by name
        assert read.frame("pools").select("name", "n_prompts", "n_candidates").rows() == [("one", 1, 1), ("two", 2, 2)]
        two = read.pool_id("two")
        # audit/sql/eval_prompts.sql with $pool_id bound: the prompts of that pool only
        assert read.frame("eval_prompts", pool_id=two)["prompt"].to_list() == ["two 0?", "two 1?"]
        assert read.rows("eval_prompts", pool_id=read.pool_id("one"))[0][2] == "one 0?"
        # a parameter is bound, never pasted into the text: a quote in it is just a character
        assert read.frame("subsets", pool="it's'; DROP TABLE pools; --", sha256=None).height == 0
        assert read.frame("pools").height == 2
        with pytest.raises(Exception):
            read.frame("no_such_query")


def test_a_handle_scoped_to_some_judgings_reads_their_rows_only(db, write_jsonl):
    import audit
    from ingest.store import Database
    rows = synthetic_pool(12, seed=3)
    import_pool(db, write_jsonl("pool.jsonl", rows), "p")
    import_verdicts(db, write_jsonl("v.jsonl", synthetic_verdicts(rows, ("alpha", "beta"), seed=3)), "p")
    full = audit.audit_cells(db, "p")
    assert set(full["judge"]) == {"alpha", "beta"}
    # alpha in two of its formats (a judging: a judge with a format): those cells alone
    scoped = audit.audit_cells(Database(db).scoped([("alpha", "likert5"), ("alpha", "tournament")]), "p")
    assert set(scoped["judge"]) == {"alpha"} and set(scoped["format"]) == {"likert5", "tournament"}
    want = full.filter((pl.col("judge") == "alpha") & pl.col("format").is_in(["likert5", "tournament"]))
    from polars.testing import assert_frame_equal
    assert_frame_equal(scoped, want)
