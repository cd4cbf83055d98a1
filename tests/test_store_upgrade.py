"""A database written by the previous version opens, migrates, and reads as it did (tests/data/v7)."""

import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

V7 = Path(__file__).resolve().parent / "data" / "v7"
COMMANDS = ["pools", "audit", "bias", "rank", "calibrate", "positions", "levels", "variance"]


@pytest.fixture
def old_db(tmp_path) -> Path:
    path = tmp_path / "old.duckdb"
    with gzip.open(V7 / "judgeaudit-v7.duckdb.gz") as src, open(path, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return path


def _cli(db: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "app.cli", *args, "--db", str(db)], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[1])


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
    assert names[7:10] == ["008_drop_training_runs.sql", "009_verdict_endpoint.sql", "010_batch_calls.sql"]
    assert "training_runs" not in after
    assert after["batch_exports"] == after["batch_calls"] == 0          # new in 010, empty
    assert {t: n for t, n in after.items() if t not in ("_migrations", "batch_exports", "batch_calls")} == \
        {t: n for t, n in before.items() if t not in ("_migrations", "training_runs")}


def _keeps(old, new, where="document") -> list[str]:
    """Where `new` differs from `old` on old's keys (new may add keys: later issues add fields, never
    change or drop one); [] when every old key holds its old value."""
    if isinstance(old, dict):
        if not isinstance(new, dict):
            return [f"{where}: {new!r} is not an object"]
        return [d for k, v in old.items()
                for d in (_keeps(v, new[k], f"{where}.{k}") if k in new else [f"{where}.{k}: missing"])]
    if isinstance(old, list):
        if not isinstance(new, list) or len(new) != len(old):
            return [f"{where}: {len(old)} items became {len(new) if isinstance(new, list) else new!r}"]
        return [d for i, (a, b) in enumerate(zip(old, new)) for d in _keeps(a, b, f"{where}[{i}]")]
    return [] if old == new else [f"{where}: {old!r} became {new!r}"]


def test_keeps_is_strict_on_old_keys():
    assert _keeps({"a": [1, {"b": 2}]}, {"a": [1, {"b": 2, "c": 3}], "d": 4}) == []
    assert _keeps({"a": [1, {"b": 2}]}, {"a": [1, {"b": 3}]}) == ["document.a[1].b: 2 became 3"]
    assert _keeps({"a": 1}, {}) == ["document.a: missing"]
    assert _keeps({"a": [1]}, {"a": [1, 2]}) == ["document.a: 1 items became 2"]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_reading_prints_what_the_old_version_printed(old_db, command):
    args = [command] if command == "pools" else [command, "--pool", "v7"]
    proc = _cli(old_db, *args, "--json")
    assert proc.returncode == 0, proc.stderr
    got, old = json.loads(proc.stdout), json.loads((V7 / f"{command}.json").read_text())
    if command == "audit":   # cells now carry `aggregate`: an old database's calls were asked once
        assert all(cell["aggregate"] == "single" for cell in got["cells"])
    assert _keeps(old, got) == []


def test_the_report_is_the_old_versions(old_db, tmp_path):
    out = tmp_path / "report.json"
    proc = _cli(old_db, "report", "--pool", "v7", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert _keeps(json.loads((V7 / "report.json").read_text()), json.loads(out.read_text())) == []


def test_the_old_subset_and_labels_read_through_the_new_rooms(old_db):
    import audit
    from ingest.store import declared_threshold, ensure_current
    ensure_current(old_db)
    (subset,) = audit.subsets(old_db, "v7").to_dicts()
    assert (subset["policy"], subset["judge"], subset["format"], subset["n_selected"]) == ("judge", "sim", "likert5", 3)
    assert audit.subset_by_hash(old_db, subset["sha256"])["subset_id"] == subset["subset_id"]
    assert declared_threshold(old_db, "v7") == 0.4
    assert audit.stored_labels(old_db, "v7").height == 6
