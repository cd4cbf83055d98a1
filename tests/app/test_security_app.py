"""Issue 12 through the dashboard (Streamlit AppTest): a key reaches only the endpoint the server
config names, the password gate, the refusal beyond localhost, and no typed name becomes a path."""

import time

import duckdb
import pytest
from streamlit import config as st_config

from app import auth
from ingest.store import import_pool
from ingest.endpoints import config_path
from tests.app.conftest import run_app
from tests.conftest import query_rows
from tests.openai_server import OpenAIServer

ROWS = [{"prompt_id": f"q{i // 2}", "prompt": f"Question {i // 2}", "candidate_id": f"c{i % 2}",
         "response": f"answer {i}", "reference": float(i % 2)} for i in range(4)]


def _verdicts(db, judge: str, n: int, seconds: float = 120) -> int:
    """Wait until `judge` has n verdicts in the database (the run holds the file between batches)."""
    deadline, got = time.time() + seconds, 0
    while time.time() < deadline and got < n:
        time.sleep(1)
        try:
            got = query_rows(db, "SELECT count(*) FROM verdicts v JOIN judges j ON j.judge_id = v.judge_id "
                                 f"WHERE j.name = '{judge}'")[0][0]
        except duckdb.Error:
            continue
    return got


def test_only_a_configured_endpoint_gets_a_key(tmp_path, monkeypatch, write_jsonl):
    """The issue's scenario. A loopback server records every Authorization header. A variable the
    server config does not name (SECRET_THING) never reaches it, whatever is typed on the Score
    page; the configured endpoint's key (TEAM_KEY) does."""
    db = tmp_path / "sec.duckdb"
    import_pool(db, write_jsonl("pool.jsonl", ROWS), "mini")
    monkeypatch.setenv("SECRET_THING", "supersecret-db-password")
    monkeypatch.setenv("TEAM_KEY", "team-key-123")
    with OpenAIServer() as srv:
        config_path(db).write_text(f'[endpoints.team]\nbase_url = "{srv.url}"\nmodels = ["team-model"]\n'
                                   'api_key_env = "TEAM_KEY"\n')
        at = run_app(db, monkeypatch)
        at.switch_page("views/score/page.py").run()
        assert at.radio[0].options == ["Configured endpoint", "Bundled SmolLM2 (in-process)", "Simulated judge",
                                       "Other endpoint (no API key)"]
        at.radio[0].set_value("custom").run()
        assert [t.label for t in at.text_input] == ["Base URL", "Model", "Swap sample (N or all)"]   # no key box

        # smuggling the CLI's flag through a typed field is refused before anything runs
        # (the page says what is wrong as it is typed, and Test connection and Launch stay disabled)
        def launch():
            return at.button(key="score-launch")
        at.text_input[0].set_value(srv.url)
        at.text_input[1].set_value("free-model --api-key-env SECRET_THING").run()
        assert "without spaces" in at.warning[0].value and launch().disabled and srv.requests == 0
        at.text_input[1].set_value("free-model")
        at.text_input[2].set_value("--api-key-env").run()
        assert "swap sample" in at.warning[0].value and launch().disabled and srv.requests == 0

        # the free-typed endpoint (the very URL of the configured one): scored, with no key at all
        at.text_input[2].set_value("0").run()
        launch().click().run()
        assert not at.exception and not at.error
        assert _verdicts(db, "free-model", 12) == 12      # 4 candidates x binary, likert5, numeric100
        assert srv.requests == 12 and srv.auth_headers == set()

        # the configured endpoint: its key, and only its key, is sent
        at.radio[0].set_value("endpoint").run()
        assert [t.label for t in at.text_input] == ["Swap sample (N or all)"]
        picker = next(s for s in at.selectbox if s.label == "Endpoint and model")
        assert picker.options == [f"team · team-model ({srv.url})"]
        launch().click().run()
        assert not at.exception and not at.error
        assert _verdicts(db, "team-model", 12) == 12
        assert srv.auth_headers == {"Bearer team-key-123"}
    assert not any("supersecret" in h for h in srv.auth_headers)
    # and the key itself is written nowhere: not in any table, log or run folder
    tables = [r[0] for r in query_rows(db, "SELECT table_name FROM information_schema.tables")]
    stored = " ".join(str(query_rows(db, f'SELECT * FROM "{t}"')) for t in tables)
    assert "TEAM_KEY" in stored and "team-key-123" not in stored and "supersecret" not in stored
    for f in tmp_path.rglob("*"):
        if f.is_file() and f != db:
            assert b"team-key-123" not in f.read_bytes(), f


def test_password_gate(tmp_path, monkeypatch):
    db = tmp_path / "gate.duckdb"
    monkeypatch.setenv(auth.PASSWORD_ENV, "open sesame")
    monkeypatch.setattr(auth, "THROTTLE", auth.Throttle(base_s=0.2))
    monkeypatch.setattr(auth, "_client", lambda st: "test-client")
    at = run_app(db, monkeypatch)
    assert not at.exception
    assert [t.label for t in at.text_input] == ["Password"] and not at.sidebar.selectbox   # nothing else
    assert not db.exists()                                  # not even the demo seeding ran
    at.text_input[0].set_value("open sesame ").run()
    at.button[0].click().run()
    assert at.error[0].value == "Wrong password." and not at.sidebar.selectbox
    # another attempt while the delay runs (e.g. from a second tab) is not even checked
    auth.THROTTLE.failed("test-client")
    at.text_input[0].set_value("open sesame")
    at.button[0].click().run()
    assert at.error[0].value.startswith("Too many failed attempts") and not at.sidebar.selectbox
    time.sleep(0.5)                                          # 0.2 * 2^1 = 0.4 s after the 2nd failure
    at.button[0].click().run()
    assert not at.exception and not at.error
    assert at.sidebar.selectbox[0].options                  # the app: pools in the sidebar
    at.switch_page("views/report/page.py").run()
    assert not at.exception and at.header[0].value == "Report"


def test_beyond_localhost_without_a_login_the_app_shows_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv(auth.PASSWORD_ENV, raising=False)
    monkeypatch.setattr(auth, "oidc_configured", lambda: False)
    before = st_config.get_option("server.address")
    st_config.set_option("server.address", "0.0.0.0")
    try:
        at = run_app(tmp_path / "open.duckdb", monkeypatch)
    finally:
        st_config.set_option("server.address", before)
    assert "listens beyond localhost without a login" in at.error[0].value
    assert not at.sidebar.selectbox and not at.text_input


@pytest.mark.parametrize("pool_name, file_name, message", [
    ("../x", "pool.jsonl", "Pool name '../x': a name, not a path"),
    ("/etc/x", "pool.jsonl", "Pool name '/etc/x': a name, not a path"),
    # in words: a '\\' in the message would be lost when st.error renders it as Markdown
    ("dir\\x", "pool.jsonl", "Pool name 'dir\\\\x': a name, not a path (no slash or backslash)"),
    ("..", "pool.jsonl", "Pool name '..': may not start with '.'"),
    ("fine", "..jsonl", "File name '..jsonl': may not start with '.'"),   # (Streamlit refuses
    ("fine", ".hidden.csv", "File name '.hidden.csv': may not start with '.'"),   # other extensions)
])
def test_upload_names_are_not_paths(tmp_path, monkeypatch, write_jsonl, pool_name, file_name, message):
    db = tmp_path / "names.duckdb"
    import_pool(db, write_jsonl("pool.jsonl", ROWS), "mini")
    at = run_app(db, monkeypatch)
    at.switch_page("views/pool/page.py").run()
    at.file_uploader[0].upload(file_name, (tmp_path / "pool.jsonl").read_bytes())
    at.text_input[0].set_value(pool_name)
    at.button[0].click().run()
    assert not at.exception and at.error[0].value.startswith(message), at.error[0].value
    assert query_rows(db, "SELECT name FROM pools") == [("mini",)]
    assert sorted(p.name for p in tmp_path.parent.iterdir() if p.name in ("x", "fine")) == []


def test_upload_with_a_plain_name_still_imports(tmp_path, monkeypatch, write_jsonl):
    db = tmp_path / "ok.duckdb"
    import_pool(db, write_jsonl("pool.jsonl", ROWS), "mini")
    at = run_app(db, monkeypatch)
    at.switch_page("views/pool/page.py").run()
    at.file_uploader[0].upload("../../pool.jsonl", (tmp_path / "pool.jsonl").read_bytes())   # only its last part
    at.text_input[0].set_value("second pool")
    at.button[0].click().run()
    assert not at.exception and not at.error
    assert sorted(r[0] for r in query_rows(db, "SELECT name FROM pools")) == ["mini", "second pool"]


def test_oidc_gate_shows_only_a_login_button(tmp_path, monkeypatch):
    """With [auth] in secrets.toml (Streamlit's st.login), a visitor who is not logged in sees a
    login button and nothing else."""
    monkeypatch.delenv(auth.PASSWORD_ENV, raising=False)
    monkeypatch.setattr(auth, "oidc_configured", lambda: True)
    db = tmp_path / "oidc.duckdb"
    at = run_app(db, monkeypatch)
    assert not at.exception
    assert [b.label for b in at.button] == ["Log in"] and not at.sidebar.selectbox and not db.exists()


def test_an_upload_is_a_file_only_while_it_is_imported(tmp_path, monkeypatch, write_jsonl):
    """app.data saves the browser's bytes under their own name (messages cite it, never the
    temporary folder) and removes them afterwards, imported or refused."""
    import tempfile

    from app import data
    from ingest import UserError
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    rows = write_jsonl("pool.jsonl", ROWS).read_bytes()
    assert data.import_pool_upload(" mine ", "../pool.jsonl", rows)["pool"] == "mine"
    with pytest.raises(UserError) as err:
        data.import_pool_upload("other", "bad.jsonl", rows + b"not json\n")
    assert str(err.value).startswith("bad.jsonl, line 5: not valid JSON")
    with pytest.raises(UserError) as err:       # any plain last part will do for labels, "(1)" included
        data.import_labels_upload("mine", "labels (1).jsonl", b'{"prompt_id": "zz", "a_id": "c0", "b_id": "c1", '
                                                             b'"label": "A"}\n')
    assert str(err.value).startswith("labels (1).jsonl, line 1, field 'prompt_id': unknown prompt 'zz'")
    with pytest.raises(UserError, match="File name '..': a file name, not a folder"):
        data.import_labels_upload("mine", "..", b"")
    assert list(scratch.iterdir()) == []
    assert query_rows(data.database().path, "SELECT name FROM pools") == [("mine",)]
