"""End to end in a real browser: Debian's chromium, driven by Playwright, against `judgeaudit app`.
Open the app, upload a pool, see the histograms and the tie table, download the checklist."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import free_port, sidebar_link, wait_http
from tests.fixtures import synthetic_pool, synthetic_verdicts, write_jsonl
from tests.openai_server import OpenAIServer

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install "
                                                         "chromium); .ci/run installs it where apt works")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--no-first-run", "--disable-sync", "--disable-quic"]


def _serve_app(env: dict):
    """`judgeaudit app` on a free loopback port with `env` added; yields its URL, then stops it."""
    port = free_port()
    exe = str(Path(sys.executable).with_name("judgeaudit"))
    proc = subprocess.Popen([exe, "app", "--port", str(port), "--address", "127.0.0.1"], env={**os.environ, **env},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    if not wait_http(url + "/_stcore/health"):
        proc.kill()
        pytest.fail("the dashboard did not start within 120 s")
    yield url
    os.killpg(proc.pid, 15)
    proc.wait(timeout=30)


def _settled(page) -> None:
    """Wait until the script run is over (Streamlit's 'Running...' status is gone)."""
    from playwright.sync_api import expect
    page.wait_for_timeout(300)
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0)


@pytest.fixture
def app_url(tmp_path):
    (tmp_path / "apptmp").mkdir()   # the app's temporary folder: uploads must not be left there
    yield from _serve_app({"JUDGEAUDIT_DB": str(tmp_path / "browser.duckdb"), "TMPDIR": str(tmp_path / "apptmp")})


def test_upload_histograms_ties_and_checklist(app_url, tmp_path):
    from playwright.sync_api import expect, sync_playwright
    rows = synthetic_pool(15, seed=5)
    pool_file = write_jsonl(tmp_path / "browser-pool.jsonl", rows)
    bad_file = tmp_path / "bad-pool.jsonl"
    bad_file.write_text('{"prompt_id": "q", "prompt": "x", "candidate_id": "a", "response": "r"}\n{oops\n')
    verdicts = write_jsonl(tmp_path / "v.jsonl", synthetic_verdicts(rows, seed=5))

    expect.set_options(timeout=90_000)
    with OpenAIServer() as srv, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        page = browser.new_page(accept_downloads=True)
        page.set_default_timeout(90_000)
        page.goto(app_url)
        # the landing page: the five-format demo's Overview, with findings in words
        expect(page.get_by_role("heading", name="Overview")).to_be_visible()
        expect(page.get_by_text("greedy → constrained decoding").first).to_be_visible()
        expect(page.locator(".vega-embed").first).to_be_visible()

        sidebar_link(page, "Pool").click()
        expect(page.get_by_label("Pool name")).to_be_visible()       # the Pool page has run: its uploader is live
        page.locator("input[type=file]").set_input_files(str(bad_file))
        expect(page.get_by_text("bad-pool.jsonl").first).to_be_visible()   # the upload reached the server
        page.get_by_label("Pool name").fill("broken")
        page.get_by_role("button", name="Import").click()
        expect(page.get_by_text("bad-pool.jsonl, line 2: not valid JSON")).to_be_visible()

        page.locator("input[type=file]").set_input_files(str(pool_file))
        expect(page.get_by_text("browser-pool.jsonl").first).to_be_visible()
        page.get_by_label("Pool name").fill("browser")
        page.get_by_role("button", name="Import").click()
        expect(page.get_by_role("heading", name="Pool browser")).to_be_visible()
        expect(page).to_have_url(re.compile(r"/pool\?pool=browser$"))         # the new pool, in the address

        # verdicts for the new pool arrive from the CLI while the dashboard is open
        exe = str(Path(sys.executable).with_name("judgeaudit"))
        subprocess.run([exe, "import-verdicts", str(verdicts), "--pool", "browser"], check=True,
                       env={**os.environ, "JUDGEAUDIT_DB": str(tmp_path / "browser.duckdb")}, capture_output=True)

        sidebar_link(page, "Formats").click()
        expect(page.get_by_text("Score histograms")).to_be_visible()
        expect(page.locator(".vega-embed").first).to_be_visible()
        expect(page.get_by_text("Diagnostics across judges")).to_be_visible()
        page.screenshot(path=str(tmp_path / "formats.png"), full_page=True)

        # Test connection: one real call to the loopback test server, its raw reply and parsed answer
        sidebar_link(page, "Score").click()
        page.get_by_text("Other endpoint (no API key)").click()
        page.get_by_label("Base URL").fill(srv.url)
        page.get_by_label("Model", exact=True).fill("test-judge")
        page.get_by_label("Model", exact=True).press("Enter")
        _settled(page)                        # the rerun the Enter started: its buttons replace the old ones
        page.get_by_role("button", name="Test connection").click()
        expect(page.get_by_text("parsed answer ACCEPT")).to_be_visible()
        assert srv.requests >= 1

        sidebar_link(page, "Report").click()                   # every page shows: no "View more"
        with page.expect_download() as info:
            page.get_by_role("button", name="Download Markdown").click()
        text = Path(info.value.path()).read_text()
        assert text.startswith("# Reporting checklist: pool `browser`") and "Parse rate" in text
        browser.close()
    assert not list((tmp_path / "apptmp").glob("judgeaudit-upload-*"))   # both uploads cleaned up


@pytest.fixture
def locked_app_url(tmp_path):
    """`judgeaudit app` with a password set: every page is behind the login."""
    yield from _serve_app({"JUDGEAUDIT_DB": str(tmp_path / "locked.duckdb"), "JUDGEAUDIT_APP_PASSWORD": "open sesame"})


def test_password_gate(locked_app_url):
    from playwright.sync_api import expect, sync_playwright
    expect.set_options(timeout=90_000)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        page = browser.new_page()
        page.set_default_timeout(90_000)
        page.goto(locked_app_url)
        password = page.get_by_label("Password", exact=True)
        expect(password).to_be_visible()
        expect(page.get_by_role("link", name="Formats")).to_have_count(0)      # no page before the login
        password.fill("open sesame!")
        page.get_by_role("button", name="Log in").click()
        expect(page.get_by_text("Wrong password.")).to_be_visible()
        expect(page.get_by_text("Findings")).to_have_count(0)
        page.wait_for_timeout(1000)                                            # the delay after one failure
        password.fill("open sesame")
        page.get_by_role("button", name="Log in").click()
        expect(page.get_by_role("heading", name="Overview")).to_be_visible()
        sidebar_link(page, "Score").click()
        expect(page.get_by_text("API key variable")).to_have_count(0)         # no key box on the Score page
        expect(page.get_by_role("radio", name="Simulated judge")).to_be_visible()
        browser.close()


@pytest.mark.slow
def test_train_on_the_demo_survives_a_reload_and_finishes(app_url):
    """Curate & Train on the bundled demo: the quick preset cut to 2 steps, Train pressed, the page
    reloaded while the run works, and the run (a background process) seen finished afterwards."""
    import re

    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=90_000)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        page = browser.new_page()
        page.set_default_timeout(90_000)
        page.goto(app_url + "/curate")                                  # the page's own address
        expect(page.get_by_text("Tie-broken picks")).to_be_visible()
        steps = page.get_by_label("Max steps (0: epochs)")
        steps.fill("2")
        steps.press("Enter")
        expect(page.get_by_text("--max-steps 2")).to_be_visible()      # the command the button runs
        _settled(page)              # until the rerun ends, the old Train button can stand beside the new one
        train = page.get_by_role("button", name="Train", exact=True)
        expect(train).to_have_count(1)
        train.click()
        expect(page.get_by_text(re.compile(r"Started run \d+"))).to_be_visible()
        expect(page.get_by_text(re.compile(r"Run \d+ · (queued|running)"))).to_be_visible()
        page.reload()                             # a new session on the same page; the run goes on
        expect(page.get_by_text("Tie-broken picks")).to_be_visible()
        expect(page.get_by_text(re.compile(r"Run \d+ · finished"))).to_be_visible(timeout=600_000)
        expect(page.get_by_text(re.compile(r"Run \d+ · failed"))).to_have_count(0)
        browser.close()
