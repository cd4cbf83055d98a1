"""A writer killed before DuckDB folded its write-ahead log into the file leaves `<db>.wal`; the next
connection replays it. DuckDB 2 replays the store's expression indexes (`least`, `greatest`,
`coalesce`) through its `core_functions` extension and, by default, tries to download it first: offline
the file did not open at all after a killed `import-pool` (tests/kill, points 4–8). The extension is
linked into the library; the store's connections never download one (connection.CONFIG)."""

import json
import subprocess
import sys
from pathlib import Path

from ingest.store import _database

EXE = str(Path(sys.executable).with_name("judgeaudit"))

# A process that migrates a new file with DuckDB's default settings and dies without closing it.
_KILLED_WRITER = """
import os, sys, duckdb
from ingest.store._database import migrate
con = duckdb.connect(sys.argv[1])
migrate(con)
os._exit(9)
"""


def _killed_writer(path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", _KILLED_WRITER, str(path)], capture_output=True, text=True)
    assert done.returncode == 9, done.stderr
    assert Path(f"{path}.wal").stat().st_size > 0           # the schema lies in the log alone


def test_a_killed_writers_log_replays_through_the_store(db):
    _killed_writer(db)
    expected = len(_database._migration_files())
    with _database.reader(db) as con:
        assert con.execute("SELECT count(*) FROM _migrations").fetchone()[0] == expected


def test_a_command_opens_the_database_a_killed_writer_left(db):
    _killed_writer(db)
    done = subprocess.run([EXE, "pools", "--json"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"pools": []}
