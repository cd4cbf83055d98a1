"""A held read-only connection (Database.holding, connection.holding): while the block runs, this
process's readings join the held connection's DuckDB instance (an instance-wide setting made on it is
what they see); this process's writers write all the same (the held connection closed for the write,
opened again after, so the next reading sees the write); another process's writer waits for the block's
end and then lands; after the block nothing stays open (a read-write connection opens in this process)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import duckdb

from ingest import Database
from ingest.store import connection, import_labels, import_pool
from tests.fixtures import synthetic_pool, write_jsonl

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _threads_setting(db: Database) -> int:
    with connection.read_only(db.path) as con:
        return int(con.execute("SELECT current_setting('threads')").fetchone()[0])


def _n_labels(db: Database) -> int:
    with connection.read_only(db.path) as con:
        return con.execute("SELECT count(*) FROM pair_labels").fetchone()[0]


def _labels(rows, annotator: str) -> list[dict]:
    first = {}
    for r in rows:
        first.setdefault(r["prompt_id"], []).append(r["candidate_id"])
    return [{"prompt_id": p, "a_id": c[0], "b_id": c[1], "annotator": annotator, "label": "A"}
            for p, c in sorted(first.items()) if len(c) >= 2]


def test_readings_join_the_held_instance_and_writers_of_this_process_write(db, tmp_path):
    rows = synthetic_pool(6, k_range=(2, 3), seed=2)
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", rows), "s")
    handle = Database(db)
    labels = _labels(rows, "h1")
    default = _threads_setting(handle)
    with handle.holding():
        other = default + 1
        connection._HELD[str(handle.path)].execute(f"SET threads = {other}")   # the instance's, not a connection's
        assert _threads_setting(handle) == other
        with handle.holding():                                             # nested: the same connection
            assert _threads_setting(handle) == other
            seen = []                                                      # and another thread reads meanwhile
            reader = threading.Thread(target=lambda: seen.append(_threads_setting(handle)))
            reader.start()
            reader.join(timeout=30)
            assert seen == [other]
        import_labels(db, write_jsonl(tmp_path / "labels.jsonl", labels), "s")   # a writer of this process
        assert _n_labels(handle) == len(labels)                            # seen after the write
    assert str(handle.path) not in connection._HELD
    con = duckdb.connect(str(handle.path))                                 # no read-only instance left open
    con.close()
    assert _threads_setting(handle) == default


def test_another_process_writer_waits_for_the_block_then_lands(db, tmp_path):
    rows = synthetic_pool(6, k_range=(2, 3), seed=2)
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", rows), "s")
    labels = write_jsonl(tmp_path / "labels.jsonl", _labels(rows, "h2"))
    code = "import sys; sys.path.insert(0, sys.argv[1]); from ingest.store import import_labels; " \
           "import_labels(sys.argv[2], sys.argv[3], 's')"
    env = {**os.environ, "PYTHONPATH": ROOT, "JUDGEAUDIT_LOCK_TIMEOUT": "60"}
    with Database(db).holding():
        proc = subprocess.Popen([sys.executable, "-c", code, ROOT, str(db), str(labels)], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        said = ""
        while "in use by another process" not in said:                    # until it finds the file held
            line = proc.stderr.readline()
            assert line, f"the writer ended without waiting: {said}"
            said += line
        time.sleep(1.0)
        assert proc.poll() is None                                         # still waiting for the lock
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, said + err
    assert _n_labels(Database(db)) == len(_labels(rows, "h2"))


def test_a_writer_of_another_thread_writes_while_the_block_runs(db, tmp_path):
    rows = synthetic_pool(6, k_range=(2, 3), seed=2)
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", rows), "s")
    labels = write_jsonl(tmp_path / "labels.jsonl", _labels(rows, "h3"))
    with Database(db).holding():
        worker = threading.Thread(target=import_labels, args=(db, labels, "s"))
        worker.start()
        worker.join(timeout=60)
        assert not worker.is_alive()
        assert _n_labels(Database(db)) == len(_labels(rows, "h3"))
