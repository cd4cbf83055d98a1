"""The Label page in a real browser (Debian's chromium through Playwright, against `judgeaudit app`):
five items labelled with the keyboard alone, a reload that keeps the annotator and the queue's place
(both in the address), and labelling that continues from there."""

import re

import pytest

from tests.browser.test_browser import ARGS, CHROMIUM, _serve_app
from tests.browser.test_browser_reload import _choose, _settled
from tests.conftest import query_rows
from tests.fixtures import synthetic_pool, write_jsonl

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install "
                                                         "chromium); .ci/run installs it where apt works")


@pytest.fixture
def queued(tmp_path):
    """A pool 'mine' and a queue of 8 pairs for annotator 'ann' (queue 1), served by the dashboard."""
    from audit import draw_label_queue
    from ingest.store import import_pool, save_label_queue
    db = tmp_path / "label.duckdb"
    import_pool(db, write_jsonl(tmp_path / "mine.jsonl", synthetic_pool(6, seed=2)), "mine")
    plan = draw_label_queue(db, "mine", 8, annotator="ann", seed=1)
    save_label_queue(db, "mine", "ann", "pair", "random", None, None, None, 1, plan["n_frame"], False,
                     plan["items"].select("prompt_idx", "a_idx", "b_idx", "cand_idx", "pi"))
    for url in _serve_app({"JUDGEAUDIT_DB": str(db)}):
        yield url, db


def test_label_five_items_by_keyboard_reload_and_continue(queued):
    from playwright.sync_api import expect, sync_playwright
    url, db = queued
    expect.set_options(timeout=60_000)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(60_000)
        page.goto(url + "/label?pool=mine")           # the annotator types their name and picks the queue
        expect(page.get_by_role("heading", name="Label")).to_be_visible()
        name = page.get_by_role("textbox", name="Annotator")
        name.fill("ann")
        name.press("Enter")
        expect(page).to_have_url(re.compile(r"annotator=ann"))
        _choose(page, page.get_by_role("combobox", name="Queue"), "1")
        expect(page).to_have_url(re.compile(r"queue=1"))
        page.get_by_role("heading", name="Label").click()    # the keys go to the page, not the text box
        progress = page.get_by_test_id("stProgress")
        expect(progress).to_contain_text("0 labelled, 0 skipped, 8 to go")
        for k, key in enumerate("abtab", start=1):
            _settled(page)                            # a key pressed while the page still draws can be lost
            page.keyboard.press(key)
            expect(progress).to_contain_text(f"{k} labelled, 0 skipped")
        assert query_rows(db, "SELECT count(*) FROM pair_labels WHERE annotator = 'ann'") == [(5,)]
        page.reload()
        expect(progress).to_contain_text("5 labelled, 0 skipped, 3 to go")
        expect(page.get_by_role("textbox", name="Annotator")).to_have_value("ann")
        expect(page).to_have_url(re.compile(r"annotator=ann.*queue=1|queue=1.*annotator=ann"))
        page.get_by_role("heading", name="Label").click()    # the keys go to the page again, once it is drawn
        _settled(page)
        page.keyboard.press("s")                      # skip one, then label the next
        expect(progress).to_contain_text("5 labelled, 1 skipped")
        _settled(page)
        page.keyboard.press("t")
        expect(progress).to_contain_text("6 labelled, 1 skipped, 1 to go")
        browser.close()
    labels = query_rows(db, "SELECT label FROM pair_labels WHERE annotator = 'ann' ORDER BY imported_at")
    assert len(labels) == 6 and labels[-1] == ("tie",)
    assert query_rows(db, "SELECT state FROM label_queue_items WHERE queue_id = 1 ORDER BY position") == \
        [("labelled",)] * 5 + [("skipped",), ("labelled",), ("pending",)]
