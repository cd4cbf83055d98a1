"""The Label and Trust pages through Streamlit's AppTest on the bundled demo: draw a queue, label
blind (no system name on screen), skip, undo; the response order maps back to the stored pair; the
Trust page's headline and intervals on mtbench's expert votes."""

import pytest
from streamlit.testing.v1 import AppTest

from app.views.label.screen import stored_label
from app.views.trust.worth import best_per_format, headline
from tests.conftest import REPO, query_rows

SYSTEMS = ("alpaca-13b", "claude-v1", "gpt-3.5-turbo", "gpt-4", "llama-13b", "vicuna-13b-v1.2")


def _app(db, monkeypatch, pool="mtbench"):
    monkeypatch.setenv("JUDGEAUDIT_DB", str(db))
    at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=180).run()
    at.sidebar.selectbox[0].select(pool).run()
    return at


def test_the_pressed_key_is_turned_to_the_stored_pair():
    # the stored pair is (a_idx 4, b_idx 9); shown with 9 as Response A, "A is better" means b_idx wins
    assert [stored_label(k, 4, 4) for k in ("A", "B", "tie")] == ["A", "B", "tie"]
    assert [stored_label(k, 9, 4) for k in ("A", "B", "tie")] == ["B", "A", "tie"]


def test_label_blind_skip_and_undo(demo_db, monkeypatch):
    at = _app(demo_db, monkeypatch)
    at.switch_page("views/label/page.py").run()
    assert not at.exception and at.info                      # no annotator yet
    at.text_input[0].input("ann-app").run()
    at.button(key="FormSubmitter:new_queue-Draw the queue").click().run()
    assert not at.exception, [e.value for e in at.exception]
    screen = " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)
    assert "Response A" in screen and "Response B" in screen
    assert not any(s in screen for s in SYSTEMS)             # blind: no system named
    at.button(key="label_A").click().run()
    at.button(key="skip").click().run()
    at.button(key="label_tie").click().run()
    rows = query_rows(demo_db, "SELECT label FROM pair_labels WHERE annotator = 'ann-app'")
    assert len(rows) == 2 and ("tie",) in rows
    states = query_rows(demo_db, "SELECT state FROM label_queue_items i JOIN label_queues q USING (queue_id) "
                                 "WHERE q.annotator = 'ann-app' ORDER BY position")
    assert [s for (s,) in states][:4] == ["labelled", "skipped", "labelled", "pending"]
    at.button(key="undo").click().run()
    assert query_rows(demo_db, "SELECT count(*) FROM pair_labels WHERE annotator = 'ann-app'") == [(1,)]
    assert "1 labelled, 1 skipped" in at.get("progress")[0].proto.text
    # a second queue from one cell's judged pairs, active (uniform until 40 labels): it opens at once
    pick = next(b for b in at.selectbox if b.label == "From the judged items of")
    pick.set_value(next(o for o in pick.options if o.startswith("GPT-4 / ")))
    at.radio[1].set_value("active")
    at.button(key="FormSubmitter:new_queue-Draw the queue").click().run()
    assert not at.exception, [e.value for e in at.exception]
    queues = query_rows(demo_db, "SELECT queue_id, judge, strategy, active FROM label_queues "
                                 "WHERE annotator = 'ann-app' ORDER BY queue_id")
    assert [q[1:] for q in queues] == [(None, "random", False), ("GPT-4", "active", False)]
    assert "0 labelled, 0 skipped" in at.get("progress")[0].proto.text


def test_the_trust_page_on_mtbench(demo_db, monkeypatch):
    at = _app(demo_db, monkeypatch)
    at.switch_page("views/trust/page.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.success and "verdicts" in at.success[0].value and "labels" in at.success[0].value
    assert len(at.dataframe) >= 1
    at.radio[0].set_value("accept").run()                     # mtbench has no accept labels
    assert not at.exception and at.info


def test_the_headline_names_the_format_worth_the_most():
    import polars as pl
    cells = pl.DataFrame({"judge": ["j", "j", "k"], "format": ["likert5", "binary", "likert5"],
                          "decoding": ["greedy"] * 3, "system": [None] * 3, "n_labelled": [20, 20, 20],
                          "effective_labels": [31.6, 24.0, 40.2]})
    best = best_per_format(cells)
    assert best["format"].to_list() == ["likert5", "binary"] and best["judge"][0] == "k"
    assert headline(best, "mine").startswith("**likert5**'s verdicts (k) are worth **40 labels** on mine")


@pytest.mark.parametrize("pool", ["mtbench-formats", "llmbar", "arena-bench"])
def test_both_pages_render_on_every_demo_pool(demo_db, monkeypatch, pool):
    at = _app(demo_db, monkeypatch, pool)
    for page in ("label", "trust"):
        at.switch_page(f"views/{page}/page.py").run()
        assert not at.exception, (pool, page, [e.value for e in at.exception])
        assert at.header[0].value
