import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXE = str(Path(sys.executable).with_name("judgeaudit"))   # the installed command, beside this Python
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture(autouse=True)
def db(tmp_path, monkeypatch) -> Path:
    """Every test gets its own database file, named by JUDGEAUDIT_DB (llm's LLM_USER_PATH idea)."""
    path = tmp_path / "judgeaudit.duckdb"
    monkeypatch.setenv("JUDGEAUDIT_DB", str(path))
    monkeypatch.setenv("JUDGEAUDIT_LOCK_TIMEOUT", "60")
    monkeypatch.setenv("JUDGEAUDIT_NO_DERIVE", "1")   # a command's derived-results refresh: tests/app/test_derive_after.py
    return path


@pytest.fixture(scope="session")
def bundled_llama_server():
    """llama.cpp's OpenAI-compatible server on the bundled model (tests/llama_server.py), started once a
    session for every module that asks (checked with one real completion before any test uses it); its
    base URL."""
    pytest.importorskip("llama_cpp", reason="llama-cpp-python[server] is installed by `make test`")
    from tests.llama_server import LlamaServer
    server = LlamaServer()
    try:
        url = server.__enter__()
    except RuntimeError as exc:
        pytest.fail(str(exc))
    yield url
    server.stop()


@pytest.fixture(scope="session")
def bundled_judge():
    """The bundled model as the in-process judge (ingest.scoring.judges.local.LocalJudge), loaded once a
    session."""
    pytest.importorskip("torch")
    from ingest.scoring.judges.local import LocalJudge
    return LocalJudge()


@pytest.fixture
def shared_bundled_judge(bundled_judge, monkeypatch):
    """Every LocalJudge a run makes reuses the session's loaded model (the weights are only read)."""
    from ingest.scoring.judges.local import LocalJudge

    def load(self):
        self.torch, self.tokenizer, self.lm = bundled_judge.torch, bundled_judge.tokenizer, bundled_judge.lm
    monkeypatch.setattr(LocalJudge, "load", load)
    return bundled_judge


@pytest.fixture(scope="session")
def bundled_model_folder(bundled_judge, tmp_path_factory) -> Path:
    """The session's bundled model (SmolLM2-135M, loaded once: bundled_judge) saved as a transformers
    folder (config.json, safetensors, tokenizer): a `--base` that a command's own process loads in a
    second, where converting the GGUF takes it tens of seconds. A copy is saved (the loaded model keeps
    its GGUF marker, which forbids saving: train._model._drop_gguf_marker takes it off the copy); the
    same float32 weights and tokenizer as `--base local:smollm2` (tests/kill/test_kill.py checks)."""
    import copy
    from train._model import _drop_gguf_marker
    folder = tmp_path_factory.mktemp("smollm2") / "smollm2"
    model = copy.deepcopy(bundled_judge.lm)
    _drop_gguf_marker(model)
    model.save_pretrained(folder)
    bundled_judge.tokenizer.save_pretrained(folder)
    del model
    return folder


@pytest.fixture
def database_named_by_argument(monkeypatch, tmp_path):
    """$JUDGEAUDIT_DB names another (missing) file: a function that dropped its db argument fails.
    A module asks for it with `pytestmark = pytest.mark.usefixtures("database_named_by_argument")`."""
    monkeypatch.setenv("JUDGEAUDIT_DB", str(tmp_path / "not-this.duckdb"))


@pytest.fixture(scope="module")
def demo_db(request, tmp_path_factory) -> Path:
    """The bundled demo seeded once a module (ingest.demo.seed_demo): every pool, or only the pools a
    module names in DEMO_POOLS_SEEDED (a tuple)."""
    from ingest.demo import DEMO_POOLS, seed_demo
    path = tmp_path_factory.mktemp("demo") / "demo.duckdb"
    only = getattr(request.module, "DEMO_POOLS_SEEDED", None)
    if only is None:
        assert seed_demo(path) == [p[0] for p in DEMO_POOLS]
    else:
        assert seed_demo(path, pools=only) == list(only)
    return path


@pytest.fixture
def write_jsonl(tmp_path):
    """write_jsonl(name, rows) -> path in the test's folder (tests.fixtures.write_jsonl)."""
    from tests.fixtures import write_jsonl as write
    return lambda name, rows: write(tmp_path / name, rows)


def cli(db: Path, *args: str) -> subprocess.CompletedProcess:
    """`judgeaudit ARGS --db DB` in a process of its own (two minutes at most)."""
    return subprocess.run([EXE, *args, "--db", str(db)], capture_output=True, text=True, timeout=120)


def cli_here(capsys, db: Path, *args: str) -> subprocess.CompletedProcess:
    """`judgeaudit ARGS --db DB` run in this process (app.cli.main, what the console script calls), its
    printed lines read from capsys: what `cli` returns, without a process's Python and import start-up
    (seconds each), for tests of a command's document and refusals rather than of the process."""
    from app.cli import main
    capsys.readouterr()
    argv = [*args, "--db", str(db)]
    code = main(argv)
    out = capsys.readouterr()
    return subprocess.CompletedProcess(["judgeaudit", *argv], code, out.out, out.err)


def db_snapshot(path: Path) -> dict:
    """Row counts of every table: to check that a refused import changed nothing."""
    import duckdb
    from ingest.store.connection import CONFIG
    if not path.exists():
        return {}
    con = duckdb.connect(str(path), read_only=True, config=CONFIG)
    try:
        tables = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()]
        return {t: con.execute(f'SELECT count(*) FROM "{t}"').fetchall()[0][0] for t in tables}
    finally:
        con.close()


def query_rows(db: Path, sql: str, params: list | None = None) -> list[tuple]:
    """Run one query (its ? parameters bound to `params`) on a database file, read-only, and close it again."""
    import duckdb
    from ingest.store.connection import CONFIG
    con = duckdb.connect(str(db), read_only=True, config=CONFIG)
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


def sidebar_link(page, name: str):
    """The sidebar's link to a page (a Playwright locator): a page may link to another in its body too (the
    Overview to its next steps), so a link found by its name alone can be two."""
    return page.get_by_test_id("stSidebarNav").get_by_role("link", name=name, exact=True)


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
