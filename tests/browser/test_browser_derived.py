"""The derived results in a real browser (chromium, Playwright, `judgeaudit app`): a page waiting on a
derived result shows a progress bar saying what is computed, over how many verdicts, and the time so
far; a restarted server then draws the page from the stored results without one."""

from __future__ import annotations

import time

import pytest

from tests.bench.bench_app import build
from tests.browser.test_browser import ARGS, CHROMIUM, _serve_app
from tests.conftest import query_rows

pytestmark = [pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed"), pytest.mark.slow]

# every progress bar's text the page ever shows: recorded on each change of the page by an observer
# installed before the page loads (a bar that is drawn and removed between two polls is seen too),
# and read by polling
_OBSERVE = """window.__seen = new Set();
new MutationObserver(() => {
  for (const e of document.querySelectorAll('[data-testid="stProgress"]')) window.__seen.add(e.innerText);
}).observe(document, {subtree: true, childList: true, characterData: true});"""
_SEEN = """() => { window.__seen = window.__seen || new Set();
  for (const e of document.querySelectorAll('[data-testid="stProgress"]')) window.__seen.add(e.innerText);
  return [...window.__seen]; }"""


def _first_view(url: str) -> tuple[list[str], float]:
    from playwright.sync_api import sync_playwright
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1300, "height": 900})
        page.add_init_script(_OBSERVE)
        t0 = time.time()
        page.goto(f"{url}/formats?pool=big")
        seen = []
        while not page.query_selector("[data-testid='stDataFrame']") and time.time() - t0 < 300:
            seen = page.evaluate(_SEEN)
            time.sleep(0.1)
        took = time.time() - t0
        assert page.query_selector("[data-testid='stDataFrame']"), "the Formats page drew no table"
        # the page's later sections (below the first table) read results of their own: the view ends
        # when the script has run to its end (Streamlit's running indicator gone)
        quiet_since = time.time()
        while time.time() - quiet_since < 3 and time.time() - t0 < 300:
            if page.query_selector("[data-testid='stStatusWidget']") or page.query_selector("[data-testid='stProgress']"):
                quiet_since = time.time()
            time.sleep(0.2)
        seen = page.evaluate(_SEEN)
        browser.close()
    return seen, took


def test_a_page_waiting_on_a_derived_result_shows_what_it_computes(tmp_path):
    db = tmp_path / "big.duckdb"
    build(db, 100_000)           # 400k candidates x 5 formats, 2.2M verdicts: seconds to compute
    gen = _serve_app({"JUDGEAUDIT_DB": str(db)})
    url = next(gen)
    try:
        seen, _ = _first_view(url)
    finally:
        next(gen, None)
    assert seen, "no progress bar while the derived results were computed"
    assert any("Computing the audit's cells" in s and "pool 'big' (2,200,000 verdicts)" in s and "s so far" in s
               for s in seen), seen
    names = {r[0] for r in query_rows(db, "SELECT name FROM derived_results")}
    assert {"cells", "score_values"} <= names
    gen = _serve_app({"JUDGEAUDIT_DB": str(db)})     # a restarted server: nothing in its memory
    url = next(gen)
    try:
        seen, _ = _first_view(url)
    finally:
        next(gen, None)
    assert seen == []                                # read from the store, nothing computed
