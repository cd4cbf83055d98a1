"""Issue 12, the parts without a browser: server-side endpoints, the score form's arguments, names
that must not become paths, upload limits, redaction, model loading, and `judgeaudit app`
refusing to listen beyond localhost without a login."""

import asyncio
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import polars as pl
import pytest

from app import auth, cli
from app.cli import dashboard
from app.cli import command_line
from app.score_form import ScoreForm, providers, score_request
from ingest import UserError
from ingest.store import import_pool
from ingest.files import read_table
from ingest import data_dir, file_stem, inside, safe_name
from ingest import redact
from ingest.endpoints import BUNDLED, base_models, config_path, endpoints, load_config, resolve_base_model
from tests.conftest import REPO, query_rows

TRAVERSAL = ["../x", "/etc/x", "..", ".", ".hidden", "a/b", "a\\b", "C:x", "", "   ", "x\x00y", "../../etc/passwd"]


# -- names typed in the browser ---------------------------------------------------------------------

@pytest.mark.parametrize("bad", TRAVERSAL)
def test_safe_name_refuses_paths(bad):
    with pytest.raises(UserError, match="name"):
        safe_name(bad, "pool name")


@pytest.mark.parametrize("good", ["mine", "ko-arena-hard", "pool 1.v2", "한국어_풀", "  padded  "])
def test_safe_name_keeps_plain_names(good):
    assert safe_name(good, "pool name") == good.strip()


def test_inside_stays_in_the_data_folder(tmp_path):
    assert inside(tmp_path, "runs", "a.jsonl") == (tmp_path / "runs" / "a.jsonl").resolve()
    for parts in (("../x",), ("/etc/x",), ("runs", "..", "..", "x")):
        with pytest.raises(UserError, match="absolute|leaves the data folder"):
            inside(tmp_path, *parts)
    (tmp_path / "link").symlink_to("/etc")          # a symlink out of the folder is refused too
    with pytest.raises(UserError, match="leaves the data folder"):
        inside(tmp_path, "link", "passwd")
    assert data_dir(tmp_path / "x.duckdb") == tmp_path.resolve()


def test_file_stem_makes_stored_names_safe():
    assert file_stem("../../etc/passwd") == "etc_passwd"
    assert file_stem("/abs") == "abs" and file_stem("..") == "unnamed"
    assert file_stem("ko-arena-hard") == "ko-arena-hard"


# -- the server's endpoint config ---------------------------------------------------------------------

CONFIG = """
[endpoints.team]
base_url = "http://127.0.0.1:9/v1/"
models = ["m1", "m2"]
api_key_env = "TEAM_KEY"

[endpoints.open]
base_url = "http://127.0.0.1:9/v1"
model = "m3"

[models]
qwen = "models/qwen"
"""


def test_config_lives_beside_the_database_or_where_the_variable_says(tmp_path, monkeypatch, db):
    assert config_path(db) == db.resolve().parent / "judgeaudit.toml"
    monkeypatch.setenv("JUDGEAUDIT_CONFIG", str(tmp_path / "elsewhere.toml"))
    assert config_path(db) == tmp_path / "elsewhere.toml"


def test_endpoints_and_models_load(db):
    assert endpoints(db) == {} and base_models(db) == {BUNDLED: BUNDLED}     # no file: nothing configured
    config_path(db).write_text(CONFIG)
    eps = endpoints(db)
    assert eps["team"].base_url == "http://127.0.0.1:9/v1" and eps["team"].models == ("m1", "m2")
    assert eps["team"].api_key_env == "TEAM_KEY" and eps["open"].api_key_env is None
    assert eps["open"].models == ("m3",)
    models = base_models(db)
    assert models == {BUNDLED: BUNDLED, "qwen": str(db.resolve().parent / "models" / "qwen")}
    with pytest.raises(UserError, match="field 'models.qwen': .* is not a folder"):
        resolve_base_model(db, "qwen")
    (db.parent / "models" / "qwen").mkdir(parents=True)
    assert resolve_base_model(db, "qwen") == models["qwen"] and resolve_base_model(db, BUNDLED) == BUNDLED
    for bad in ("/srv/other-model", "../models/qwen", "Qwen/Qwen2.5-0.5B"):   # paths and hub ids: refused
        with pytest.raises(UserError, match="bundled model or one listed under \\[models\\]"):
            resolve_base_model(db, bad)


@pytest.mark.parametrize("text, field", [
    ('[endpoints.x]\nbase_url = "ftp://h"\nmodel = "m"', "endpoints.x.base_url"),
    ('[endpoints.x]\nbase_url = "http://h"', "endpoints.x.models"),
    ('[endpoints.x]\nbase_url = "http://h"\nmodel = "m"\napi_key_env = "sk-123 secret"', "endpoints.x.api_key_env"),
    ('[endpoints.x]\nbase_url = "http://h"\nmodel = "m"\napi_key = "sk-inline"', "endpoints.x.api_key"),
    ('[model]\nx = "y"', "model"),
])
def test_bad_config_names_the_file_and_field(db, text, field):
    config_path(db).write_text(text)
    with pytest.raises(UserError) as err:
        load_config(db)
    assert str(config_path(db)) in str(err.value) and f"'{field}" in str(err.value)


# -- the score form: a key goes only where the server config sends it ---------------------------------------

def _eps(db):
    config_path(db).write_text(CONFIG)
    return endpoints(db)


def test_configured_endpoint_carries_its_configured_key_variable(db):
    request, name = score_request(ScoreForm("p", "endpoint", ["binary"], endpoint="team", model="m2"), _eps(db))
    assert request.get("judge_spec") == "openai:m2@http://127.0.0.1:9/v1"
    assert request.get("api_key_env") == "TEAM_KEY" and name == "m2"
    assert "--api-key-env" in command_line(request)
    request, _ = score_request(ScoreForm("p", "endpoint", ["binary"], endpoint="open", model="m3"), _eps(db))
    assert request.get("api_key_env") is None                   # configured without a key: none sent
    assert "--api-key-env" not in command_line(request)


def test_free_typed_endpoint_never_carries_a_key(db):
    eps = _eps(db)
    # even at the very URL of a configured endpoint that has a key
    request, name = score_request(ScoreForm("p", "custom", ["binary"], model="m1", base_url="http://127.0.0.1:9/v1"),
                                  eps)
    assert request.get("api_key_env") is None and name == "m1"
    argv = command_line(request)
    assert "--api-key-env" not in argv and "--db" not in argv    # the database travels in the environment
    assert argv[:5] == ["score", "--pool", "p", "--judge", "openai:m1@http://127.0.0.1:9/v1"]
    assert argv[-1] == "--json"


@pytest.mark.parametrize("form, message", [
    (ScoreForm("p", "endpoint", ["binary"], endpoint="nope", model="m1"), "not configured"),
    (ScoreForm("p", "endpoint", ["binary"], endpoint="team", model="m3"), "is not configured"),
    (ScoreForm("p", "custom", ["binary"], model="m", base_url="file:///etc/passwd"), "http"),
    (ScoreForm("p", "custom", ["binary"], model="m --api-key-env X", base_url="http://h/v1"), "without spaces"),
    (ScoreForm("p", "fake", ["binary"], model="../x"), "simulated judge"),
    (ScoreForm("p", "fake", ["binary"], model="/etc/x"), "simulated judge"),
    (ScoreForm("p", "fake", ["binary"], model="sim", swap="--api-key-env"), "swap sample"),
    (ScoreForm("p", "fake", [], model="sim"), "formats"),
    (ScoreForm("p", "openai", ["binary"], model="m"), "provider"),
])
def test_bad_forms_are_refused(db, form, message):
    with pytest.raises(UserError, match=message):
        score_request(form, _eps(db))


def test_bundled_and_simulated_judges(db):
    assert providers({}) == ["local", "fake", "custom"] and providers(_eps(db))[0] == "endpoint"
    request, name = score_request(ScoreForm("p", "local", ["likert5"]), {})
    assert request.get("judge_spec") == "local:smollm2" and name == "smollm2"
    request, name = score_request(ScoreForm("p", "fake", ["likert5"], model="sim?noise=0.2", swap="all"), {})
    assert request.get("judge_spec") == "fake:sim?noise=0.2" and name == "sim" and request.get("swap_sample") == "all"


# -- uploads: a row and a (decompressed) size limit ------------------------------------------------------------

def _pool_frame(n):
    return pl.DataFrame({"prompt_id": [f"q{i // 2}" for i in range(n)], "prompt": ["x" * 1000] * n,
                         "candidate_id": [f"c{i % 2}" for i in range(n)], "response": ["y" * 1000] * n})


def test_parquet_over_the_row_limit_is_refused_before_decoding(tmp_path, monkeypatch):
    path = tmp_path / "big.parquet"
    _pool_frame(40).write_parquet(path)
    assert read_table(path).frame.height == 40
    monkeypatch.setenv("JUDGEAUDIT_MAX_ROWS", "39")
    with pytest.raises(UserError, match=r"big.parquet: 40 rows is over the limit of 39 rows \(JUDGEAUDIT_MAX_ROWS\)"):
        read_table(path)


def test_parquet_that_unpacks_past_the_size_limit_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "bomb.parquet"
    _pool_frame(400).write_parquet(path, compression="zstd")   # ~800 kB of text, a few kB on disk
    assert path.stat().st_size < 100_000
    monkeypatch.setenv("JUDGEAUDIT_MAX_BYTES", str(200_000))
    message = r"bomb.parquet: more than 0.2 MiB of data once decompressed, over the limit \(JUDGEAUDIT_MAX_BYTES\)"
    with pytest.raises(UserError, match=message):
        read_table(path)


def test_csv_over_the_limits_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "big.csv"
    _pool_frame(10).write_csv(path)
    monkeypatch.setenv("JUDGEAUDIT_MAX_ROWS", "9")
    with pytest.raises(UserError, match="big.csv: 10 rows is over the limit of 9 rows"):
        read_table(path)
    monkeypatch.setenv("JUDGEAUDIT_MAX_ROWS", "100")
    monkeypatch.setenv("JUDGEAUDIT_MAX_BYTES", "1000")
    with pytest.raises(UserError, match="big.csv: more than 0.0 MiB of data once decompressed"):
        import_pool(None, path, "big")


# -- errors do not leak ------------------------------------------------------------------------------

@pytest.mark.parametrize("text, gone, kept", [
    ('{"error": "Incorrect API key provided: sk-proj-abcDEF1234567890"}', "abcDEF1234567890", "Incorrect API key"),
    ("Authorization: Bearer xyz-secret-token", "xyz-secret-token", "Authorization"),
    ("bearer abc.def.ghi", "abc.def.ghi", "bearer"),
    ("bad request: api_key=hunter2&model=m", "hunter2", "model=m"),
    ('{"api_key": "hunter2", "model": "m"}', "hunter2", '"model": "m"'),
    ("password='two words' then", "two words", "then"),
    ("proxy https://user:pw@proxy.example/v1 refused", "user:pw", "proxy.example/v1"),
    ("hf token hf_abcdefghijklmnopqrstuvwxyz in use", "hf_abcdefghijklmnop", "in use"),
    ("max_tokens: 16 is too large", None, "max_tokens: 16"),
])
def test_redact(text, gone, kept):
    out = redact(text)
    assert kept in out and (gone is None or gone not in out), out
    if gone:
        assert "[redacted]" in out


def test_redact_removes_the_key_that_was_sent_wherever_it_appears():
    assert redact("you sent supersecret-db-password, which is wrong", ["supersecret-db-password"]) == \
        "you sent [redacted], which is wrong"
    assert redact(None) is None


class _EchoingServer(BaseHTTPRequestHandler):
    """An OpenAI-compatible server that refuses every call and echoes the key it got."""

    def do_POST(self):
        self.rfile.read(int(self.headers["content-length"]))
        auth = self.headers.get("authorization", "")
        body = json.dumps({"error": {"message": f"Incorrect API key provided: {auth.split()[-1]}. "
                                                f"Your header was '{auth}'; api_key=other-secret-value"}})
        self.send_response(401)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args):
        pass


def test_stored_and_shown_error_text_is_redacted(db, monkeypatch, write_jsonl):
    from ingest.scoring import score, ScoreRequest
    monkeypatch.setenv("TEAM_KEY", "supersecret-db-password")
    rows = [{"prompt_id": "q", "prompt": "Q", "candidate_id": f"c{i}", "response": f"r{i}"} for i in range(2)]
    import_pool(db, write_jsonl("pool.jsonl", rows), "p")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EchoingServer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/v1"
        result = score(ScoreRequest(pool="p", judge=f"openai:m@{url}", formats=["binary"], db=db, max_retries=0,
                                    api_key_env="TEAM_KEY", progress=False))
    finally:
        server.shutdown()
    assert result["failed"] == 2
    errors = [r[0] for r in query_rows(db, "SELECT error FROM verdicts")]
    assert len(errors) == 2 and all(e.startswith("HTTP 401: ") for e in errors)
    for e in errors:
        assert "supersecret" not in e and "other-secret-value" not in e and "[redacted]" in e, e
    from ingest.runs import list_runs
    progress = json.dumps([r["progress"] for r in list_runs(db)])     # what the Score page shows
    assert "Incorrect API key" in progress and "supersecret" not in progress


# -- models load without running their code ------------------------------------------------------------

def test_no_model_is_loaded_with_remote_code():
    """No source file passes trust_remote_code=True (or a True in a kwargs dict), in any package."""
    pattern = re.compile(r"""trust_remote_code["']?\s*[=:]\s*(?!False)""")
    offenders = [f"{p.relative_to(REPO)}:{n}" for pkg in ("app", "audit", "ingest", "train")
                 for p in (REPO / pkg).rglob("*.py")
                 for n, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line)]
    assert offenders == []


def test_the_bundled_judge_loads_from_a_local_file_without_remote_code(monkeypatch):
    import os

    from ingest import settings
    source = (REPO / "ingest" / "scoring" / "judges" / "local.py").read_text()
    assert "gguf_file" in source and "trust_remote_code" not in source and "settings.hub_offline()" in source
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)       # what hub_offline leaves: no download from a hub
    settings.hub_offline()
    assert os.environ["HF_HUB_OFFLINE"] == "1"


# -- not on localhost means a login --------------------------------------------------------------------------

@pytest.mark.parametrize("address, loopback", [("localhost", True), ("127.0.0.1", True), ("127.8.0.1", True),
                                               ("::1", True), ("0.0.0.0", False), ("", False), ("::", False),
                                               ("10.0.0.5", False), ("dashboard.example.com", False)])
def test_is_loopback(address, loopback):
    assert auth.is_loopback(address) is loopback


@pytest.fixture
def no_login(monkeypatch, tmp_path):
    """No password, no secrets.toml (home and working folder both empty), and no real server."""
    monkeypatch.delenv(auth.PASSWORD_ENV, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    calls = []
    monkeypatch.setattr(dashboard.subprocess, "call", lambda argv, env: calls.append((argv, env)) or 0)
    return calls


def _app(*args) -> int:
    """`judgeaudit app ...`: its exit status (the command exits with streamlit's, here faked)."""
    try:
        return cli.main(["app", *args])
    except SystemExit as exc:
        return exc.code


def test_app_refuses_a_public_address_without_a_login(no_login, capsys, db):
    for address in ("0.0.0.0", "10.0.0.5", "::"):
        assert _app("--address", address, "--db", str(db)) == 1
        err = capsys.readouterr().err
        assert f"--address {address}: refusing to serve the dashboard beyond localhost without a login" in err
        assert "JUDGEAUDIT_APP_PASSWORD" in err
    assert no_login == []                               # streamlit never started
    assert _app("--address", "127.0.0.1", "--db", str(db)) == 0    # localhost needs none
    assert no_login[0][0][no_login[0][0].index("--server.address") + 1] == "127.0.0.1"


def test_app_starts_on_a_public_address_with_a_password(no_login, monkeypatch, db):
    monkeypatch.setenv(auth.PASSWORD_ENV, "correct horse")
    assert _app("--address", "0.0.0.0", "--db", str(db)) == 0
    argv, env = no_login[0]
    assert argv[argv.index("--server.address") + 1] == "0.0.0.0" and env[auth.PASSWORD_ENV] == "correct horse"


def test_app_with_oidc_configured(no_login, monkeypatch, tmp_path, db):
    (tmp_path / ".streamlit").mkdir()
    (tmp_path / ".streamlit" / "secrets.toml").write_text(
        '[auth]\nredirect_uri = "https://dash.example/oauth2callback"\ncookie_secret = "x"\n'
        'client_id = "id"\nclient_secret = "s"\n'
        'server_metadata_url = "https://idp.example/.well-known/openid-configuration"\n')
    assert auth.auth_mode() == "oidc"
    monkeypatch.setattr("importlib.util.find_spec", lambda name: None if name == "authlib" else object())
    with pytest.raises(UserError, match="needs the Authlib package"):
        auth.check_serving("0.0.0.0")
    monkeypatch.setattr("importlib.util.find_spec", lambda name: object())
    assert _app("--address", "0.0.0.0", "--db", str(db)) == 0 and len(no_login) == 1


def test_password_check_and_growing_delay(monkeypatch):
    assert auth.check_password("s3cret", "s3cret") and not auth.check_password("s3cre", "s3cret")
    assert auth.check_password("pässwort", "pässwort")          # not only ASCII
    throttle = auth.Throttle(base_s=0.5, cap_s=30)
    assert [throttle.delay(n) for n in range(8)] == [0, 0.5, 1, 2, 4, 8, 16, 30]   # 0.5 * 2^(n-1), capped
    assert throttle.wait_s("a") == 0
    assert throttle.failed("a") == 0.5 and throttle.failed("a") == 1.0
    assert 0.9 < throttle.wait_s("a") <= 1.0 and throttle.wait_s("b") == 0     # per client
    throttle.succeeded("a")
    assert throttle.wait_s("a") == 0 and throttle.failed("a") == 0.5           # a success starts over


def test_openai_judge_error_from_a_mock_transport_is_redacted(monkeypatch):
    import httpx

    from ingest.scoring.judges.base import CallHints, JudgeError
    from ingest.scoring.judges.openai_compat import OpenAIJudge
    monkeypatch.setenv("K", "sk-live-0123456789abcdef")
    transport = httpx.MockTransport(lambda request: httpx.Response(
        403, text=f"denied for {request.headers['authorization']} (token=abc)"))

    async def go():
        judge = OpenAIJudge("m", "http://judge.test/v1", api_key_env="K",
                            client=httpx.AsyncClient(transport=transport))
        try:
            await judge.complete([{"role": "user", "content": "hi"}], {}, CallHints(format_name="binary"))
        finally:
            await judge._client.aclose()
    with pytest.raises(JudgeError) as err:
        asyncio.run(go())
    assert str(err.value) == "HTTP 403: denied for Bearer [redacted] (token=[redacted])"


def test_the_data_folder_helpers_are_what_pages_get():
    from app import data
    assert data.safe_name is safe_name and data.file_stem is file_stem
    assert data.database().path.name == "judgeaudit.duckdb"


def test_console_script_refuses_a_public_address_without_a_login(tmp_path):
    """As a user runs it: the real `judgeaudit app`, which exits before seeding or serving anything."""
    import os
    import subprocess
    import sys
    env = {k: v for k, v in os.environ.items() if k != auth.PASSWORD_ENV} | {"HOME": str(tmp_path)}
    exe = str(Path(sys.executable).with_name("judgeaudit"))
    proc = subprocess.run([exe, "app", "--address", "0.0.0.0", "--db", str(tmp_path / "x.duckdb")], env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith("judgeaudit: error: --address 0.0.0.0: refusing to serve the dashboard")
    assert not (tmp_path / "x.duckdb").exists()


def test_a_refused_constraint_names_the_server_without_its_credentials():
    from ingest.scoring.formats import BUILTIN
    from ingest.scoring.judges._constraint import check_reply
    url = "http://user:pw-s3cret@judge.example:8000/v1/?api_key=sk-abcdef1234567890"
    for kw in ({"error": "HTTP 400: unknown field"}, {"error": "timeout"}, {"answer": "maybe"}):
        with pytest.raises(UserError) as info:
            check_reply(url, {"mechanism": "guided_choice"}, BUILTIN["likert5"], **kw)
        text = str(info.value)
        assert "http://judge.example:8000/v1" in text
        assert "pw-s3cret" not in text and "sk-abcdef" not in text and "user:" not in text
