"""Pool import: every accepted layout, and every refusal named by file, line and field."""

import json

import polars as pl
import pytest

from audit import pools
from ingest import UserError
from ingest.store import import_pool
from tests.conftest import db_snapshot, query_rows

ROWS = [
    {"prompt_id": "q1", "prompt": "Say hi", "candidate_id": "a", "response": "hi", "reference": 2},
    {"prompt_id": "q1", "prompt": "Say hi", "candidate_id": "b", "response": "hello", "reference": 3.5},
    {"prompt_id": "q2", "prompt": "Count", "candidate_id": "a", "response": "1 2 3", "model": "m1"},
]


def test_jsonl_import_and_listing_order(db, write_jsonl):
    path = write_jsonl("pool.jsonl", [ROWS[0], "", ROWS[1], "   ", ROWS[2]])  # blank lines are fine
    result = import_pool(db, path, "demo")
    assert (result["n_prompts"], result["n_candidates"]) == (2, 3)
    assert pools(db).to_dicts() == [{"name": "demo", "n_prompts": 2, "n_candidates": 3}]
    got = query_rows(db, "SELECT prompt_idx, candidate_id, position, reference, model, split "
                         "FROM candidates ORDER BY cand_idx")
    assert got == [(0, "a", 0, 2.0, None, "pool"), (0, "b", 1, 3.5, None, "pool"),
                   (1, "a", 0, None, "m1", "pool")]


def test_integer_ids_are_read_as_text(db, write_jsonl):
    path = write_jsonl("pool.jsonl", [{**ROWS[0], "prompt_id": 81}, {**ROWS[1], "prompt_id": 81}])
    assert import_pool(db, path, "ints")["n_prompts"] == 1


def test_csv_with_multiline_fields(db, tmp_path):
    path = tmp_path / "pool.csv"
    path.write_text('prompt_id,prompt,candidate_id,response,reference\n'
                    'q1,Say hi,a,"hi\nthere",1\n'
                    'q1,Say hi,b,"hello",2\n'
                    'q1,Say hi,b,"dup",2\n')
    with pytest.raises(UserError, match=r"pool.csv, line 5, field 'candidate_id': duplicate candidate 'b' "
                                        r"for prompt 'q1' \(first at line 4\)"):
        import_pool(db, path, "csv")
    path.write_text('prompt_id,prompt,candidate_id,response,reference\nq1,Say hi,a,"hi\nthere",1\n'
                    'q1,Say hi,b,hello,\n')
    assert import_pool(db, path, "csv")["n_candidates"] == 2


def test_parquet(db, tmp_path):
    path = tmp_path / "pool.parquet"
    pl.DataFrame(ROWS).write_parquet(path)
    assert import_pool(db, path, "pq")["n_candidates"] == 3
    bad = tmp_path / "bad.parquet"
    pl.DataFrame([{**r, "reference": "x"} if i == 1 else {**r, "reference": str(r.get("reference"))}
                  for i, r in enumerate(ROWS)]).write_parquet(bad)
    with pytest.raises(UserError, match=r"bad.parquet, row 2, field 'reference': not a number: 'x'"):
        import_pool(db, bad, "pq2")


def test_ultrafeedback_layout(db, write_jsonl):
    rows = [{"source": "evol", "instruction": "Write a haiku",
             "completions": [
                 {"model": "m1", "response": "an old pond", "overall_score": 7.5,
                  "annotations": {"helpfulness": {"Rating": "4"}}},
                 {"model": "m2", "response": "frog jumps", "overall_score": 6.0,
                  "annotations": {"helpfulness": {"Rating": "3"}}}]},
            {"source": "evol", "instruction": "Say hi",
             "completions": [{"model": "m1", "response": "hi", "overall_score": None,
                              "annotations": {"helpfulness": {"Rating": "5"}}}]}]
    result = import_pool(db, write_jsonl("uf.jsonl", rows), "uf")
    assert result["layout"] == "ultrafeedback"
    assert (result["n_prompts"], result["n_candidates"]) == (2, 3)
    got = query_rows(db, "SELECT candidate_id, reference FROM candidates ORDER BY cand_idx")
    # overall_score where present, else the mean of the fine-grained ratings (5)
    assert got == [("m1", 7.5), ("m2", 6.0), ("m1", 5.0)]
    # the prompt's category: UltraFeedback's source
    assert query_rows(db, "SELECT prompt, category FROM prompts ORDER BY prompt_idx") == \
        [("Write a haiku", "evol"), ("Say hi", "evol")]
    rows[1] = {**rows[1], "source": "sharegpt", "category": "chat"}     # a category of its own comes first
    import_pool(db, write_jsonl("uf2.jsonl", [rows[1]]), "uf2")
    assert query_rows(db, "SELECT category FROM prompts p JOIN pools USING (pool_id) WHERE name = 'uf2'") == [("chat",)]


CATEGORIES = [
    {"prompt_id": "q1", "prompt": "Say hi", "candidate_id": "a", "response": "hi", "category": "writing"},
    {"prompt_id": "q1", "prompt": "Say hi", "candidate_id": "b", "response": "hello", "category": " writing "},
    {"prompt_id": "q2", "prompt": "Count", "candidate_id": "a", "response": "1 2 3"},
    {"prompt_id": "q3", "prompt": "Add", "candidate_id": "a", "response": "4", "category": ""},
    {"prompt_id": "q4", "prompt": "Sum", "candidate_id": "a", "response": "5", "category": 7},
]


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_a_prompt_may_carry_a_category(db, tmp_path, write_jsonl, suffix):
    # a category is text, stripped; an empty one, or none, is no category (a number is read as text)
    rows = [{**r, "category": str(r["category"])} if suffix != ".jsonl" and "category" in r else r
            for r in CATEGORIES]
    if suffix == ".jsonl":
        path = write_jsonl("pool.jsonl", rows)
    elif suffix == ".csv":
        path = tmp_path / "pool.csv"
        pl.DataFrame(rows).write_csv(path)
    else:
        path = tmp_path / "pool.parquet"
        pl.DataFrame(rows).write_parquet(path)
    import_pool(db, path, "cats")
    assert query_rows(db, "SELECT prompt_id, category FROM prompts ORDER BY prompt_idx") == \
        [("q1", "writing"), ("q2", None), ("q3", None), ("q4", "7")]
    # a file without the field: no prompt has one
    import_pool(db, write_jsonl("plain.jsonl", ROWS), "plain")
    assert query_rows(db, "SELECT count(category), count(*) FROM prompts JOIN pools USING (pool_id) "
                          "WHERE name = 'plain'") == [(0, 2)]


@pytest.mark.parametrize("lines, pattern", [
    # the category is the prompt's: the same on every candidate of it, none on one and one on another too
    ([CATEGORIES[0], {**CATEGORIES[1], "category": "coding"}],
     r"pool.jsonl, line 2, field 'category': prompt 'q1' has category 'coding' here but 'writing' at line 1"),
    ([CATEGORIES[0], CATEGORIES[2], {**CATEGORIES[1], "category": None}],
     r"pool.jsonl, line 3, field 'category': prompt 'q1' has category none here but 'writing' at line 1"),
    ([CATEGORIES[2], {**CATEGORIES[2], "candidate_id": "b", "category": "math"}],
     r"pool.jsonl, line 2, field 'category': prompt 'q2' has category 'math' here but none at line 1"),
    ([{**CATEGORIES[0], "category": ["writing"]}], r"pool.jsonl, line 1, field 'category': must be text"),
])
def test_category_refusals(db, write_jsonl, lines, pattern):
    _expect_refusal(db, write_jsonl("pool.jsonl", lines), pattern)


def test_a_csv_category_clash_names_its_line(db, tmp_path):
    path = tmp_path / "pool.csv"
    path.write_text("prompt_id,prompt,candidate_id,response,category\nq,x,a,r,math\nq,x,b,r,Math\n")
    _expect_refusal(db, path, r"pool.csv, line 3, field 'category': prompt 'q' has category 'Math' here "
                              r"but 'math' at line 2")


def _expect_refusal(db, path, pattern, name="p"):
    before = db_snapshot(db)
    with pytest.raises(UserError, match=pattern):
        import_pool(db, path, name)
    assert db_snapshot(db) == before


@pytest.mark.parametrize("lines, pattern", [
    ([], r"pool.jsonl: empty file"),
    (['{"prompt_id": "q1", "prompt": "x", "candidate_id": "a", "response": "r"}', '{"prompt_id": "q1",'],
     r"pool.jsonl, line 2: not valid JSON"),
    # json says "Unterminated string starting at" and the column of the opening quote: 15 here
    # ('{' 1, '"prompt_id"' 2-12, ':' 13, ' ' 14, '"' 15), said once, never "at at column"
    (['{"prompt_id": "q1", "prompt": "x", "candidate_id": "a", "response": "r"}', '{"prompt_id": "q1'],
     r"pool.jsonl, line 2: not valid JSON \(Unterminated string starting at column 15\)$"),
    (['{"prompt_id": "q1", "prompt": "x", "candidate_id": "a", "response": "r"}', '{"prompt_id": }'],
     r"pool.jsonl, line 2: not valid JSON \(Expecting value at column 15\)$"),
    (['{"prompt_id": "q1", "prompt": "x", "candidate_id": "a", "response": "r"}', "[1, 2]"],
     r"pool.jsonl, line 2: a row must be a JSON object, not list"),
    (['{"prompt_id": "q1", "prompt": "x"}'],
     r"pool.jsonl: missing required field\(s\) 'candidate_id', 'response'"),
    ([{**ROWS[0]}, {**ROWS[1], "candidate_id": None}],
     r"pool.jsonl, line 2, field 'candidate_id': missing or null"),
    ([{**ROWS[0]}, {**ROWS[1], "prompt_id": None}],
     r"pool.jsonl, line 2, field 'prompt_id': missing or null"),
    ([ROWS[0], ROWS[1], {**ROWS[1], "response": "again"}],
     r"pool.jsonl, line 3, field 'candidate_id': duplicate candidate 'b' for prompt 'q1' \(first at line 2\)"),
    ([ROWS[0], {**ROWS[1], "prompt": "Say hello"}],
     r"pool.jsonl, line 2, field 'prompt': prompt 'q1' has a different text here than at line 1"),
    ([ROWS[0], {**ROWS[1], "reference": "high"}],
     r"pool.jsonl, line 2, field 'reference': not a number: 'high'"),
    ([ROWS[0], '{"prompt_id": "q1", "prompt": "Say hi", "candidate_id": "b", "response": "r", "reference": 1e999}'],
     r"pool.jsonl, line 2, field 'reference': not a finite number"),
    ([ROWS[0], {**ROWS[1], "split": "train"}],
     r"pool.jsonl, line 2, field 'split': must be 'pool' or 'heldout'"),
])
def test_jsonl_refusals(db, write_jsonl, lines, pattern):
    import_pool(db, write_jsonl("ok.jsonl", ROWS), "existing")  # the database is not empty
    _expect_refusal(db, write_jsonl("pool.jsonl", lines), pattern)


def test_csv_non_finite_reference(db, tmp_path):
    path = tmp_path / "pool.csv"
    path.write_text("prompt_id,prompt,candidate_id,response,reference\nq,x,a,r,1\nq,x,b,r,inf\n")
    _expect_refusal(db, path, r"pool.csv, line 3, field 'reference': not a finite number")


def test_not_utf8(db, tmp_path):
    path = tmp_path / "pool.jsonl"
    path.write_bytes(json.dumps(ROWS[0]).encode() + b"\n" + b'{"prompt_id": "q\xff"}\n')
    _expect_refusal(db, path, r"pool.jsonl, line 2: not valid UTF-8 \(byte 0xff")


def test_file_level_refusals(db, tmp_path, write_jsonl):
    _expect_refusal(db, tmp_path / "missing.jsonl", r"missing.jsonl: no such file")
    (tmp_path / "folder.jsonl").mkdir()
    _expect_refusal(db, tmp_path / "folder.jsonl", r"folder.jsonl: is a directory")
    txt = tmp_path / "pool.txt"
    txt.write_text("hello")
    _expect_refusal(db, txt, r"pool.txt: unsupported file type '.txt'")
    csv = tmp_path / "header.csv"
    csv.write_text("prompt_id,prompt,candidate_id,response\n")
    _expect_refusal(db, csv, r"header.csv, line 1: empty file")


def test_name_taken_unless_replace(db, write_jsonl):
    path = write_jsonl("pool.jsonl", ROWS)
    import_pool(db, path, "p")
    _expect_refusal(db, path, r"pool 'p' already exists \(use --replace")
    smaller = write_jsonl("small.jsonl", ROWS[:1])
    assert import_pool(db, smaller, "p", replace=True)["n_candidates"] == 1
    assert pools(db).to_dicts() == [{"name": "p", "n_prompts": 1, "n_candidates": 1}]


# -- the Pool page (Streamlit AppTest): the fields and an example on the page, a confirmation, the
# page's own words for a taken name ------------------------------------------------------------------

def test_the_example_pool_imports_as_it_is(db, tmp_path):
    from app.views.pool import form as pool_form
    path = tmp_path / "example-pool.jsonl"
    path.write_text(pool_form.example_jsonl())
    got = import_pool(db, path, "example")
    # 6 rows: prompts q1 and q2, three candidates each; the last row of q2 is held out
    assert (got["n_prompts"], got["n_candidates"]) == (2, 6)
    assert query_rows(db, "SELECT count(*) FILTER (split = 'heldout'), count(reference), count(model) "
                          "FROM candidates") == [(1, 6, 6)]
    # every field of DESIGN.md's pool file is listed, the four required ones marked so
    listed = pool_form.fields_markdown()
    assert [line.split("`")[1] for line in listed.splitlines()] == [
        "prompt_id", "prompt", "candidate_id", "response", "reference", "model", "split", "category"]
    assert listed.count("(required)") == 4 and set(pool_form.EXAMPLE[0]) | {"split"} == {f[0] for f in pool_form.FIELDS}
    assert query_rows(db, "SELECT prompt_id, category FROM prompts ORDER BY prompt_idx") == \
        [("q1", "general"), ("q2", "math")]


def _pool_page(db, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from tests.conftest import REPO
    monkeypatch.setenv("JUDGEAUDIT_DB", str(db))
    at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=180).run()
    return at.switch_page("views/pool/page.py").run()


def test_pool_page_confirms_an_import_and_names_its_checkbox_for_a_taken_name(db, write_jsonl, monkeypatch):
    from app.views.pool import form as pool_form
    import_pool(db, write_jsonl("mine.jsonl", ROWS), "mine")       # a user's own database: no demo seeding
    at = _pool_page(db, monkeypatch)
    assert "prompt_id" in at.expander[0].markdown[0].value and "(required)" in at.expander[0].markdown[0].value
    content = write_jsonl("pool.jsonl", ROWS[:2]).read_bytes()
    at.file_uploader[0].upload("pool.jsonl", content)
    at.text_input[0].set_value("second")
    at.button[0].click().run()
    # after the page's rerun: the success note survives, and the sidebar switched to the new pool
    assert not at.exception and not at.error
    assert [s.value for s in at.success] == [
        "Imported pool 'second': 1 prompt, 2 candidates. It is now the sidebar's pool: score it on the Score page."]
    assert at.sidebar.selectbox[0].value == "second"
    at.file_uploader[0].upload("pool.jsonl", content)
    at.text_input[0].set_value("mine")
    at.button[0].click().run()
    assert [e.value for e in at.error] == [
        f"A pool named 'mine' already exists. Tick **{pool_form.REPLACE_LABEL}** to overwrite it and its "
        "verdicts, or choose another name."]
    assert "--replace" not in at.error[0].value and query_rows(db, "SELECT count(*) FROM candidates c JOIN pools p "
                                                                  "USING (pool_id) WHERE p.name = 'mine'") == [(3,)]
    at.file_uploader[0].upload("pool.jsonl", content)
    at.checkbox[0].check()
    at.button[0].click().run()
    assert not at.error and at.success[0].value.startswith("Imported pool 'mine': 1 prompt, 2 candidates.")


def test_the_demos_mt_bench_pools_carry_their_questions_categories(db):
    from tests.conftest import REPO
    # MT-Bench's 80 questions, 81-160, in eight categories of ten, in this order (its question file)
    blocks = ("writing", "roleplay", "reasoning", "math", "coding", "extraction", "stem", "humanities")
    want = {str(q): blocks[(q - 81) // 10] for q in range(81, 161)}
    import_pool(db, REPO / "ingest" / "demo" / "mtbench-pool.jsonl", "mtbench")
    import_pool(db, REPO / "ingest" / "demo" / "mtbench-formats-pool.jsonl", "mtbench-formats")
    for pool, n in (("mtbench", 80), ("mtbench-formats", 6)):
        got = query_rows(db, "SELECT prompt_id, category FROM prompts JOIN pools USING (pool_id) WHERE name = ?",
                         [pool])
        assert len(got) == n and all(category == want[prompt] for prompt, category in got), got
