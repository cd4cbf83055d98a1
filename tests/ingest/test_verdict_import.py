"""Verdict import: parsing, orientation of comparative calls, refusals, idempotency."""

import pytest

from ingest import UserError
from ingest.store import import_pool
from ingest.scoring import import_verdicts
from tests.conftest import db_snapshot, query_rows

POOL = [
    {"prompt_id": "q1", "prompt": "P1", "candidate_id": "a", "response": "ra", "reference": 1},
    {"prompt_id": "q1", "prompt": "P1", "candidate_id": "b", "response": "rb", "reference": 3},
    {"prompt_id": "q1", "prompt": "P1", "candidate_id": "c", "response": "rc", "reference": 2},
    {"prompt_id": "q2", "prompt": "P2", "candidate_id": "a", "response": "ra"},
    {"prompt_id": "q2", "prompt": "P2", "candidate_id": "b", "response": "rb"},
]


@pytest.fixture
def pool(db, write_jsonl):
    import_pool(db, write_jsonl("pool.jsonl", POOL), "p")
    return "p"



def test_pointwise_and_comparative(db, pool, write_jsonl):
    rows = [
        {"judge": "j", "format": "likert5", "prompt_id": "q1", "candidate_id": "a", "raw": "Score: 4"},
        {"judge": "j", "format": "likert5", "prompt_id": "q1", "candidate_id": "b", "raw": "nope"},
        {"judge": "j", "format": "likert5", "prompt_id": "q1", "candidate_id": "b", "raw": "5", "sample": 1},
        {"judge": "j", "format": "tournament", "prompt_id": "q1", "a_id": "a", "b_id": "c", "raw": "A+"},
        {"judge": "j", "format": "tournament", "prompt_id": "q1", "a_id": "c", "b_id": "a", "raw": "B++"},
        {"judge": "j", "format": "binary", "prompt_id": "q2", "candidate_id": "a", "raw": None,
         "error": "HTTP 500"},
    ]
    result = import_verdicts(db, write_jsonl("v.jsonl", rows), pool)
    assert result["imported"] == 6
    assert result["status_counts"] == {"failed": 1, "no_label": 1, "ok": 4}
    got = query_rows(db, "SELECT f.name, a_idx, b_idx, swapped, sample, answer, value, status "
                    "FROM verdicts JOIN formats f USING (format_id) ORDER BY f.name, a_idx, sample")
    assert got == [
        ("binary", 3, None, False, 0, None, None, "failed"),
        ("likert5", 0, None, False, 0, "4", 4.0, "ok"),
        ("likert5", 1, None, False, 0, None, None, "no_label"),
        ("likert5", 1, None, False, 1, "5", 5.0, "ok"),
        # a (listed first) vs c: forward; c in slot A against a: the reverse orientation
        ("tournament", 0, 2, False, 0, "A+", 1.0, "ok"),
        ("tournament", 2, 0, True, 0, "B++", -2.0, "ok"),
    ]
    runs = query_rows(db, "SELECT source, status, template FROM cell_runs ORDER BY run_id")
    assert runs == [("import", "finished", None)] * 3


def test_reimport_is_idempotent(db, pool, write_jsonl):
    path = write_jsonl("v.jsonl", [{"judge": "j", "format": "binary", "prompt_id": "q1",
                                     "candidate_id": "a", "raw": "ACCEPT"}])
    assert import_verdicts(db, path, pool)["imported"] == 1
    again = import_verdicts(db, path, pool)
    assert (again["imported"], again["skipped_existing"]) == (0, 1)
    assert query_rows(db, "SELECT count(*) FROM verdicts") == [(1,)]


def test_a_file_overlapping_stored_calls_adds_only_the_new_ones(db, pool, write_jsonl):
    def row(cand, raw, sample=0, **kw):
        return {"judge": "j", "format": "likert5", "prompt_id": "q1", "candidate_id": cand, "raw": raw,
                "sample": sample, **kw}
    import_verdicts(db, write_jsonl("first.jsonl", [row("a", "4"), row("b", "2")]), pool)
    # a stored call (a, sample 0; its new answer is ignored), another sample of it, a new candidate,
    # and the same call under another decoding: 3 new calls, 1 skipped
    second = [row("a", "1"), row("a", "5", sample=1), row("c", "3"), row("b", "1", decoding="constrained")]
    out = import_verdicts(db, write_jsonl("second.jsonl", second), pool)
    assert (out["rows_in_file"], out["imported"], out["skipped_existing"]) == (4, 3, 1)
    assert query_rows(db, "SELECT a_idx, sample, decoding, raw FROM verdicts ORDER BY ALL") == [
        (0, 0, "greedy", "4"), (0, 1, "greedy", "5"), (1, 0, "constrained", "1"), (1, 0, "greedy", "2"),
        (2, 0, "greedy", "3")]


def test_anchored_orientation_uses_the_reference_anchor(db, pool, write_jsonl):
    # q1 references a=1, b=3, c=2: sorted ascending a, c, b; k=3, index floor(3/2)=1 -> c
    rows = [{"judge": "j", "format": "anchored", "prompt_id": "q1", "a_id": x, "b_id": y, "raw": "TIE"}
            for x, y in (("a", "c"), ("b", "c"), ("c", "c"), ("c", "a"))]
    import_verdicts(db, write_jsonl("v.jsonl", rows), pool)
    got = query_rows(db, "SELECT a_idx, b_idx, swapped FROM verdicts ORDER BY a_idx, b_idx")
    assert got == [(0, 2, False), (1, 2, False), (2, 0, True), (2, 2, False)]


def test_user_format_from_toml(db, pool, write_jsonl, tmp_path):
    spec = tmp_path / "arena5.toml"
    spec.write_text('name = "arena5"\nkind = "comparative"\n'
                    'labels = { "A>>B" = 2, "A>B" = 1, "A=B" = 0, "B>A" = -1, "B>>A" = -2 }\n')
    rows = [{"judge": "j", "format": "arena5", "prompt_id": "q2", "a_id": "a", "b_id": "b",
             "raw": "[[A>>B]]"}]
    import_verdicts(db, write_jsonl("v.jsonl", rows), pool, format_specs=[spec])
    assert query_rows(db, "SELECT value FROM verdicts") == [(2.0,)]
    # a different definition under the same name is refused
    spec.write_text('name = "arena5"\nkind = "comparative"\nlabels = { "A" = 1, "B" = -1 }\n')
    with pytest.raises(UserError, match="already stored with a different definition"):
        import_verdicts(db, write_jsonl("v2.jsonl", rows), pool, format_specs=[spec])


@pytest.mark.parametrize("row, pattern", [
    ({"judge": "j", "format": "likert7", "prompt_id": "q1", "candidate_id": "a", "raw": "4"},
     r"v.jsonl, line 2, field 'format': unknown format 'likert7'"),
    ({"judge": "j", "format": "likert5", "prompt_id": "q9", "candidate_id": "a", "raw": "4"},
     r"v.jsonl, line 2, field 'prompt_id': unknown prompt 'q9' in pool 'p'"),
    ({"judge": "j", "format": "likert5", "prompt_id": "q1", "candidate_id": "zz", "raw": "4"},
     r"v.jsonl, line 2, field 'candidate_id': unknown candidate 'zz' for prompt 'q1'"),
    ({"judge": "j", "format": "tournament", "prompt_id": "q1", "a_id": "a", "b_id": "zz", "raw": "A+"},
     r"v.jsonl, line 2, field 'b_id': unknown candidate 'zz'"),
    ({"judge": "j", "format": "tournament", "prompt_id": "q1", "candidate_id": "a", "raw": "A+"},
     r"v.jsonl, line 2, field 'a_id': required for the comparative format 'tournament'"),
    ({"judge": "j", "format": "binary", "prompt_id": "q1", "a_id": "a", "b_id": "b", "raw": "ACCEPT"},
     r"v.jsonl, line 2, field 'candidate_id': required for the pointwise format 'binary'"),
    ({"judge": None, "format": "binary", "prompt_id": "q1", "candidate_id": "a", "raw": "ACCEPT"},
     r"v.jsonl, line 2, field 'judge': missing or empty"),
    ({"judge": "j", "format": "binary", "prompt_id": "q1", "candidate_id": "a", "raw": "x", "sample": -1},
     r"v.jsonl, line 2, field 'sample': must be a non-negative integer"),
    ({"judge": "j", "format": "binary", "prompt_id": "q1", "candidate_id": "a", "raw": "REJECT"},
     r"v.jsonl, line 2: the same call .* appears twice; first at line 1"),
])
def test_refusals_land_nothing(db, pool, write_jsonl, row, pattern):
    first = {"judge": "j", "format": "binary", "prompt_id": "q1", "candidate_id": "a", "raw": "ACCEPT"}
    before = db_snapshot(db)
    with pytest.raises(UserError, match=pattern):
        import_verdicts(db, write_jsonl("v.jsonl", [first, row]), pool)
    assert db_snapshot(db) == before


def test_unknown_pool_and_missing_fields(db, pool, write_jsonl):
    path = write_jsonl("v.jsonl", [{"judge": "j", "format": "binary", "prompt_id": "q1",
                                    "candidate_id": "a", "raw": "ACCEPT"}])
    with pytest.raises(UserError, match="no pool named 'nope'"):
        import_verdicts(db, path, "nope")
    with pytest.raises(UserError, match=r"v2.jsonl: missing required field\(s\) 'raw'"):
        import_verdicts(db, write_jsonl("v2.jsonl", [{"judge": "j", "format": "binary",
                                                      "prompt_id": "q1", "candidate_id": "a"}]), pool)


# Parquet (issue 21 §3): the JSONL's columns, the same checks and the same stored rows.
MIXED = [
    {"judge": "j", "format": "likert5", "prompt_id": "q1", "candidate_id": "a", "raw": "Score: 4",
     "label_probs": '{"3": 0.25, "4": 0.75}', "decoding": "constrained"},
    {"judge": "j", "format": "likert5", "prompt_id": "q1", "candidate_id": "b", "raw": "nope", "sample": 1},
    {"judge": "j", "format": "tournament", "prompt_id": "q1", "a_id": "c", "b_id": "a", "raw": "B++"},
    {"judge": "j", "format": "anchored", "prompt_id": "q1", "a_id": "a", "b_id": "c", "raw": "A+"},
    {"judge": "k", "format": "binary", "prompt_id": "q2", "candidate_id": "a", "raw": None, "error": "HTTP 500",
     "tokens_in": 12, "latency_ms": 3.5},
]
STORED = ("SELECT j.name, f.name, decoding, prompt_idx, a_idx, b_idx, swapped, sample, raw, answer, value, status, "
          "error, attempts, latency_ms, tokens_in, tokens_out, answer_probs, expected, verdicts.endpoint "
          "FROM verdicts JOIN judges j USING (judge_id) JOIN formats f USING (format_id) "
          "ORDER BY j.name, f.name, prompt_idx, a_idx, b_idx, sample")


def _parquet(path, rows, schema=None):
    import polars as pl
    pl.DataFrame(rows, schema=schema, infer_schema_length=None).write_parquet(path)
    return path


def test_parquet_import_stores_what_the_jsonl_import_stores(db, pool, write_jsonl, tmp_path):
    from ingest.store import import_pool as store_pool
    result = import_verdicts(db, write_jsonl("v.jsonl", MIXED), pool)
    other = tmp_path / "other.duckdb"
    store_pool(other, write_jsonl("pool2.jsonl", POOL), "p")
    assert import_verdicts(other, _parquet(tmp_path / "v.parquet", MIXED), "p") == \
        {**result, "rows_in_file": 5} and result["imported"] == 5
    stored = query_rows(db, STORED)
    assert query_rows(other, STORED) == stored
    # likert5 expected score from the distribution: 3 x 0.25 + 4 x 0.75 = 3.75
    assert [r[18] for r in stored if r[1] == "likert5"] == [3.75, None]


@pytest.mark.parametrize("change, pattern", [
    (lambda r: {k: v for k, v in r.items() if k != "raw"}, r"v.parquet: missing required field\(s\) 'raw'"),
    (lambda r: {**r, "sample": "x"}, r"v.parquet, row 1, field 'sample': must be an integer, not a column of type String"),
    (lambda r: {**r, "judge": 7}, r"v.parquet, row 1, field 'judge': must be text, not a column of type Int64"),
    (lambda r: {**r, "label_probs": 1}, r"v.parquet, row 1, field 'label_probs': must be JSON text or a struct"),
    (lambda r: {**r, "tokens_in": "many"}, r"v.parquet, row 1, field 'tokens_in': must be a number"),
    (lambda r: {**r, "label_probs": '{"4": 1.5}'}, r"v.parquet, row 1, field 'label_probs': must map answers to "
                                                   r"probabilities in \[0, 1\]"),
    (lambda r: {**r, "candidate_id": "zz"}, r"v.parquet, row 1, field 'candidate_id': unknown candidate 'zz'"),
])
def test_a_malformed_parquet_is_refused_naming_the_field(db, pool, tmp_path, change, pattern):
    good = {"judge": "j", "format": "likert5", "prompt_id": "q1", "candidate_id": "a", "raw": "4", "sample": 0,
            "label_probs": None, "tokens_in": 5}
    rows = [change(good), change({**good, "prompt_id": "q2"})]
    before = db_snapshot(db)
    with pytest.raises(UserError, match=pattern):
        import_verdicts(db, _parquet(tmp_path / "v.parquet", rows), pool)
    assert db_snapshot(db) == before


def test_a_file_that_is_not_parquet_and_an_exported_file_missing_a_slot(db, pool, tmp_path):
    (tmp_path / "v.parquet").write_text('{"judge": "j"}\n')
    before = db_snapshot(db)
    with pytest.raises(UserError, match=r"v.parquet: could not read as Parquet"):
        import_verdicts(db, tmp_path / "v.parquet", pool)
    # export-verdicts' columns: candidate_a / candidate_b, and errors name them as the file does
    rows = [{"judge": "j", "format": "likert5", "prompt_id": "q1", "candidate_a": "a", "candidate_b": None,
             "raw": "4"},
            {"judge": "j", "format": "tournament", "prompt_id": "q1", "candidate_a": "a", "candidate_b": None,
             "raw": "A+"}]
    with pytest.raises(UserError, match=r"e.parquet, row 2, field 'candidate_b': required for the comparative"):
        import_verdicts(db, _parquet(tmp_path / "e.parquet", rows), pool)
    assert db_snapshot(db) == before
