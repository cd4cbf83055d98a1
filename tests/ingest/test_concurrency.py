"""A second process on the same database waits for the lock instead of failing."""

import subprocess
import sys
import time
from pathlib import Path

from tests.fixtures import synthetic_pool, write_jsonl

EXE = str(Path(sys.executable).with_name("judgeaudit"))
HOLD = """
import sys, time, duckdb
con = duckdb.connect(sys.argv[1])
con.execute("CREATE TABLE IF NOT EXISTS hold (x INTEGER)")
print("holding", flush=True)
time.sleep(float(sys.argv[2]))
con.close()
"""


def _hold(db: Path, seconds: float) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(db), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "holding"
    return proc


def test_writer_waits_for_a_locked_database(db, tmp_path):
    pool = write_jsonl(tmp_path / "pool.jsonl", synthetic_pool(5))
    holder = _hold(db, 8)     # longer than the command's start-up on a busy machine (2 cores, 3 runs at once)
    started = time.monotonic()
    proc = subprocess.run([EXE, "import-pool", pool, "--pool", "p", "--json"], capture_output=True, text=True,
                          timeout=120)
    holder.wait(timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert "in use by another process; waiting" in proc.stderr
    assert time.monotonic() - started >= 2.0


def test_reader_waits_too(db, tmp_path):
    subprocess.run([EXE, "import-pool", write_jsonl(tmp_path / "p.jsonl", synthetic_pool(5)), "--pool", "p"],
                   check=True, capture_output=True)
    holder = _hold(db, 10)    # longer than the reader's start-up on a busy machine
    proc = subprocess.run([EXE, "pools", "--json"], capture_output=True, text=True, timeout=120)
    holder.wait(timeout=30)
    assert proc.returncode == 0 and '"name": "p"' in proc.stdout
    assert "waiting" in proc.stderr
