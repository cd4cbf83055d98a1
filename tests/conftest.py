from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture(autouse=True)
def db(tmp_path, monkeypatch) -> Path:
    """Every test gets its own database file, named by JUDGEAUDIT_DB (llm's LLM_USER_PATH idea)."""
    path = tmp_path / "judgeaudit.duckdb"
    monkeypatch.setenv("JUDGEAUDIT_DB", str(path))
    monkeypatch.setenv("JUDGEAUDIT_LOCK_TIMEOUT", "60")
    monkeypatch.setenv("JUDGEAUDIT_NO_DERIVE", "1")   # a command's derived-results refresh: tests/app/test_derive_after.py
    return path


@pytest.fixture
def write_jsonl(tmp_path):
    """write_jsonl(name, rows) -> path in the test's folder (tests.fixtures.write_jsonl)."""
    from tests.fixtures import write_jsonl as write
    return lambda name, rows: write(tmp_path / name, rows)


def db_snapshot(path: Path) -> dict:
    """Row counts of every table: to check that a refused import changed nothing."""
    import duckdb
    if not path.exists():
        return {}
    con = duckdb.connect(str(path), read_only=True)
    try:
        tables = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()]
        return {t: con.execute(f'SELECT count(*) FROM "{t}"').fetchall()[0][0] for t in tables}
    finally:
        con.close()


def query_rows(db: Path, sql: str) -> list[tuple]:
    """Run one query on a database file, read-only, and close it again."""
    import duckdb
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url: str, seconds: float = 120) -> bool:
    """Poll `url` until it answers 200; False after `seconds`."""
    import time
    import httpx
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return True
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    return False
