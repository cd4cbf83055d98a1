"""A Parquet verdict file from the command line is imported where it lies (issue 29 item 2: import at
1M rows/s or more): DuckDB reads the file, places the rows and appends them in one statement
(ingest.scoring._file_import). The batch path (_imported._Import, tested on its own in
test_verdict_import.py and test_import_streamed.py) is the reference: both must store the same verdicts,
cell runs and summary, and a file DuckDB's checks refuse must go the batch way and be refused there with
the same words."""

import json

import polars as pl
import pytest

import ingest.scoring._imported as imported
from ingest import UserError
from ingest.scoring import import_verdicts
from tests.conftest import query_rows
from tests.fixtures import synthetic_verdicts
from tests.ingest.test_import_streamed import ANCHORED, _pool

STORED = ("SELECT j.name, f.name, v.decoding, v.prompt_idx, v.a_idx, v.b_idx, v.sample, v.swapped, v.raw, "
          "v.answer, v.value, v.status, v.error, v.attempts, v.latency_ms, v.tokens_in, v.tokens_out, "
          "v.answer_probs, v.expected, v.endpoint, r.source, r.source_file, r.status "
          "FROM verdicts v JOIN judges j USING (judge_id) JOIN formats f USING (format_id) "
          "JOIN cell_runs r USING (cell_run_id) ORDER BY ALL")
RUNS = ("SELECT j.name, f.name, r.source, r.status, count(v.cell_run_id) FROM cell_runs r "
        "JOIN judges j USING (judge_id) JOIN formats f USING (format_id) LEFT JOIN verdicts v USING (cell_run_id) "
        "GROUP BY ALL ORDER BY ALL")


def _rows(pool_rows, seed=5):
    """Pointwise, tournament and anchored calls (p00000 anchored by the file's votes, the others by their
    references), with the optional fields a pipeline writes: a failed call, an empty answer, endpoints with
    credentials, token counts, latency, another decoding, a null sample."""
    rows = ANCHORED[:2] + synthetic_verdicts(pool_rows, seed=seed) + ANCHORED[2:]
    for i, r in enumerate(rows):
        r.setdefault("sample", None if i % 7 == 0 else 0)
        r["endpoint"] = ["http://user:secret@gpu1:8000/v1/?key=k", "http://gpu2:8000/v1", None][i % 3]
        r["tokens_in"], r["latency_ms"] = (100 + i, 12.5 * i) if i % 2 else (None, None)
    rows[5].update(raw=None, error="HTTP 500")          # a failed call
    rows[6].update(raw=None, error=None)                # no answer, no error: empty
    rows[8]["decoding"] = "sampled"
    prompts = sorted({r["prompt_id"] for r in pool_rows if r["prompt_id"] != "p00000"})
    by_prompt = {p: [r["candidate_id"] for r in pool_rows if r["prompt_id"] == p] for p in prompts[:3]}
    for p, cands in by_prompt.items():                 # anchored calls of prompts with references
        for c in cands[:2]:
            rows.append({"judge": "j", "format": "anchored", "prompt_id": p, "a_id": c, "b_id": cands[-1],
                         "raw": "A+", "sample": 0})
        rows.append({"judge": "j", "format": "anchored", "prompt_id": p, "a_id": cands[-1], "b_id": cands[0],
                     "raw": "B+", "sample": 0})
    return rows


def _write(path, rows):
    pl.DataFrame(rows, infer_schema_length=None, schema_overrides={
        "sample": pl.Int64, "tokens_in": pl.Int64, "latency_ms": pl.Float64}).write_parquet(path)
    return path


@pytest.fixture
def no_batches(monkeypatch):
    """The batch path refused: an import that takes it fails the test."""
    def refuse(*args, **kwargs):
        raise AssertionError("the batch path was taken")
    monkeypatch.setattr(imported, "_Import", refuse)


def test_in_place_stores_what_the_batch_path_stores(tmp_path, monkeypatch):
    pool_rows = _pool(tmp_path, tmp_path / "batch.duckdb")
    _pool(tmp_path, tmp_path / "place.duckdb")
    rows = _rows(pool_rows)
    path = _write(tmp_path / "v.parquet", rows)
    batch = import_verdicts(tmp_path / "batch.duckdb", path, "p", capped=False, in_place=False)
    with monkeypatch.context() as m:
        m.setattr(imported, "_Import", None)           # taken: the batch path would fail at once
        place = import_verdicts(tmp_path / "place.duckdb", path, "p", capped=False)
    assert place == batch
    assert batch["imported"] == len(rows) and batch["status_counts"]["failed"] == 1
    stored = query_rows(tmp_path / "place.duckdb", STORED)
    assert stored == query_rows(tmp_path / "batch.duckdb", STORED)
    assert query_rows(tmp_path / "place.duckdb", RUNS) == query_rows(tmp_path / "batch.duckdb", RUNS)
    # worked by hand: p00000's anchor is c2 (shown as B three times, c1 twice): only (c2, c0) is swapped;
    # the prompts with references: the anchor is the candidate listed last in the file's own rows above,
    # so exactly the one call per prompt with it in slot A is swapped
    anchored = [(r[3], r[4], r[5], r[7]) for r in stored if r[1] == "anchored"]
    assert sum(1 for a in anchored if a[3]) == 1 + 3 and (0, 2, 0, True) in anchored
    assert not any("secret" in (r[19] or "") or "key=" in (r[19] or "") for r in stored)
    assert {r[19] for r in stored} == {"http://gpu1:8000/v1", "http://gpu2:8000/v1", None}
    assert len(stored) == len(rows)
    assert [r[11] for r in stored if r[8] is None and r[12] is None] == ["empty"]
    assert [r[11] for r in stored if r[8] is None and r[12] is not None] == ["failed"]


def test_a_second_file_adds_only_the_new_calls_as_the_batch_path_does(tmp_path, monkeypatch):
    pool_rows = _pool(tmp_path, tmp_path / "batch.duckdb")
    _pool(tmp_path, tmp_path / "place.duckdb")
    rows = _rows(pool_rows)
    first = _write(tmp_path / "first.parquet", [r for r in rows if r["format"] != "numeric100"])
    # the second file: every call of the first again, numeric100's calls new, and binary's under sample 3
    again = [dict(r) for r in rows] + [{**r, "sample": 3} for r in rows if r["format"] == "binary"]
    second = _write(tmp_path / "second.parquet", again)
    for db, in_place in (("batch.duckdb", False), ("place.duckdb", True)):
        import_verdicts(tmp_path / db, first, "p", capped=False, in_place=in_place)
    monkeypatch.setattr(imported, "_Import", None)
    place = import_verdicts(tmp_path / "place.duckdb", second, "p", capped=False)
    monkeypatch.undo()
    batch = import_verdicts(tmp_path / "batch.duckdb", second, "p", capped=False, in_place=False)
    assert place == batch
    n_numeric = sum(r["format"] == "numeric100" for r in rows)
    n_binary = sum(r["format"] == "binary" for r in rows)
    assert batch["imported"] == n_numeric + n_binary and batch["skipped_existing"] == len(rows) - n_numeric
    assert query_rows(tmp_path / "place.duckdb", STORED) == query_rows(tmp_path / "batch.duckdb", STORED)
    # a cell whose calls were all stored gets no cell run: likert5 and tournament have one run each
    assert query_rows(tmp_path / "place.duckdb", RUNS) == query_rows(tmp_path / "batch.duckdb", RUNS)
    # and the same file once more stores nothing and leaves no cell run behind
    runs = query_rows(tmp_path / "place.duckdb", "SELECT count(*) FROM cell_runs")
    assert import_verdicts(tmp_path / "place.duckdb", second, "p", capped=False)["imported"] == 0
    assert query_rows(tmp_path / "place.duckdb", "SELECT count(*) FROM cell_runs") == runs


@pytest.mark.parametrize("fault", ["unknown candidate", "unknown prompt", "repeat", "unknown format", "blank judge",
                                   "negative sample", "missing slot"])
def test_a_file_the_checks_refuse_is_named_by_the_batch_path(tmp_path, fault):
    pool_rows = _pool(tmp_path, tmp_path / "a.duckdb")
    _pool(tmp_path, tmp_path / "b.duckdb")
    rows = _rows(pool_rows)
    at = 40
    if fault == "unknown candidate":
        rows[at].update(candidate_id="nobody")
    elif fault == "unknown prompt":
        rows[at].update(prompt_id="nowhere")
    elif fault == "repeat":
        rows[at] = dict(rows[3])
    elif fault == "unknown format":
        rows[at].update(format="likert7")
    elif fault == "blank judge":
        rows[at].update(judge=" \t")
    elif fault == "negative sample":
        rows[at].update(sample=-1)
    else:
        rows = [r for r in rows if r["format"] != "tournament" or r is rows[-1]] + \
            [{"judge": "alpha", "format": "tournament", "prompt_id": "p00001", "a_id": "c0", "b_id": None, "raw": "A+"}]
    path = _write(tmp_path / "v.parquet", rows)
    with pytest.raises(UserError) as batch:
        import_verdicts(tmp_path / "a.duckdb", path, "p", capped=False, in_place=False)
    with pytest.raises(UserError) as place:
        import_verdicts(tmp_path / "b.duckdb", path, "p", capped=False)
    assert str(place.value) == str(batch.value) and "v.parquet" in str(place.value)
    assert query_rows(tmp_path / "b.duckdb", "SELECT count(*) FROM verdicts") == [(0,)]


@pytest.mark.parametrize("case", ["names in another case", "another case refused", "file_row_number",
                                  "label_probs of another type", "a name read_parquet expands"])
def test_a_file_duckdb_reads_otherwise_than_polars_ends_as_the_batch_path_ends(tmp_path, case):
    """DuckDB matches column names whatever their case, adds file_row_number and expands a glob in the path;
    polars, the batch path, does none of it: such a file is imported, or refused, as the batch path does."""
    pool_rows = _pool(tmp_path, tmp_path / "a.duckdb")
    _pool(tmp_path, tmp_path / "b.duckdb")
    likert = pl.DataFrame([r for r in _rows(pool_rows) if r["format"] == "likert5"]).select(
        "judge", "format", "prompt_id", "candidate_id", "raw")
    path = tmp_path / "v.parquet"
    if case == "names in another case":      # the batch path reads no error, sample 0, greedy: empty calls
        likert = likert.with_columns(pl.when(pl.int_range(pl.len()) < 2).then(None).otherwise(pl.col("raw"))
                                     .alias("raw"), pl.lit("boom").alias("Error"), pl.lit(3).alias("Sample"),
                                     pl.lit("sampled").alias("Decoding"))
    elif case == "another case refused":     # no candidate_id for the batch path: refused
        likert = likert.rename({"candidate_id": "Candidate_ID"}).with_columns(
            pl.lit(None, pl.String).alias("a_id"), pl.lit(None, pl.String).alias("b_id"))
    elif case == "file_row_number":
        likert = likert.with_columns(pl.int_range(pl.len()).alias("file_row_number"))
    elif case == "label_probs of another type":  # null everywhere, but not text: the batch path refuses it
        likert = likert.with_columns(pl.lit(None, pl.Int64).alias("label_probs"))
    else:                                    # run?.parquet would read run1.parquet too, another judge's
        path = tmp_path / "run?.parquet"
        likert.filter(pl.col("judge") == "alpha").with_columns(pl.lit("other").alias("judge")) \
            .write_parquet(tmp_path / "run1.parquet")
    likert.write_parquet(path)
    ends = []
    for db, kw in (("a.duckdb", {"in_place": False}), ("b.duckdb", {})):
        try:
            ends.append(import_verdicts(tmp_path / db, path, "p", capped=False, **kw))
        except UserError as exc:
            ends.append(str(exc))
    assert ends[1] == ends[0]
    assert query_rows(tmp_path / "b.duckdb", STORED) == query_rows(tmp_path / "a.duckdb", STORED)
    if case in ("names in another case", "a name read_parquet expands", "file_row_number"):
        assert ends[0]["imported"] == likert.height and ends[0]["judges"] == sorted(set(likert["judge"]))
    else:
        assert isinstance(ends[0], str) and "v.parquet" in ends[0]
    if case == "names in another case":
        assert ends[0]["status_counts"]["empty"] >= 2 and "failed" not in ends[0]["status_counts"]


def test_label_distributions_and_exported_files_take_the_batch_path(tmp_path, monkeypatch, no_batches):
    pool_rows = _pool(tmp_path, tmp_path / "a.duckdb")
    rows = [r for r in _rows(pool_rows) if r["format"] == "likert5"]
    rows[0]["label_probs"] = json.dumps({"1": 0.25, "2": 0.75})
    path = _write(tmp_path / "v.parquet", rows)
    with pytest.raises(AssertionError, match="batch path was taken"):
        import_verdicts(tmp_path / "a.duckdb", path, "p", capped=False)
    monkeypatch.undo()
    got = import_verdicts(tmp_path / "a.duckdb", path, "p", capped=False)
    assert got["imported"] == len(rows)
    # expected value of {2: 0.75, 1: 0.25} on the 1-5 scale: 1 * 0.25 + 2 * 0.75 = 1.75
    assert (1.75,) in query_rows(tmp_path / "a.duckdb", "SELECT expected FROM verdicts WHERE expected IS NOT NULL")
