"""Databases written by earlier versions open, migrate, and read as they did: tests/data/v7 (schema 7,
before the store's rooms) and tests/data/v11 (schema 11, before migration 012 renamed run_id and
job_id). Each holds the file and what its version printed."""

import contextlib
import gzip
import io
import json
import shutil
import subprocess
from pathlib import Path

import duckdb
import pytest

from tests.documents import differences, keeps

DATA = Path(__file__).resolve().parents[1] / "data"
V7, V11, V19 = DATA / "v7", DATA / "v11", DATA / "v19"
COMMANDS = ["pools", "audit", "bias", "rank", "calibrate", "positions", "levels", "variance"]
V11_COMMANDS = COMMANDS + ["consistency"]
# The words issue 25 renamed in a printed document (DESIGN.md 'One word per thing'): drift's cell
# runs were `first_run` / `last_run`, and a run is now only a background run.
RENAMED = {"first_run": "first_cell_run", "last_run": "last_cell_run"}
# The tables migration 020 renamed: the human labels of pairs (docs/layout.md#the-database).
TABLES_RENAMED = {"labels": "pair_labels"}


def _unpack(folder: Path, name: str, tmp_path: Path) -> Path:
    path = tmp_path / f"{name}.duckdb"
    with gzip.open(folder / f"judgeaudit-{name}.duckdb.gz") as src, open(path, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return path


@pytest.fixture
def old_db(tmp_path) -> Path:
    return _unpack(V7, "v7", tmp_path)


@pytest.fixture
def v11_db(tmp_path) -> Path:
    return _unpack(V11, "v11", tmp_path)


@pytest.fixture
def v19_db(tmp_path) -> Path:
    return _unpack(V19, "v19", tmp_path)


def _renamed(doc):
    """An old document in today's words (RENAMED), values unchanged."""
    if isinstance(doc, dict):
        return {RENAMED.get(k, k): _renamed(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_renamed(v) for v in doc]
    return doc


def _cli(db: Path, *args: str) -> subprocess.CompletedProcess:
    """`judgeaudit ARGS --db DB` run in this process (app.cli.main, what the console script calls), what it
    printed caught: the documents of a migrated database, without a process's start-up per command."""
    from app.cli import main
    out, err = io.StringIO(), io.StringIO()
    argv = [*args, "--db", str(db)]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return subprocess.CompletedProcess(["judgeaudit", *argv], code, out.getvalue(), err.getvalue())


def test_the_old_database_migrates_and_keeps_its_rows(old_db):
    con = duckdb.connect(str(old_db), read_only=True)
    before = {t: con.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]
              for (t,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    con.close()
    # likert5: 18 candidates; tournament: 3 pairs x 6 prompts, each in both orders
    assert before["_migrations"] == 7 and before["verdicts"] == 18 + 2 * 18 and "training_runs" in before

    proc = _cli(old_db, "runs", "--json")
    assert proc.returncode == 0, proc.stderr
    (run,) = json.loads(proc.stdout)["runs"]
    assert (run["kind"], run["status"], run["pool"]) == ("score", "finished", "v7")

    con = duckdb.connect(str(old_db), read_only=True)
    after = {t: con.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]
             for (t,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    names = [r[0] for r in con.execute("SELECT name FROM _migrations ORDER BY id").fetchall()]
    con.close()
    assert names[7:12] == ["008_drop_training_runs.sql", "009_verdict_endpoint.sql", "010_batch_calls.sql",
                           "011_calls_kept_unique_by_the_writer.sql", "012_one_word_per_thing.sql"]
    assert "training_runs" not in after
    assert after["batch_exports"] == after["batch_calls"] == 0          # new in 010, empty
    new_in_14 = ("accept_labels", "label_queues", "label_queue_items", "label_orders")   # empty
    new_in_15 = ("juries", "jury_members")                                                # empty
    new_in_16 = ("derived_results",)     # 017's derived results, empty (016's three tables: gone in 018)
    new_in_21 = ("judge_timings",)                                                        # empty
    new_in_26 = ("attached_ids",)                                                         # empty
    assert all(after[t] == 0 for t in new_in_14 + new_in_15 + new_in_16 + new_in_21 + new_in_26)
    assert after["id_marks"] == before["id_marks"] + 1   # label_queues' mark
    assert {t: n for t, n in after.items() if t not in ("_migrations", "batch_exports", "batch_calls", "id_marks")
            + new_in_14 + new_in_15 + new_in_16 + new_in_21 + new_in_26} == \
        {TABLES_RENAMED.get(t, t): n for t, n in before.items() if t not in ("_migrations", "training_runs", "id_marks")}


def test_keeps_is_strict_on_old_keys():
    assert keeps({"a": [1, {"b": 2}]}, {"a": [1, {"b": 2, "c": 3}], "d": 4}) == []
    assert keeps({"a": [1, {"b": 2}]}, {"a": [1, {"b": 3}]}) == ["document.a[1].b: 2 became 3"]
    assert keeps({"a": 1}, {}) == ["document.a: missing"]
    assert keeps({"a": [1]}, {"a": [1, 2]}) == ["document.a: 1 items became 2"]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_reading_prints_what_the_old_version_printed(old_db, command):
    args = [command] if command == "pools" else [command, "--pool", "v7"]
    proc = _cli(old_db, *args, "--json")
    assert proc.returncode == 0, proc.stderr
    got, old = json.loads(proc.stdout), json.loads((V7 / f"{command}.json").read_text())
    if command == "audit":   # cells now carry `aggregate`: an old database's calls were asked once
        assert all(cell["aggregate"] == "single" for cell in got["cells"])
    assert keeps(old, got) == []


def test_the_report_is_the_old_versions(old_db, tmp_path):
    out = tmp_path / "report.json"
    proc = _cli(old_db, "report", "--pool", "v7", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert keeps(json.loads((V7 / "report.json").read_text()), json.loads(out.read_text())) == []


def test_the_old_subset_and_labels_read_through_the_new_rooms(old_db):
    import audit
    from ingest.store import declared_threshold, ensure_current
    ensure_current(old_db)
    (subset,) = audit.subsets(old_db, "v7").to_dicts()
    assert (subset["policy"], subset["judge"], subset["format"], subset["n_selected"]) == ("judge", "sim", "likert5", 3)
    assert audit.subset_by_hash(old_db, subset["sha256"])["subset_id"] == subset["subset_id"]
    assert declared_threshold(old_db, "v7") == 0.4
    assert audit.stored_labels(old_db, "v7").height == 6


# -- schema 11, written by the last version before migration 012 --------------------------------------

def _columns(db: Path, table: str) -> list[str]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return [r[0] for r in con.execute("SELECT column_name FROM information_schema.columns WHERE table_name = $t "
                                          "ORDER BY ordinal_position", {"t": table}).fetchall()]
    finally:
        con.close()


def test_migration_12_renames_the_columns_and_keeps_every_row(v11_db):
    con = duckdb.connect(str(v11_db), read_only=True)
    tables = [t for (t,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall()]
    before = {t: con.execute(f'SELECT * FROM "{t}" ORDER BY ALL').fetchall() for t in tables if t != "_migrations"}
    con.close()
    # the v11 file as written: 18 likert5 + 2 x 18 tournament + 18 binary (batch) + 18 imported + 18 sim-2
    assert len(before["verdicts"]) == 18 + 36 + 18 + 18 + 18
    assert "run_id" in _columns(v11_db, "verdicts") and "job_id" in _columns(v11_db, "cell_runs")

    proc = _cli(v11_db, "pools", "--json")      # any command migrates
    assert proc.returncode == 0, proc.stderr
    assert [c for c in _columns(v11_db, "verdicts") if "run" in c] == ["cell_run_id"]
    assert [c for c in _columns(v11_db, "cell_runs") if "run" in c or "decoding" in c] == \
        ["cell_run_id", "decoding_settings", "run_id"]
    assert "cell_run_id" in _columns(v11_db, "batch_calls") and "decoding_settings" in _columns(v11_db, "batch_exports")
    assert "run_id" in _columns(v11_db, "generations") and "job_id" not in _columns(v11_db, "evaluations")
    con = duckdb.connect(str(v11_db), read_only=True)
    after = {t: con.execute(f'SELECT * FROM "{TABLES_RENAMED.get(t, t)}" ORDER BY ALL').fetchall() for t in before}
    pairings = con.execute("SELECT kind, pairing, count(*) FROM formats GROUP BY ALL ORDER BY ALL").fetchall()
    con.close()
    # migration 18's cell_runs.attached: null on every cell run that is not an attach's
    assert all(r[-1] is None for r in after["cell_runs"])
    after["cell_runs"] = [r[:-1] for r in after["cell_runs"]]
    # migration 25's prompts.category: none on every prompt written before it
    assert after["prompts"] and all(r[-1] is None for r in after["prompts"])
    after["prompts"] = [r[:-1] for r in after["prompts"]]
    # every row kept, value for value, but the pointwise formats' pairing (now none) and, from migration
    # 14, the labels' unnamed annotator ('' is 'import') with a queue_id (null: from a file) and the
    # label_queues' id mark
    assert {t: rows for t, rows in after.items() if t not in ("formats", "labels", "id_marks")} == \
        {t: rows for t, rows in before.items() if t not in ("formats", "labels", "id_marks")}
    named = sorted(tuple("import" if v == "" else v for v in row) + (None,) for row in before["labels"])
    assert before["labels"] and sorted(after["labels"]) == named
    assert sorted(after["id_marks"]) == sorted(before["id_marks"] + [("label_queues", 0)])
    assert pairings == [("comparative", "tournament", 1), ("pointwise", None, 2)]


@pytest.mark.parametrize("command", V11_COMMANDS)
def test_every_reading_prints_what_version_11_printed(v11_db, command):
    args = [command] if command == "pools" else [command, "--pool", "v11"]
    proc = _cli(v11_db, *args, "--json")
    assert proc.returncode == 0, proc.stderr
    assert keeps(json.loads((V11 / f"{command}.json").read_text()), json.loads(proc.stdout)) == []


def test_drift_reads_as_version_11_printed_it_in_todays_words(v11_db):
    proc = _cli(v11_db, "drift", "--pool", "v11", "--judge", "sim-2", "--against", "sim", "--json")
    assert proc.returncode == 0, proc.stderr
    old = json.loads((V11 / "drift.json").read_text())
    assert "first_run" in json.dumps(old)       # the rename is real: the old document said first_run
    assert keeps(_renamed(old), json.loads(proc.stdout)) == []


def test_the_report_and_the_export_are_version_11s(v11_db, tmp_path):
    out = tmp_path / "report.json"
    proc = _cli(v11_db, "report", "--pool", "v11", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    old, new = json.loads((V11 / "report.json").read_text()), json.loads(out.read_text())
    assert new.pop("generated_at") > old.pop("generated_at")      # when it was made: the one key that moves
    assert keeps(old, new) == []
    rows = tmp_path / "verdicts.jsonl"
    proc = _cli(v11_db, "export-verdicts", "--pool", "v11", "--out", str(rows))
    assert proc.returncode == 0, proc.stderr
    old = [json.loads(line) for line in (V11 / "export-verdicts.jsonl").read_text().splitlines()]
    assert differences(old, [json.loads(line) for line in rows.read_text().splitlines()]) == []


def test_a_journal_left_by_version_11_is_replayed_into_the_renamed_column(v11_db):
    # a scoring run killed under version 11 left answers in its journal, each naming its cell run
    # `run_id`; the current version stores them under cell_run_id
    from ingest.scoring import replay_journal
    con = duckdb.connect(str(v11_db))
    row = con.sql("SELECT * FROM verdicts WHERE judge_id = (SELECT judge_id FROM judges WHERE name = 'sim') "
                  "ORDER BY ALL LIMIT 1").pl().to_dicts()[0]
    con.execute("DELETE FROM verdicts WHERE run_id = $r AND prompt_idx = $p AND a_idx = $a AND sample = $s AND "
                "format_id = $f AND b_idx IS NOT DISTINCT FROM $b",
                {"r": row["run_id"], "p": row["prompt_idx"], "a": row["a_idx"], "s": row["sample"],
                 "f": row["format_id"], "b": row["b_idx"]})
    con.close()
    line = {k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in row.items() if k != "created_at"}
    folder = v11_db.with_name(v11_db.name + ".progress")     # DB.progress/POOL--JUDGE.journal.jsonl
    folder.mkdir()
    (folder / "v11--sim.journal.jsonl").write_text(json.dumps(line) + "\n")
    assert replay_journal(v11_db, "v11", "sim") == 1
    con = duckdb.connect(str(v11_db), read_only=True)
    got = con.execute("SELECT cell_run_id, value FROM verdicts WHERE judge_id = $j AND prompt_idx = $p AND a_idx = $a "
                      "AND sample = $s AND format_id = $f AND b_idx IS NOT DISTINCT FROM $b",
                      {"j": row["judge_id"], "p": row["prompt_idx"], "a": row["a_idx"], "s": row["sample"],
                       "f": row["format_id"], "b": row["b_idx"]}).fetchall()
    con.close()
    assert got == [(row["run_id"], row["value"])]
    con = duckdb.connect(str(v11_db), read_only=True)      # the answer too, under its schema-20 name
    (answer,) = con.execute("SELECT answer FROM verdicts WHERE judge_id = $j AND prompt_idx = $p AND a_idx = $a "
                            "AND sample = $s AND format_id = $f AND b_idx IS NOT DISTINCT FROM $b",
                            {"j": row["judge_id"], "p": row["prompt_idx"], "a": row["a_idx"], "s": row["sample"],
                             "f": row["format_id"], "b": row["b_idx"]}).fetchone()
    con.close()
    assert answer == row["label"] and answer is not None


# -- schema 19, written by the last version before migration 020 --------------------------------------

V19_COMMANDS = V11_COMMANDS + ["judges"]


def _rows(db: Path, tables) -> dict[str, list[tuple]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {t: con.execute(f'SELECT * FROM "{t}" ORDER BY ALL').fetchall() for t in tables}
    finally:
        con.close()


def _tables(db: Path) -> list[str]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return sorted(t for (t,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall())
    finally:
        con.close()


def test_migration_20_renames_the_answer_and_the_pair_labels_and_keeps_every_row(v19_db):
    before_tables = [t for t in _tables(v19_db) if t != "_migrations"]
    before = _rows(v19_db, before_tables)
    verdict_columns, label_columns = _columns(v19_db, "verdicts"), _columns(v19_db, "labels")
    # the v19 file as written: sim 24 likert5 + 24 binary + 8 prompts x 3 pairs x 2 orders of tournament,
    # sim-2 24 + 24, outside 24 imported, the jury 'panel' 24 likert5 + 24 binary; 8 pairs and 24 candidates
    # labelled by two annotators each
    assert len(before["verdicts"]) == 24 + 24 + 48 + 24 + 24 + 24 + 48
    assert (len(before["labels"]), len(before["accept_labels"])) == (16, 48)

    proc = _cli(v19_db, "pools", "--json")      # any command migrates
    assert proc.returncode == 0, proc.stderr
    renamed = {"label": "answer", "label_probs": "answer_probs"}
    assert _columns(v19_db, "verdicts") == [renamed.get(c, c) for c in verdict_columns]
    assert "labels" not in _tables(v19_db) and _columns(v19_db, "pair_labels") == label_columns
    # every row kept, value for value, under the new names (a rename rewrites no value)
    after = _rows(v19_db, [TABLES_RENAMED.get(t, t) for t in before_tables])
    # but migration 25's prompts.category, none on every prompt written before it
    assert after["prompts"] and all(r[-1] is None for r in after["prompts"])
    after["prompts"] = [r[:-1] for r in after["prompts"]]
    assert {t: after[TABLES_RENAMED.get(t, t)] for t in before_tables} == before
    # the moved columns are not empty: every member's call answered (a jury's median between two answers has none)
    answers = [row[verdict_columns.index("label")] for row in before["verdicts"]]
    probs = [row[verdict_columns.index("label_probs")] for row in before["verdicts"]]
    assert sum(a is not None for a in answers) >= 168 and sum(p is not None for p in probs) >= 168


def test_migration_20_names_the_attached_answers_answer(v19_db):
    # an attached judging's parses (schema 18) hold each distinct raw answer parsed: the field `label` becomes
    # `answer`, value for value; a cell run that is no attach's keeps its null
    con = duckdb.connect(str(v19_db))
    con.execute("INSERT INTO cell_runs (cell_run_id, pool_id, judge_id, format_id, source, status, attached) "
                "VALUES (999, 1, 1, 1, 'attach', 'finished', {'files': [], 'parses': ["
                "{'raw': ' 4', 'label': '4', 'value': 4.0, 'status': 'ok'}, "
                "{'raw': 'maybe', 'label': NULL, 'value': NULL, 'status': 'no_label'}]})")
    n_null = con.execute("SELECT count(*) FROM cell_runs WHERE attached IS NULL").fetchone()[0]
    con.close()
    proc = _cli(v19_db, "pools", "--json")
    assert proc.returncode == 0, proc.stderr
    con = duckdb.connect(str(v19_db), read_only=True)
    (parses,) = con.execute("SELECT attached.parses FROM cell_runs WHERE cell_run_id = 999").fetchone()
    assert con.execute("SELECT count(*) FROM cell_runs WHERE attached IS NULL").fetchone()[0] == n_null > 0
    con.close()
    assert parses == [{"raw": " 4", "answer": "4", "value": 4.0, "status": "ok"},
                      {"raw": "maybe", "answer": None, "value": None, "status": "no_label"}]


@pytest.mark.parametrize("command", V19_COMMANDS)
def test_every_reading_prints_what_version_19_printed(v19_db, command):
    args = [command] if command == "pools" else [command, "--pool", "v19"]
    proc = _cli(v19_db, *args, "--json")
    assert proc.returncode == 0, proc.stderr
    assert keeps(json.loads((V19 / f"{command}.json").read_text()), json.loads(proc.stdout)) == []


@pytest.mark.parametrize("target", ["accept", "winrate"])
def test_the_estimates_are_version_19s(v19_db, target):
    proc = _cli(v19_db, "estimate", "--pool", "v19", "--target", target, "--json")
    assert proc.returncode == 0, proc.stderr
    assert keeps(json.loads((V19 / f"estimate-{target}.json").read_text()), json.loads(proc.stdout)) == []


def test_drift_the_report_and_the_export_are_version_19s(v19_db, tmp_path):
    proc = _cli(v19_db, "drift", "--pool", "v19", "--judge", "sim-2", "--against", "sim", "--json")
    assert proc.returncode == 0, proc.stderr
    assert keeps(json.loads((V19 / "drift.json").read_text()), json.loads(proc.stdout)) == []
    out = tmp_path / "report.json"
    proc = _cli(v19_db, "report", "--pool", "v19", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    old, new = json.loads((V19 / "report.json").read_text()), json.loads(out.read_text())
    assert new.pop("generated_at") > old.pop("generated_at")
    assert keeps(old, new) == []
    rows = tmp_path / "verdicts.jsonl"
    proc = _cli(v19_db, "export-verdicts", "--pool", "v19", "--out", str(rows))
    assert proc.returncode == 0, proc.stderr
    old = [json.loads(line) for line in (V19 / "export-verdicts.jsonl").read_text().splitlines()]
    new = [json.loads(line) for line in rows.read_text().splitlines()]
    # the file keeps a verdict file's names for the answer (docs/files.md#verdict-file)
    assert all("label" in r and "label_probs" in r and "answer" not in r for r in new)
    assert differences(old, new) == []
