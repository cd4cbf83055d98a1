"""Idle is nearly free, and a page following a run meets no lock (docs/command-line.md#background-runs),
in a real browser (Debian's chromium through Playwright) against `judgeaudit app`: an idle page asks
the server for at most one look in 10 s (its runs panel's look for a run started elsewhere, every
WATCH_S), an idle Score page shows a run started from the command line without a reload, and while
that scoring run of 60 calls goes on with the page following it, neither the server nor the run
waits for the database's lock ("... is in use by another process; waiting for it" is never said)."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.cli import command_line, request_for
from app.runs_panel import WATCH_S
from ingest import runs
from tests.browser.test_browser import ARGS, CHROMIUM
from tests.conftest import free_port, wait_http
from tests.fixtures import synthetic_pool, write_jsonl

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install "
                                                         "chromium); .ci/run installs it where apt works")
WAITING = "is in use by another process; waiting"


@pytest.fixture
def served(tmp_path, monkeypatch):
    """`judgeaudit app` on a pool 'mine' of 10 prompts x 6 answers (60 likert5 calls), its stderr kept;
    commands refresh their derived results as they end, as outside the tests."""
    from ingest.store import import_pool
    monkeypatch.delenv("JUDGEAUDIT_NO_DERIVE")
    db, log = tmp_path / "quiet.duckdb", tmp_path / "server.log"
    import_pool(db, write_jsonl(tmp_path / "mine.jsonl", synthetic_pool(10, k_range=(6, 6), seed=4)), "mine")
    port = free_port()
    exe = str(Path(sys.executable).with_name("judgeaudit"))
    with open(log, "w") as err:
        proc = subprocess.Popen([exe, "app", "--port", str(port), "--address", "127.0.0.1"],
                                env={**os.environ, "JUDGEAUDIT_DB": str(db)}, stdout=subprocess.DEVNULL, stderr=err,
                                start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    if not wait_http(url + "/_stcore/health"):
        proc.kill()
        pytest.fail("the dashboard did not start within 120 s")
    yield url, db, log
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=30)


def _drawn(page) -> None:
    """The page's script has run to its end (Streamlit's status widget gone), and a second since."""
    from playwright.sync_api import expect
    page.wait_for_timeout(500)
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0)
    page.wait_for_timeout(1000)


def _reruns_in(page, sent: list, seconds: float) -> int:
    """The websocket frames the page sent (each a rerun it asked for) over the next `seconds`."""
    before = len(sent)
    page.wait_for_timeout(seconds * 1000)
    return len(sent) - before


def _follow(page) -> list:
    """The times of the websocket frames the page sends from now on (each a rerun it asked for)."""
    sent = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda payload: sent.append(time.monotonic())))
    return sent


PANEL_PAGES = ("curate", "probes", "evaluate", "align", "score")       # the pages with a runs panel


def test_an_idle_page_reruns_never_and_a_followed_run_waits_for_no_lock(served):
    from playwright.sync_api import expect, sync_playwright
    url, db, log = served
    expect.set_options(timeout=120_000)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        # every page with a runs panel open in a tab of its own, all idle over the same 10 s (Playwright's
        # chromium keeps a tab in the background at full speed: its timers are not throttled)
        tabs = {}
        for name in PANEL_PAGES:
            tab = browser.new_page(viewport={"width": 1400, "height": 900})
            tab.set_default_timeout(120_000)
            tabs[name] = tab, _follow(tab)
            tab.goto(f"{url}/{name}?pool=mine")
            _drawn(tab)
        page, sent = tabs["score"]
        before = {name: len(frames) for name, (_, frames) in tabs.items()}
        page.wait_for_timeout(10_000)
        idle = {name: len(frames) - before[name] for name, (_, frames) in tabs.items()}
        assert all(n <= 1 for n in idle.values()), idle       # was 10 (Score) to 15 (Curate) in 10 s
        for name in PANEL_PAGES[:-1]:
            tabs[name][0].close()

        # a scoring run started elsewhere (its own process, a row, a log), the Score page left open: it
        # shows there without a reload, within a look for runs started elsewhere (WATCH_S)
        request = request_for("score", pool="mine", judge_spec="fake:quiet?latency_ms=500", formats=["likert5"],
                              concurrency=1)
        run_id = runs.launch(db, "score", [sys.executable, "-m", "app.cli", *command_line(request)], request=request,
                             pool="mine", key=runs.run_key("score", "mine", "quiet"))
        out = runs.runs_dir(db) / f"{run_id}-score"         # its folder (read here without the database)
        expect(page.get_by_text(f"Run {run_id} · running")).to_be_visible(timeout=(WATCH_S + 10) * 1000)
        during = len(sent)
        deadline = time.monotonic() + 300
        state = {}
        while time.monotonic() < deadline:         # the run's live file, as the page reads it
            state = json.loads((out / runs.LIVE_FILE).read_text()) if (out / runs.LIVE_FILE).exists() else {}
            if state.get("status") == "finished" and not runs.alive(state["pid"], None):
                break
            page.wait_for_timeout(500)
        assert state.get("status") == "finished" and state["progress"]["done"] == 60
        assert len(sent) - during >= 5                    # the page followed it: a look a second or so
        expect(page.get_by_text(f"Run {run_id} · finished")).to_be_visible()
        _drawn(page)
        assert _reruns_in(page, sent, 5) <= 1             # quiet again once it ended (at most one look in 5 s)
        browser.close()
    server = log.read_text()
    run_log = (out / "run.log").read_text()
    assert server.count(WAITING) == 0, server[-2000:]
    assert run_log.count(WAITING) == 0, run_log[-2000:]
