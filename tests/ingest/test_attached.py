"""attach-verdicts / detach-verdicts (issue 29): Parquet verdicts registered in place and audited where
they lie. The same rows imported and attached print the same `--json`; bad rows are refused up front
with their file and row; a file that changes after attaching is refused by name until attached again."""

from __future__ import annotations

import json
import re
import shutil

import polars as pl
import pytest

from app.cli import main
from audit import AuditError, audit_cells as cells
from ingest import UserError
from ingest.scoring import attach_verdicts, import_verdicts
from ingest.store import detach_verdicts, import_labels, import_pool
from tests.conftest import db_snapshot, query_rows
from tests.fixtures import synthetic_pool, synthetic_verdicts, write_jsonl

COMMANDS = {"audit": [], "bias": ["--n-boot", "200"], "levels": [], "rank": [], "consistency": [],
            "calibrate": ["--n-boot", "100"]}


def _files(tmp_path, n_prompts=12, seed=3):
    rows = synthetic_pool(n_prompts, seed=seed)
    verdicts = synthetic_verdicts(rows, seed=seed)
    pool = write_jsonl(tmp_path / "pool.jsonl", rows)
    jsonl = write_jsonl(tmp_path / "verdicts.jsonl", verdicts)
    frame = pl.DataFrame(verdicts)
    hive = tmp_path / "shards"
    for (judge, fmt), part in frame.group_by("judge", "format"):   # a pipeline's shards: judge=J/format=F/
        folder = hive / f"judge={judge}" / f"format={fmt}"
        folder.mkdir(parents=True)
        half = part.height // 2
        part.drop("judge", "format")[:half].write_parquet(folder / "part-0.parquet")
        part.drop("judge", "format")[half:].write_parquet(folder / "part-1.parquet")
    # pairwise human labels for calibrate: the first two candidates of each prompt, by reference
    labels = []
    by_prompt = {}
    for r in rows:
        by_prompt.setdefault(r["prompt_id"], []).append(r)
    for pid, cands in by_prompt.items():
        a, b = cands[0], cands[1]
        ra, rb = a["reference"] or 0, b["reference"] or 0
        labels.append({"prompt_id": pid, "a_id": a["candidate_id"], "b_id": b["candidate_id"],
                       "label": "A" if ra > rb else "B" if rb > ra else "tie"})
    return pool, jsonl, hive, write_jsonl(tmp_path / "labels.jsonl", labels), frame


def _json(capsys, db, command, pool="s"):
    capsys.readouterr()
    assert main([command, "--pool", pool, "--json", "--db", str(db), *COMMANDS.get(command, [])]) == 0
    return capsys.readouterr().out


def test_attached_and_imported_pools_print_the_same_json(tmp_path, capsys):
    pool, jsonl, hive, labels, _ = _files(tmp_path)
    imported, attached = tmp_path / "imported.duckdb", tmp_path / "attached.duckdb"
    for db in (imported, attached):
        import_pool(db, pool, "s")
        import_labels(db, labels, "s")
    import_verdicts(imported, jsonl, "s")
    before = attached.stat().st_size
    out = attach_verdicts(attached, [str(hive / "**" / "*.parquet")], "s", hive=True)
    assert out["files"] == 16 and out["rows"] == query_rows(imported, "SELECT count(*) FROM verdicts")[0][0]
    assert query_rows(attached, "SELECT count(*) FROM verdicts") == [(0,)]     # nothing copied
    # what grows: the cell runs (one per cell, holding the files and the parsed answers), the rows' ids
    # (attached_ids, schema/026), judges and formats; DuckDB writes each table a checkpoint touches into a
    # 256 KiB block of its own, and these few hundred rows' ids fit one: 4 x 256 KiB here
    assert attached.stat().st_size - before <= 4 * 2**18
    # one mapping row per attached row, its ids those the import gave the same calls (prompt, candidates, slot)
    ids = "SELECT pool_id, prompt_idx, a_idx, coalesce(b_idx, -1), swapped FROM {}"
    assert query_rows(attached, "SELECT count(*) FROM attached_ids") == [(out["rows"],)]
    assert sorted(query_rows(attached, ids.format("attached_ids"))) == sorted(query_rows(imported, ids.format("verdicts")))
    for command in COMMANDS:
        expect = _json(capsys, imported, command)
        doc = json.loads(expect)
        assert any(isinstance(v, list) and v for v in doc.values()), (command, expect[:200])   # numbers to compare
        assert _json(capsys, attached, command) == expect, command


def test_flat_files_with_the_verdict_files_columns_attach_too(tmp_path, capsys):
    pool, jsonl, _, _, frame = _files(tmp_path)
    flat = tmp_path / "flat"
    flat.mkdir()
    frame[:300].write_parquet(flat / "a.parquet")
    frame[300:].write_parquet(flat / "b.parquet")
    imported, attached = tmp_path / "imported.duckdb", tmp_path / "attached.duckdb"
    for db in (imported, attached):
        import_pool(db, pool, "s")
    import_verdicts(imported, jsonl, "s")
    assert main(["attach-verdicts", str(flat / "*.parquet"), "--pool", "s", "--db", str(attached)]) == 0
    assert _json(capsys, attached, "audit") == _json(capsys, imported, "audit")


@pytest.mark.parametrize("change, message", [
    ({"prompt_id": "p99999"}, "field 'prompt_id': unknown prompt 'p99999' in pool 's'"),
    ({"candidate_id": "c9"}, "field 'candidate_id': unknown candidate 'c9' for prompt"),
    ({"decoding": "beam"}, "field 'decoding': one of greedy, constrained, not 'beam'"),
])
def test_a_bad_row_is_refused_with_its_file_and_row(tmp_path, change, message):
    pool, _, _, _, frame = _files(tmp_path)
    db = tmp_path / "a.duckdb"
    import_pool(db, pool, "s")
    point = frame.filter(pl.col("format") == "likert5")
    row = 7                                                   # 0-based: the file's row 8
    bad = point.with_columns(**{k: pl.when(pl.int_range(pl.len()) == row).then(pl.lit(v)).otherwise(
        pl.col(k) if k in point.columns else pl.lit(None, pl.String)) for k, v in change.items()})
    bad.write_parquet(tmp_path / "bad.parquet")
    before = db_snapshot(db)
    with pytest.raises(UserError, match=f"bad.parquet, row 8, {message}"):
        attach_verdicts(db, [str(tmp_path / "bad.parquet")], "s")
    assert db_snapshot(db) == before                          # nothing attached


def test_a_call_held_twice_is_refused(tmp_path):
    pool, jsonl, _, _, frame = _files(tmp_path)
    db = tmp_path / "a.duckdb"
    import_pool(db, pool, "s")
    import_verdicts(db, jsonl, "s")                           # the same calls stored already
    frame.filter(pl.col("format") == "binary").write_parquet(tmp_path / "again.parquet")
    with pytest.raises(UserError, match="format 'binary', prompt 'p0000.' is held 2 times"):
        attach_verdicts(db, [str(tmp_path / "again.parquet")], "s")


def test_a_changed_or_removed_file_is_refused_by_name_until_attached_again(tmp_path, capsys):
    pool, jsonl, hive, _, _ = _files(tmp_path)
    db = tmp_path / "a.duckdb"
    import_pool(db, pool, "s")
    pattern = [str(hive / "**" / "*.parquet")]
    attach_verdicts(db, pattern, "s", hive=True)
    n = cells(db, "s")["n_verdicts"].sum()
    shard = hive / "judge=alpha" / "format=binary" / "part-0.parquet"
    keep = pl.read_parquet(shard)
    keep[:-1].write_parquet(shard)                            # one row fewer
    with pytest.raises(AuditError, match=f"{shard}: attached to pool 's', has changed"):
        cells(db, "s")
    assert main(["audit", "--pool", "s", "--db", str(db)]) == 1
    assert str(shard) in capsys.readouterr().err
    attach_verdicts(db, pattern, "s", hive=True)              # attached again: read as it is now
    assert cells(db, "s")["n_verdicts"].sum() == n - 1
    # the same size and modification time, another row count (the footer's): still caught. The record
    # is edited instead of the file: a file of another row count with the same size and time is rare.
    import duckdb
    with duckdb.connect(str(db)) as con:
        con.execute("UPDATE cell_runs SET attached = {'files': list_transform(attached.files, lambda f: CASE WHEN "
                    "f.path = $p THEN struct_update(f, n_rows := f.n_rows + 1) ELSE f END), "
                    "'parses': attached.parses} WHERE attached IS NOT NULL", {"p": str(shard)})
    with pytest.raises(AuditError, match=f"{shard}: attached to pool 's', has changed \\(its row count\\)"):
        cells(db, "s")
    attach_verdicts(db, pattern, "s", hive=True)
    assert cells(db, "s")["n_verdicts"].sum() == n - 1
    shutil.rmtree(hive / "judge=beta")
    with pytest.raises(AuditError, match="is gone since"):
        cells(db, "s")
    out = detach_verdicts(db, "s")
    assert out == {"pool": "s", "files": 16, "cells": 8}
    assert cells(db, "s").height == 0                         # the pool is back to its stored verdicts
    assert query_rows(db, "SELECT count(*) FROM cell_runs WHERE attached IS NOT NULL OR source = 'attach'") == [(0,)]


def test_a_deleted_pool_takes_its_attached_source_along(tmp_path):
    pool, _, hive, _, _ = _files(tmp_path)
    db = tmp_path / "a.duckdb"
    import_pool(db, pool, "s")
    attach_verdicts(db, [str(hive / "**" / "*.parquet")], "s", hive=True)
    import_pool(db, pool, "s", replace=True)
    assert cells(db, "s").height == 0
    assert query_rows(db, "SELECT count(*) FROM cell_runs WHERE attached IS NOT NULL OR source = 'attach'") == [(0,)]


def test_an_import_into_an_attached_cell_is_refused(tmp_path):
    pool, jsonl, hive, _, _ = _files(tmp_path)
    db = tmp_path / "a.duckdb"
    import_pool(db, pool, "s")
    attach_verdicts(db, [str(hive / "judge=alpha" / "**" / "*.parquet")], "s", hive=True)
    before = db_snapshot(db)
    with pytest.raises(UserError, match="judge 'alpha', format 'binary' of pool 's' is read from attached files"):
        import_verdicts(db, jsonl, "s")
    assert db_snapshot(db) == before
    detach_verdicts(db, "s")
    assert import_verdicts(db, jsonl, "s")["imported"] > 0


def _checkpointed_size(db) -> int:
    import duckdb
    with duckdb.connect(str(db)) as con:
        con.execute("CHECKPOINT")
    return db.stat().st_size


@pytest.mark.parametrize("scored", [False, True], ids=["fresh", "scored"])
def test_attaching_grows_the_database_by_a_block_a_table_it_writes(tmp_path, scored):
    # on the file after a checkpoint: DuckDB writes each table a checkpoint touches into a 256 KiB block of its
    # own. On a fresh database (the judges and formats new) 4 tables are touched: cell_runs, attached_ids (the
    # rows' ids, schema/026: a few hundred rows fit one block), judges, formats = 1 MiB; on one whose pool 't'
    # is scored by the same judges, cell_runs and attached_ids alone = 512 KiB. 016's tables cost 2.25 MiB.
    pool, jsonl, hive, _, _ = _files(tmp_path)
    db = tmp_path / "a.duckdb"
    import_pool(db, pool, "s")
    if scored:
        import_pool(db, pool, "t")
        import_verdicts(db, jsonl, "t")
    before = _checkpointed_size(db)
    attach_verdicts(db, [str(hive / "**" / "*.parquet")], "s", hive=True)
    grew = _checkpointed_size(db) - before
    assert grew <= (2 if scored else 4) * 2**18, grew
    # attached again (it replaces what was attached: the id mark, the cell runs and the ids), and after a detach
    for again in (False, True):
        if again:
            detach_verdicts(db, "s")
            assert query_rows(db, "SELECT count(*) FROM attached_ids") == [(0,)]
        before = _checkpointed_size(db)
        attach_verdicts(db, [str(hive / "**" / "*.parquet")], "s", hive=True)
        assert _checkpointed_size(db) - before <= 4 * 2**18
    # the id mark: a cell run id handed to an attach is never handed out again once detached
    ids = {r[0] for r in query_rows(db, "SELECT cell_run_id FROM cell_runs WHERE source = 'attach'")}
    detach_verdicts(db, "s")
    import_verdicts(db, jsonl, "s")
    new = {r[0] for r in query_rows(db, "SELECT cell_run_id FROM cell_runs WHERE pool_id = 1")}
    assert new and not new & ids and min(new) > max(ids)


def test_a_query_about_one_cell_reads_only_the_files_that_can_hold_it(tmp_path):
    # 6 pointwise cells (2 judges x binary, likert5, numeric100, as hive folders), 2 shards each: a read of one
    # cell (the audit's per-cell query) opens that cell's 2 files, not all 12 (DuckDB's join filter on the path)
    pool, _, hive, _, frame = _files(tmp_path)
    db = tmp_path / "a.duckdb"
    import_pool(db, pool, "s")
    point = str(hive / "**" / "format=[bln]*" / "*.parquet")          # binary, likert5, numeric100: one column set
    out = attach_verdicts(db, [point], "s", hive=True)
    import duckdb

    from ingest.store.connection import verdict_source
    with duckdb.connect(str(db), read_only=True) as con:
        verdict_source(con)
        judge_id, format_id, judge, fmt = con.execute("SELECT judge_id, format_id, judge, format FROM attached_judgings "
                                                      "ORDER BY judge, format LIMIT 1").fetchone()
        query = "SELECT count(*) FROM verdict_source WHERE judge_id = $j AND format_id = $f"
        n = con.execute(query, {"j": judge_id, "f": format_id}).fetchone()[0]
        plan = con.execute("EXPLAIN ANALYZE " + query, {"j": judge_id, "f": format_id}).fetchall()[0][1]
    assert (judge, fmt) == ("alpha", "binary") and out["files"] == 12                # 2 judges x 3 formats x 2
    assert n == frame.filter((pl.col("judge") == judge) & (pl.col("format") == fmt)).height
    assert "Total Files Read: 2" in plan, plan


def _shards_as_jsonl(hive, path):
    """The hive shards' rows as they are now, one verdict file (judge and format from the folders)."""
    parts = [pl.read_parquet(f).with_columns(pl.lit(f.parent.parent.name.split("=")[1]).alias("judge"),
                                              pl.lit(f.parent.name.split("=")[1]).alias("format"))
             for f in sorted(hive.glob("**/*.parquet"))]
    return write_jsonl(path, pl.concat(parts, how="diagonal").to_dicts())


def test_the_ids_are_mapped_again_when_a_file_changes_and_go_with_a_detach(tmp_path, capsys):
    # the mapping (attached_ids) is made when attached and kept: a file rewritten since, with as many rows
    # in another order and other answers, is refused until attached again, which maps it anew; then every
    # command prints what the same rows imported print. Kept ids would pair the reversed rows' answers with
    # the old rows' candidates (row i of the file is no longer the call it was), so the audit would differ.
    pool, _, hive, _, _ = _files(tmp_path)
    db = tmp_path / "a.duckdb"
    import_pool(db, pool, "s")
    pattern = [str(hive / "**" / "*.parquet")]
    attach_verdicts(db, pattern, "s", hive=True)
    first = _json(capsys, db, "audit")
    shard = hive / "judge=alpha" / "format=likert5" / "part-0.parquet"
    old = pl.read_parquet(shard)
    new = old.reverse().with_columns(pl.Series("raw", ["5"] * (old.height // 2) + ["1"] * (old.height - old.height // 2)))
    new.write_parquet(shard)
    assert new.height == old.height and new["candidate_id"].to_list() != old["candidate_id"].to_list()
    with pytest.raises(AuditError, match=f"{shard}: attached to pool 's', has changed"):
        cells(db, "s")
    attach_verdicts(db, pattern, "s", hive=True)
    imported = tmp_path / "imported.duckdb"
    import_pool(imported, pool, "s")
    import_verdicts(imported, _shards_as_jsonl(hive, tmp_path / "now.jsonl"), "s")
    for command in ("audit", "levels", "rank"):
        assert _json(capsys, db, command) == _json(capsys, imported, command), command
    assert _json(capsys, db, "audit") != first
    n = query_rows(db, "SELECT count(*) FROM attached_ids")
    assert n == query_rows(imported, "SELECT count(*) FROM verdicts")
    detach_verdicts(db, "s")                                   # the mapping goes with the attach
    assert query_rows(db, "SELECT count(*) FROM attached_ids") == [(0,)]
    attach_verdicts(db, pattern, "s", hive=True)
    assert query_rows(db, "SELECT count(*) FROM attached_ids") == n
    assert _json(capsys, db, "audit") == _json(capsys, imported, "audit")


@pytest.mark.parametrize("before, undo, refusal", [
    # an attach made before schema/026 kept no ids: readers refuse the pool by name (no row goes missing)
    ("026", "DELETE FROM attached_ids", "pool 's': its files were attached before attach-verdicts kept"),
    # one made before schema/030 kept the rows' ids but not their decoding, sample and value (null after the
    # migration adds the columns): readers refuse the pool by name, as they would read no value for it
    ("030", "UPDATE attached_ids SET decoding = NULL, sample = NULL, value = NULL",
     "pool 's': its files were attached before attach-verdicts kept their rows' ids and values"),
])
def test_files_attached_before_the_schema_kept_their_rows_are_refused_until_attached_again(tmp_path, before, undo,
                                                                                           refusal):
    pool, _, hive, _, _ = _files(tmp_path)
    db = tmp_path / "a.duckdb"
    import_pool(db, pool, "s")
    pattern = [str(hive / "**" / "*.parquet")]
    attach_verdicts(db, pattern, "s", hive=True)
    n = cells(db, "s")["n_verdicts"].sum()
    import duckdb
    with duckdb.connect(str(db)) as con:
        con.execute(undo)
    with pytest.raises(AuditError, match=refusal):
        cells(db, "s")
    attach_verdicts(db, pattern, "s", hive=True)
    assert cells(db, "s")["n_verdicts"].sum() == n


def test_the_values_kept_are_the_files_rows_parsed(tmp_path):
    # each attached row's kept decoding, sample and value (schema/030) are what the same row imported holds:
    # samples and decodings of their own in the files (a call asked 3 times, some constrained), answers that do
    # not parse (value null) and rows without an answer; the audit reads these values alone (no file is opened
    # for them), so its numbers are the imported pool's
    rows = synthetic_pool(6, k_range=(3, 3), seed=2)
    pool = write_jsonl(tmp_path / "pool.jsonl", rows)
    raws = ["4", "2", "I cannot rate this", None, "5", "Score: 3"]
    lines = [{"prompt_id": r["prompt_id"], "candidate_id": r["candidate_id"], "judge": "j", "format": "likert5",
              "sample": s, "decoding": "constrained" if i % 4 == 0 else "greedy", "raw": raws[(i + s) % len(raws)]}
             for i, r in enumerate(rows) for s in range(3)]
    out = tmp_path / "shards" / "part-0.parquet"
    out.parent.mkdir()
    pl.DataFrame(lines).write_parquet(out)
    imported, attached = tmp_path / "i.duckdb", tmp_path / "a.duckdb"
    for db in (imported, attached):
        import_pool(db, pool, "s")
    import_verdicts(imported, write_jsonl(tmp_path / "v.jsonl", lines), "s")
    attach_verdicts(attached, [str(out)], "s")
    keys = "SELECT prompt_idx, a_idx, decoding, sample, value FROM {} ORDER BY ALL"
    kept = query_rows(attached, keys.format("attached_ids"))
    assert len(kept) == 6 * 3 * 3 and kept == query_rows(imported, keys.format("verdicts"))
    # by hand: 54 rows cycle through the 6 answers, 9 each; "4", "2", "5", "Score: 3" parse (36 values),
    # "I cannot rate this" does not and None has no answer (18 nulls)
    assert sum(v is not None for *_, v in kept) == 36
    assert sorted({v for *_, v in kept if v is not None}) == [2.0, 3.0, 4.0, 5.0]
    assert {(d, s) for _, _, d, s, _ in kept} == {(d, s) for d in ("constrained", "greedy") for s in range(3)}
    expect = cells(imported, "s")
    assert expect.height == 4          # greedy and constrained, each single and mean
    assert cells(attached, "s").equals(expect)


def test_each_judgings_kept_rows_lie_in_row_groups_of_their_own(tmp_path):
    # 2 judgings of 130,000 rows each (more than a DuckDB row group's 122,880): written one judging at a time,
    # each judging's rows are contiguous (one row group, where they meet, holds both), so a read of one cell
    # skips row groups holding the other's alone (written at once, the files' rows interleaved and every row
    # group held both judgings' rows)
    n_prompts, k = 13_000, 10
    pool = pl.DataFrame({"prompt_id": [f"p{i // k}" for i in range(n_prompts * k)],
                         "candidate_id": [f"c{i % k}" for i in range(n_prompts * k)]}).with_columns(
        pl.lit("a prompt").alias("prompt"), pl.lit("an answer").alias("response"))
    pool.write_parquet(tmp_path / "pool.parquet")
    for fmt, raw in (("binary", "ACCEPT"), ("likert5", "4")):
        folder = tmp_path / "out" / "judge=j" / f"format={fmt}"
        folder.mkdir(parents=True)
        pool.select("prompt_id", "candidate_id").with_columns(pl.lit(raw).alias("raw")).write_parquet(
            folder / "part-0.parquet")
    db = tmp_path / "a.duckdb"
    import_pool(db, tmp_path / "pool.parquet", "s")
    attach_verdicts(db, [str(tmp_path / "out" / "**" / "*.parquet")], "s", hive=True)
    groups = query_rows(db, "SELECT row_group_id, stats FROM pragma_storage_info('attached_ids') "
                            "WHERE column_name = 'cell_run_id' AND segment_type <> 'VALIDITY'")
    spans = [(stats["min"], stats["max"]) for _, stats in groups]
    runs = {run for span in spans for run in span}
    assert len(runs) == 2 and len(groups) == 3                  # 260,000 rows: 3 row groups of up to 122,880
    for run in runs:                                            # some row group holds the other judging alone
        assert any(lo == hi != run for lo, hi in spans), spans
    assert sorted(cells(db, "s")["n_verdicts"].to_list()) == [130_000, 130_000]


def test_a_query_about_some_prompts_reads_only_the_row_groups_that_hold_them(tmp_path):
    # one cell's file written in prompt order, 4 row groups of 30 rows (12 prompts x 10 candidates): a read of
    # its first 3 prompts (the audit's block of whole prompts) builds on their ids and hands read_parquet their
    # rows' range, so it reads 1 row group of the 4; the count is the pool's 3 x 10 candidates
    rows = synthetic_pool(12, k_range=(10, 10), seed=5)
    pool = write_jsonl(tmp_path / "pool.jsonl", rows)
    cell = tmp_path / "out" / "judge=alpha" / "format=binary"
    cell.mkdir(parents=True)
    pl.DataFrame({"prompt_id": [r["prompt_id"] for r in rows], "candidate_id": [r["candidate_id"] for r in rows],
                  "raw": ["ACCEPT", "REJECT"] * 60}).write_parquet(cell / "part-0.parquet", row_group_size=30)
    db = tmp_path / "a.duckdb"
    import_pool(db, pool, "s")
    attach_verdicts(db, [str(cell / "*.parquet")], "s", hive=True)
    import duckdb

    from ingest.store.connection import verdict_source
    with duckdb.connect(str(db), read_only=True) as con:
        verdict_source(con)
        lo, hi = con.execute("SELECT min(prompt_idx), min(prompt_idx) + 2 FROM prompts").fetchone()
        query = "SELECT count(*) FROM verdict_source WHERE prompt_idx BETWEEN $lo AND $hi"
        n = con.execute(query, {"lo": lo, "hi": hi}).fetchone()[0]
        plan = con.execute("EXPLAIN ANALYZE " + query, {"lo": lo, "hi": hi}).fetchall()[0][1]
    assert n == 30
    scanned = re.findall(r"Row Groups Scanned: (\d+) / 4\b", plan)     # the file's; the tables' are n / 1
    assert scanned == ["1"], plan
