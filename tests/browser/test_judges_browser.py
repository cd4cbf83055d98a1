"""The Judges page in a real browser (chromium via Playwright, as tests/browser/test_browser.py): on a
pool with token counts, prices and human labels, the chart of agreement against cost with its Pareto
front draws, beside the leaderboard; a cell without a price says so."""

import pytest

from tests.audit.test_judges import build_board
from tests.browser.test_browser import ARGS, CHROMIUM, _serve_app

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")


@pytest.fixture
def board_url(tmp_path):
    db = build_board(tmp_path)
    yield from _serve_app({"JUDGEAUDIT_DB": str(db)})


def test_the_judges_page_draws_agreement_against_cost(board_url, tmp_path):
    from playwright.sync_api import expect, sync_playwright
    expect.set_options(timeout=120_000)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        page = browser.new_page()
        page.set_default_timeout(120_000)
        page.goto(board_url + "/judges?pool=p")
        expect(page.get_by_role("heading", name="Agreement with humans against cost")).to_be_visible()
        expect(page.locator(".vega-embed").first).to_be_visible()
        expect(page.get_by_text("the dashed line joins the Pareto front")).to_be_visible()
        # gamma has no price, so its cells and the jury's (gamma is a member) are off the chart, with the reason
        expect(page.get_by_text("no price for gamma in judgeaudit.toml").first).to_be_visible()
        expect(page.get_by_role("heading", name="Leaderboard")).to_be_visible()
        page.screenshot(path=str(tmp_path / "judges.png"), full_page=True)
        browser.close()
