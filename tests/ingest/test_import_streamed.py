"""Streamed imports (issue 29 item 2): a verdict or pool file is read, checked and stored a batch at
a time, in one transaction. The guarantees of a whole-file import hold across batch boundaries: the
same rows land as from one batch, a bad row near the end is named by file, line and field and
nothing lands, a call repeated in two batches is refused with both lines. Batches are forced small
(batch_rows, or JUDGEAUDIT_IMPORT_BATCH for the command line) so that a few rows cross them."""

import json
import subprocess

import polars as pl
import pytest

from ingest import UserError
from ingest.files import table_batches, verdict_batches
from ingest.settings import IMPORT_BATCH as BATCH_ENV
from ingest.scoring import import_verdicts
from ingest.store import import_pool
from tests.app.test_cli import EXE, run
from tests.conftest import db_snapshot, query_rows
from tests.fixtures import synthetic_pool, synthetic_verdicts, write_jsonl

STORED = ("SELECT j.name, f.name, v.decoding, v.prompt_idx, v.a_idx, v.b_idx, v.sample, v.swapped, v.raw, "
          "v.answer, v.value, v.status, v.error, v.answer_probs, v.expected "
          "FROM verdicts v JOIN judges j USING (judge_id) JOIN formats f USING (format_id) ORDER BY ALL")

# p00000 has no references: its anchor is the candidate shown as B most often in the whole file.
# Shown as B: c1 twice (the file's first two rows), c2 three times and c0 once (its last rows): the
# anchor is c2 (cand_idx 2), so the call (c2, c0) has the anchor in slot A and is swapped. The first
# batch alone would say c1.
ANCHORED = [
    {"judge": "j", "format": "anchored", "prompt_id": "p00000", "a_id": "c0", "b_id": "c1", "raw": "A+"},
    {"judge": "j", "format": "anchored", "prompt_id": "p00000", "a_id": "c0", "b_id": "c1", "raw": "B+", "sample": 1},
    {"judge": "j", "format": "anchored", "prompt_id": "p00000", "a_id": "c0", "b_id": "c2", "raw": "TIE"},
    {"judge": "j", "format": "anchored", "prompt_id": "p00000", "a_id": "c1", "b_id": "c2", "raw": "A++"},
    {"judge": "j", "format": "anchored", "prompt_id": "p00000", "a_id": "c2", "b_id": "c0", "raw": "B++"},
    {"judge": "j", "format": "anchored", "prompt_id": "p00000", "a_id": "c0", "b_id": "c2", "raw": "A+", "sample": 1},
]


def _pool(tmp_path, db, n=9, seed=5):
    rows = synthetic_pool(n, k_range=(3, 5), seed=seed)
    for r in rows:                       # the first prompt without references: anchored by votes
        if r["prompt_id"] == "p00000":
            r["reference"] = None
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", rows), "p")
    return rows


def _verdicts(rows, seed=5):
    out = ANCHORED[:2] + synthetic_verdicts(rows, seed=seed) + ANCHORED[2:]
    out[3]["label_probs"] = {"1": 0.25, "2": 0.75} if out[3]["format"] == "likert5" else None
    return out


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_batches_store_the_same_rows_as_one(tmp_path, suffix):
    rows = _pool(tmp_path, tmp_path / "one.duckdb")
    _pool(tmp_path, tmp_path / "many.duckdb")
    verdicts = _verdicts(rows)
    path = tmp_path / f"v{suffix}"
    if suffix == ".jsonl":
        write_jsonl(path, verdicts)
    else:
        pl.DataFrame([{**v, "label_probs": json.dumps(v["label_probs"]) if v.get("label_probs") else None}
                      for v in verdicts], infer_schema_length=None).write_parquet(path, row_group_size=10)
    n_batches = sum(1 for _ in verdict_batches(path, rows=7))
    assert n_batches >= len(verdicts) // 10 > 20     # the file does cross many batch boundaries
    one = import_verdicts(tmp_path / "one.duckdb", path, "p", batch_rows=10 ** 6)
    many = import_verdicts(tmp_path / "many.duckdb", path, "p", batch_rows=7)
    assert many == one and one["imported"] == len(verdicts)
    stored = query_rows(tmp_path / "many.duckdb", STORED)
    assert stored == query_rows(tmp_path / "one.duckdb", STORED)
    # the anchored calls: the anchor of p00000 is c2 (B three times against c1 twice), whose cand_idx is 2
    anchored = [(r[4], r[5], r[7]) for r in stored if r[1] == "anchored"]
    assert sorted(set(anchored)) == [(0, 1, False), (0, 2, False), (1, 2, False), (2, 0, True)]
    # one cell run per (judge, format) however many batches brought its rows
    runs = query_rows(tmp_path / "many.duckdb", "SELECT count(*), count(DISTINCT (judge_id, format_id)) "
                      "FROM cell_runs WHERE status = 'finished'")
    assert one["judges"] == ["alpha", "beta", "j"] and runs == [(2 * 4 + 1, 2 * 4 + 1)]   # j: anchored only
    # again, in batches: nothing new
    assert import_verdicts(tmp_path / "many.duckdb", path, "p", batch_rows=7)["skipped_existing"] == len(verdicts)


def test_a_bad_line_near_the_end_is_named_and_nothing_lands(tmp_path, db):
    rows = _pool(tmp_path, db)
    verdicts = _verdicts(rows)
    before = db_snapshot(db)
    bad = max(i for i, v in enumerate(verdicts) if "candidate_id" in v)   # the last pointwise row; line bad + 1
    assert bad > len(verdicts) - 20 and bad > 60
    for broken, message in (
            ({**verdicts[bad], "candidate_id": "nobody"}, f"line {bad + 1}, field 'candidate_id': unknown candidate"),
            ({**verdicts[bad], "sample": -3}, f"line {bad + 1}, field 'sample': must be a non-negative"),
            ('{"judge": "j", "format": ', f"line {bad + 1}: not valid JSON")):
        path = write_jsonl(tmp_path / "bad.jsonl", verdicts[:bad] + [broken] + verdicts[bad + 1:])
        with pytest.raises(UserError, match=message):
            import_verdicts(db, path, "p", batch_rows=5)
        assert db_snapshot(db) == before            # the batches before it rolled back
    # Parquet: rows are numbered from 1
    frame = pl.DataFrame(verdicts[:bad] + [{**verdicts[bad], "prompt_id": "p99999"}] + verdicts[bad + 1:],
                         infer_schema_length=None).drop("label_probs")
    frame.write_parquet(tmp_path / "bad.parquet", row_group_size=8)
    with pytest.raises(UserError, match=rf"bad.parquet, row {bad + 1}, field 'prompt_id': unknown prompt 'p99999'"):
        import_verdicts(db, tmp_path / "bad.parquet", "p", batch_rows=5)
    assert db_snapshot(db) == before


def test_a_call_repeated_in_two_batches_is_refused(tmp_path, db):
    rows = _pool(tmp_path, db)
    verdicts = _verdicts(rows)
    repeat = dict(verdicts[1], raw="another answer")   # the same call as line 2, near the end
    path = write_jsonl(tmp_path / "v.jsonl", verdicts[:-1] + [repeat, verdicts[-1]])
    before = db_snapshot(db)
    with pytest.raises(UserError, match=rf"line {len(verdicts)}: the same call .* appears twice; first at line 2$"):
        import_verdicts(db, path, "p", batch_rows=4)
    assert db_snapshot(db) == before
    # stored before, then again in the file of a later import: skipped, not refused
    assert import_verdicts(db, write_jsonl(tmp_path / "w.jsonl", verdicts), "p", batch_rows=4)["imported"] == len(verdicts)
    again = import_verdicts(db, write_jsonl(tmp_path / "x.jsonl", verdicts[5:] + verdicts[:5]), "p", batch_rows=4)
    assert again["imported"] == 0 and again["skipped_existing"] == len(verdicts)


def test_jsonl_batches_keep_the_file_lines(tmp_path, monkeypatch):
    monkeypatch.setattr("ingest.files._streams.JSONL_BYTES_PER_ROW", 10)   # the first block: 10 bytes
    lines = ['{"a": 1}', "", '{"a": 2}', "   ", '{"a": 3, "b": "x"}', '{"a": 4}', "", '{"a": 5}']
    path = write_jsonl(tmp_path / "t.jsonl", lines)
    tables = list(table_batches(path, capped=False, rows=1))
    assert len(tables) > 1
    got = [(int(line), a) for t in tables for line, a in zip(t.lines, t.frame["a"].to_list())]
    assert got == [(1, 1), (3, 2), (5, 3), (6, 4), (8, 5)]
    empty = write_jsonl(tmp_path / "e.jsonl", ["", "  "])
    with pytest.raises(UserError, match="empty file"):
        list(table_batches(empty, capped=False, rows=1))
    bad = tmp_path / "u.jsonl"
    bad.write_bytes(b'{"a": 1}\n{"a": 2}\n{"a": "\xff"}\n')
    with pytest.raises(UserError, match=r"u.jsonl, line 3: not valid UTF-8 \(byte 0xff at offset 25\)"):
        list(table_batches(bad, capped=False, rows=1))


def test_cli_imports_in_batches(tmp_path, db, monkeypatch):
    """The command line's path, in batches of 3 rows: the same summary and rows as in one batch."""
    rows = synthetic_pool(10, seed=8)
    pool, verdicts = write_jsonl(tmp_path / "pool.jsonl", rows), synthetic_verdicts(rows, seed=8)
    path = tmp_path / "v.parquet"
    pl.DataFrame(verdicts, infer_schema_length=None).write_parquet(path, row_group_size=5)
    whole = tmp_path / "whole.duckdb"
    import_pool(whole, pool, "s")
    expected = import_verdicts(whole, path, "s", batch_rows=10 ** 6)
    monkeypatch.setenv(BATCH_ENV, "3")
    run("import-pool", pool, "--pool", "s")
    done = json.loads(run("import-verdicts", path, "--pool", "s", "--json").stdout)
    assert done == expected
    assert query_rows(db, STORED) == query_rows(whole, STORED)


# ---- pool files ------------------------------------------------------------------------------------

POOL_STORED = ("SELECT p.prompt_idx, p.prompt_id, p.prompt, c.cand_idx, c.candidate_id, c.position, c.response, "
               "c.reference, c.model, c.split FROM candidates c JOIN prompts p USING (pool_id, prompt_idx) ORDER BY ALL")


def _interleaved_pool(n_prompts=7, seed=2):
    """A pool whose prompts come back later in the file (p3's candidates at its start and its end), so
    a prompt's position count and first line cross batches."""
    rows = synthetic_pool(n_prompts, k_range=(2, 4), seed=seed)
    late = [r for r in rows if r["prompt_id"] == "p00003"]
    rows = [r for r in rows if r["prompt_id"] != "p00003"]
    return late[:1] + rows + late[1:] + [{**late[0], "candidate_id": "extra", "split": "heldout"}]


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_pool_batches_store_the_same_pool_as_one(tmp_path, suffix):
    rows = _interleaved_pool()
    path = tmp_path / f"pool{suffix}"
    if suffix == ".jsonl":
        write_jsonl(path, rows)
    else:
        pl.DataFrame(rows, infer_schema_length=None).write_parquet(path, row_group_size=3)
    one = import_pool(tmp_path / "one.duckdb", path, "p", batch_rows=10 ** 6)
    many = import_pool(tmp_path / "many.duckdb", path, "p", batch_rows=2)
    assert many == one
    assert (one["n_prompts"], one["n_candidates"]) == (7, len(rows))
    stored = query_rows(tmp_path / "many.duckdb", POOL_STORED)
    assert stored == query_rows(tmp_path / "one.duckdb", POOL_STORED)
    # p00003 is the first prompt met (index 0): its first candidate at row 0, the others at the end,
    # positions 0, 1, 2, ... in file order
    p3 = [(r[3], r[4], r[5]) for r in stored if r[1] == "p00003"]
    n = len(rows)
    assert p3[0] == (0, "c0", 0) and p3[-1] == (n - 1, "extra", len(p3) - 1)
    assert [r[2] for r in p3] == list(range(len(p3))) and all(r[0] == 0 for r in stored if r[1] == "p00003")


def test_pool_refusals_across_batches(tmp_path, db):
    rows = _interleaved_pool()
    n = len(rows)
    import_pool(db, write_jsonl(tmp_path / "other.jsonl", synthetic_pool(2)), "other")
    before = db_snapshot(db)
    cases = (
        (rows + [dict(rows[2])], rf"line {n + 1}, field 'candidate_id': duplicate candidate '{rows[2]['candidate_id']}' "
                                 rf"for prompt '{rows[2]['prompt_id']}' \(first at line 3\)"),
        (rows + [{**rows[0], "candidate_id": "other", "prompt": "changed"}],
         rf"line {n + 1}, field 'prompt': prompt 'p00003' has a different text here than at line 1"),
        (rows[:-1] + [{**rows[-1], "response": None}], rf"line {n}, field 'response': missing or null"),
        # a category on the prompt's candidate past its first batch, none at its first line
        (rows + [{**rows[0], "candidate_id": "other", "category": "math"}],
         rf"line {n + 1}, field 'category': prompt 'p00003' has category 'math' here but none at line 1"))
    for bad_rows, message in cases:
        with pytest.raises(UserError, match=message):
            import_pool(db, write_jsonl(tmp_path / "bad.jsonl", bad_rows), "p", batch_rows=2)
        assert db_snapshot(db) == before


def test_categories_in_batches(tmp_path, db):
    """A prompt's category is checked against its first line, in whatever batch either is read."""
    rows = [{**r, "category": f"cat-{r['prompt_id'][-1]}"} for r in _interleaved_pool()]
    path = write_jsonl(tmp_path / "pool.jsonl", rows)
    one = import_pool(tmp_path / "one.duckdb", path, "p", batch_rows=10 ** 6)
    assert import_pool(tmp_path / "many.duckdb", path, "p", batch_rows=2) == one
    got = query_rows(tmp_path / "many.duckdb", "SELECT prompt_idx, prompt_id, category FROM prompts ORDER BY 1")
    assert got == query_rows(tmp_path / "one.duckdb", "SELECT prompt_idx, prompt_id, category FROM prompts ORDER BY 1")
    assert got[0] == (0, "p00003", "cat-3") and len(got) == 7
    # the last row (p00003's "extra") names another category: refused, naming it against line 1
    bad = rows[:-1] + [{**rows[-1], "category": "cat-9"}]
    with pytest.raises(UserError, match=rf"line {len(rows)}, field 'category': prompt 'p00003' has category "
                                        r"'cat-9' here but 'cat-3' at line 1"):
        import_pool(db, write_jsonl(tmp_path / "bad.jsonl", bad), "p", batch_rows=2)


def test_ultrafeedback_in_batches(tmp_path):
    """Prompts without an id are named by their row in the file, whatever batch they are read in."""
    rows = [{"instruction": f"Task {i}", "completions": [{"model": f"m{j}", "response": f"r{i}{j}",
                                                           "overall_score": float(j)} for j in range(2)]}
            for i in range(5)]
    path = write_jsonl(tmp_path / "uf.jsonl", rows)
    one = import_pool(tmp_path / "one.duckdb", path, "uf", batch_rows=10 ** 6)
    many = import_pool(tmp_path / "many.duckdb", path, "uf", batch_rows=1)
    assert many == one and one["layout"] == "ultrafeedback" and one["n_candidates"] == 10
    stored = query_rows(tmp_path / "many.duckdb", POOL_STORED)
    assert stored == query_rows(tmp_path / "one.duckdb", POOL_STORED)
    assert sorted({r[1] for r in stored}) == [f"uf-{i}" for i in range(1, 6)]


def _big_pool_file(path, n_prompts: int, k: int = 10):
    ids = pl.int_range(0, n_prompts * k, eager=True)
    pl.DataFrame({"prompt_id": "q" + (ids // k).cast(pl.String), "candidate_id": "m" + (ids % k).cast(pl.String)}) \
        .with_columns(pl.format("prompt {}", "prompt_id").alias("prompt"),
                      pl.format("answer {} to {}", "candidate_id", "prompt_id").alias("response")) \
        .write_parquet(path)
    return path


def _cli_imports_a_big_pool(tmp_path, db, monkeypatch, n_prompts: int, batch: int | None):
    path = _big_pool_file(tmp_path / "big.parquet", n_prompts)
    if batch:
        monkeypatch.setenv(BATCH_ENV, str(batch))
    proc = subprocess.run([EXE, "import-pool", str(path), "--pool", "big", "--json"], capture_output=True, text=True,
                          timeout=3600)                 # 10M rows on a loaded 2-core machine: minutes
    assert proc.returncode == 0, proc.stderr
    shape = json.loads(proc.stdout)
    n = n_prompts * 10
    assert shape == {"pool": "big", "layout": "rows", "replaced_verdicts": 0, "n_prompts": n_prompts,
                     "n_candidates": n, "k_min": 10, "k_max": 10, "k_mean": 10.0}
    # every candidate stored once, numbered as the file orders them: row i is prompt i // 10, position i % 10
    got = query_rows(db, "SELECT count(*), count(DISTINCT cand_idx), min(cand_idx), max(cand_idx), "
                         "sum(CASE WHEN prompt_idx = cand_idx // 10 AND position = cand_idx % 10 "
                         "AND candidate_id = 'm' || (cand_idx % 10) THEN 1 ELSE 0 END) FROM candidates")
    assert got == [(n, n, 0, n - 1, n)]
    assert query_rows(db, "SELECT count(*), min(prompt_idx), max(prompt_idx) FROM prompts "
                          "WHERE prompt_id = 'q' || prompt_idx") == [(n_prompts, 0, n_prompts - 1)]


def test_cli_imports_a_pool_file_in_batches(tmp_path, db, monkeypatch):
    """The 10M-row case's code path at 3,000 rows, in batches of 700 (prompts cut across batches)."""
    _cli_imports_a_big_pool(tmp_path, db, monkeypatch, 300, 700)


@pytest.mark.slow
def test_cli_imports_a_10m_row_pool_file(tmp_path, db, monkeypatch):
    """Issue 29: a 10M-row pool file (1M prompts x 10 candidates) through the command line, streamed
    in the default batches."""
    _cli_imports_a_big_pool(tmp_path, db, monkeypatch, 1_000_000, None)
