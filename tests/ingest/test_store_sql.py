"""The store's SQL files (ingest/store/sql/): each says what it is, binds and plans against an empty
migrated database (so schema drift fails here), and each is run by the store under its name."""

from __future__ import annotations

import ast
import re
from importlib import resources
from pathlib import Path

import duckdb
import pytest

from ingest.store import CALL_KEY, VERDICT_COLUMNS, import_pool, writing
from ingest.store import _sql
from ingest.store._database import migrate

SQL = resources.files("ingest.store") / "sql"
FILES = sorted(f.name for f in SQL.iterdir() if f.name.endswith(".sql"))
STORE = Path(__file__).resolve().parents[2] / "ingest" / "store"

# the frames the store registers before it runs a file that reads them, shaped as the tables they feed
FRAMES = {"prompts_df": "SELECT * FROM prompts", "candidates_df": "SELECT * FROM candidates",
          "verdict_rows": "SELECT * FROM verdicts", "new_rows": "SELECT * FROM verdicts",
          "call_keys": "SELECT 0::BIGINT AS _pos, * FROM verdicts", "batch_rows": "SELECT * FROM batch_calls",
          "wanted_ids": "SELECT custom_id FROM batch_calls", "label_rows": "SELECT * FROM pair_labels",
          "members_df": "SELECT * FROM subset_members", "gen_df": "SELECT * FROM generations",
          "eval_df": "SELECT * FROM evaluations"}
FRAMES |= {"accept_label_rows": "SELECT * FROM accept_labels",
           "queue_rows": "SELECT * FROM label_queue_items", "order_rows": "SELECT * FROM label_orders"}
FRAMES |= {"import_anchors": "SELECT prompt_idx, a_idx AS anchor_idx FROM verdicts"}   # a streamed import's anchors


# the attached Parquet files a connection reads (connection.verdict_source): one file of a verdict file's columns
ATTACHED = {"judge": ["j"], "format": ["likert5"], "prompt_id": ["p"], "candidate_id": ["c"], "raw": ["3"]}
PARAMS: dict = {}


@pytest.fixture(scope="module")
def empty(tmp_path_factory):
    import polars as pl
    con = duckdb.connect()
    migrate(con)
    for name, query in FRAMES.items():
        con.execute(f"CREATE TEMP TABLE {name} AS {query} LIMIT 0")
    path = tmp_path_factory.mktemp("attached") / "verdicts.parquet"
    pl.DataFrame(ATTACHED).write_parquet(path)
    PARAMS.update(files=[str(path)], pools=[1], file_nos=[0], judges=[None], formats=[None], union=True)
    for name in ("set_attached_files", "attached_raw", "attached_judgings", "verdict_source_attached", "scope_judgings",
                 "verdict_source_whole"):
        _sql.script(con, name, **{k: PARAMS[k] for k in _sql.params_of(_sql.text(name))})
    con.execute("CREATE TEMP TABLE parsed_raws AS SELECT judge, format, raw, answer, value, status FROM attached_raw, "
                "(SELECT 'x' AS answer, 1.0 AS value, 'ok' AS status) LIMIT 0")
    con.execute("CREATE TEMP TABLE attached_files_df AS SELECT path, 0::BIGINT AS size, 0::BIGINT AS mtime_ns, "
                "0::BIGINT AS n_rows, judge, format FROM attached_raw LIMIT 0")
    # a Parquet verdict file imported where it lies (store._file_import): the frames it registers, its views
    con.execute("CREATE TEMP TABLE import_formats AS SELECT 'likert5' AS format, 'pointwise' AS kind, "
                "NULL::VARCHAR AS pairing LIMIT 0")
    con.execute("CREATE TEMP TABLE import_judgings AS SELECT 'j' AS judge, 'likert5' AS format, 1 AS judge_id, "
                "1 AS format_id, false AS held, 1 AS cell_run_id LIMIT 0")
    con.execute("CREATE TEMP TABLE import_answers AS SELECT format, raw, answer, value, status FROM verdicts, "
                "(SELECT 'likert5' AS format) LIMIT 0")
    con.execute("CREATE TEMP TABLE import_endpoints AS SELECT endpoint, endpoint AS public FROM verdicts LIMIT 0")
    con.execute("CREATE TEMP TABLE import_reference_anchors AS SELECT prompt_idx, a_idx AS anchor_idx FROM verdicts "
                "LIMIT 0")
    PARAMS.update(path=str(path), pool_id=1, pairs=False, cell_run_ids=[1])
    _sql.script(con, "import_file_rows", path=str(path), pool_id=1, pairs=False)
    yield con
    con.close()


def test_there_are_sql_files_and_each_opens_with_a_comment():
    assert len(FILES) >= 40
    for name in FILES:
        assert (SQL / name).read_text(encoding="utf-8").startswith("-- "), \
            f"{name} should open with a comment saying what one row means or what it does"


@pytest.mark.parametrize("name", FILES)
def test_every_statement_binds_and_plans_on_an_empty_migrated_database(empty, name):
    for statement in _sql.statements(name.removesuffix(".sql")):
        params = {k: PARAMS.get(k) for k in _sql.params_of(statement)}
        empty.execute("EXPLAIN " + statement, params).fetchall()
        if re.sub(r"^\s*(--[^\n]*\n\s*)*", "", statement).split(None, 1)[0].upper() in ("SELECT", "WITH"):
            # the reads also run: no rows, and no error
            empty.execute(statement, params).fetchall()


def _names_in_the_store() -> tuple[set[str], set[str]]:
    """(the file names passed to ingest.store._sql's runners, every string literal) in the store's modules."""
    run, literals = set(), set()
    for path in STORE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                literals.add(node.value)
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "_sql"
                    and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)):
                run.add(node.args[1].value)
    return run, literals


def test_every_file_is_named_by_the_store_and_every_name_it_runs_is_a_file():
    run, literals = _names_in_the_store()
    files = {n.removesuffix(".sql") for n in FILES}
    assert run - files == set()
    assert files - literals == set()        # no file left behind by a verb that is gone


def test_no_store_module_but_the_plumbing_pastes_sql_together():
    # parameters are bound; a table or column list that must vary is a second file, not an f-string
    for path in STORE.glob("*.py"):
        if path.name in ("_database.py", "connection.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.JoinedStr):
                head = node.values[0].value if node.values and isinstance(node.values[0], ast.Constant) else ""
                assert not re.match(r"\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\b", str(head)), \
                    f"{path.name}:{node.lineno} builds SQL in an f-string"


def _tables_with_pool_id() -> set[str]:
    con = duckdb.connect()
    migrate(con)
    return {r[0] for r in con.execute("SELECT DISTINCT table_name FROM information_schema.columns "
                                      "WHERE column_name = 'pool_id' AND table_schema = 'main'").fetchall()}


def test_deleting_a_pool_names_every_table_that_holds_a_pool_id():
    # the statements of delete_pool.sql, in order: children of subsets and studies, then each table
    statements = _sql.statements("delete_pool")
    deleted = [re.match(r"\s*(?:--.*\n)*\s*DELETE FROM (\w+)", s).group(1) for s in statements]
    assert deleted[:3] == ["subset_members", "generations", "evaluations"] and deleted[-1] == "pools"
    assert set(deleted[3:]) == _tables_with_pool_id()      # 10 tables and pools itself, today
    assert len(statements) == 3 + len(_tables_with_pool_id())


def test_the_files_that_match_a_call_name_every_column_of_its_key():
    for name in ("stored_call_statuses", "replace_failed_answers", "insert_new_answers"):
        text = _sql.text(name)
        for column in ["pool_id", *CALL_KEY]:
            assert re.search(rf"v\.{column}\b(?: IS NOT DISTINCT FROM| =) n\.{column}\b", text), (name, column)
    for name in ("insert_verdict_rows", "insert_new_answers"):
        head = re.search(r"INSERT INTO verdicts \(([^)]*)\)", _sql.text(name)).group(1)
        assert [c.strip() for c in head.split(",")] == list(VERDICT_COLUMNS), name


def test_a_script_runs_its_statements_in_order_with_the_parameters_each_names(tmp_path, write_jsonl):
    # a pool replaced: delete_pool.sql's 14 statements (3 children + 10 tables + pools) leave nothing
    # of the first pool; the second gets a new id (2), never 1 again
    rows = [{"prompt_id": "q", "prompt": "Q?", "candidate_id": c, "response": c} for c in ("a", "b")]
    db = tmp_path / "s.duckdb"
    import_pool(db, write_jsonl("p.jsonl", rows), "p")
    with writing(db) as unit:
        assert unit.pool_id("p") == 1
    import_pool(db, write_jsonl("p2.jsonl", rows[:1]), "p", replace=True)
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute("SELECT pool_id, count(*) FROM candidates GROUP BY 1").fetchall() == [(2, 1)]
        assert con.execute("SELECT pool_id FROM pools").fetchall() == [(2,)]
    finally:
        con.close()


POOL = [{"prompt_id": "q1", "prompt": "P1", "candidate_id": c, "response": f"r{c}"} for c in ("a", "b")]


def test_the_read_verbs_answer_from_what_is_stored_and_make_no_file(tmp_path, write_jsonl):
    from ingest.scoring import import_verdicts
    from ingest.store import import_labels, labelled_pools, pool_judges, pool_names, verdict_file_rows
    db = tmp_path / "r.duckdb"
    assert (pool_names(db), labelled_pools(db), pool_judges(db)) == ([], set(), set())
    assert not db.exists()                      # a look at a database that is not there makes none
    for name in ("q", "p"):
        import_pool(db, write_jsonl(f"{name}.jsonl", POOL), name)
    verdicts = [{"judge": "k", "format": "binary", "prompt_id": "q1", "candidate_id": "b", "raw": "ACCEPT"},
                {"judge": "j", "format": "tournament", "prompt_id": "q1", "a_id": "b", "b_id": "a", "raw": "A+",
                 "sample": 1, "decoding": "constrained"},
                {"judge": "j", "format": "likert5", "prompt_id": "q1", "candidate_id": "a", "raw": None,
                 "error": "HTTP 500"}]
    import_verdicts(db, write_jsonl("v.jsonl", verdicts), "p")
    import_labels(db, write_jsonl("l.jsonl", [{"prompt_id": "q1", "a_id": "a", "b_id": "b", "label": "A"}]), "q")
    assert pool_names(db) == ["p", "q"]
    assert pool_judges(db) == {("p", "j"), ("p", "k")}
    assert labelled_pools(db) == {"q"}
    # judge j's two calls in pool p, by format name, as a verdict file names them
    got = [(r["format"], r["prompt_id"], r["a_id"], r["b_id"], r["raw"], r["error"], r["sample"], r["decoding"],
            r["kind"]) for r in verdict_file_rows(db, "p", "j")]
    assert got == [("likert5", "q1", "a", None, None, "HTTP 500", 0, "greedy", "pointwise"),
                   ("tournament", "q1", "b", "a", "A+", None, 1, "constrained", "comparative")]
    assert verdict_file_rows(db, "q", "j") == []


def test_the_decoding_codes_go_there_and_back(tmp_path):
    """decoding_codes.sql (beside the verdict views): the three known modes as 0, 1, 2 and another as its text,
    each named again as it was; every audit query that groups by the code reads these three macros."""
    from ingest.store.connection import verdict_source
    con = duckdb.connect(str(tmp_path / "codes.duckdb"))
    migrate(con)
    verdict_source(con)
    rows = con.execute("SELECT d, decoding_code(d), decoding_other(d), decoding_name(decoding_code(d), decoding_other(d)) "
                       "FROM (VALUES ('greedy'), ('constrained'), ('sampled'), ('beam-4')) t(d) ORDER BY d").fetchall()
    assert rows == [("beam-4", None, "beam-4", "beam-4"), ("constrained", 1, None, "constrained"),
                    ("greedy", 0, None, "greedy"), ("sampled", 2, None, "sampled")]
    audit_sql = resources.files("audit") / "sql"
    users = sorted(f.name for f in audit_sql.iterdir() if "decoding_code(" in f.read_text())
    assert users == ["cell_calls.sql", "cell_runs.sql", "comparative_cells.sql", "judge_usage.sql", "label_cells.sql"]
    assert not [f.name for f in audit_sql.iterdir() if "WHEN 'greedy'" in f.read_text()]   # written out nowhere else
    con.close()
