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
    at.button(key="draw_queue").click().run()
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
    at.radio(key="queue_strategy").set_value("active")
    at.button(key="draw_queue").click().run()
    assert not at.exception, [e.value for e in at.exception]
    queues = query_rows(demo_db, "SELECT queue_id, judge, strategy, active FROM label_queues "
                                 "WHERE annotator = 'ann-app' ORDER BY queue_id")
    assert [q[1:] for q in queues] == [(None, "random", False), ("GPT-4", "active", False)]
    assert "0 labelled, 0 skipped" in at.get("progress")[0].proto.text


def test_a_queue_offers_only_the_cells_that_fit_its_kind(demo_db, monkeypatch):
    # mtbench-formats' cells: pointwise binary, likert5, numeric100; comparative anchored and tournament. An
    # accept queue asks about one response: only a pointwise cell's score predicts its label (the draw itself
    # refuses a comparative cell), so anchored and tournament are not offered; a pair queue takes every cell
    import polars as pl

    from app.views.label.screen import NO_CELL, queue_cells
    cells = pl.DataFrame({"judge": ["j"] * 3, "format": ["anchored", "likert5", "tournament"],
                          "decoding": ["greedy"] * 3, "kind": ["comparative", "pointwise", "comparative"]})
    assert list(queue_cells(cells, "accept")) == [NO_CELL, "j / likert5 / greedy"]
    assert queue_cells(cells, "accept")["j / likert5 / greedy"] == ("j", "likert5", "greedy")
    assert list(queue_cells(cells, "pair")) == [NO_CELL, "j / anchored / greedy", "j / likert5 / greedy",
                                                "j / tournament / greedy"]
    at = _app(demo_db, monkeypatch, "mtbench-formats")
    at.switch_page("views/label/page.py").run()
    at.text_input[0].input("ann-kinds").run()
    offered = at.selectbox(key="queue_cell").options
    assert any("/ tournament /" in o for o in offered) and any("/ anchored /" in o for o in offered)
    at.radio(key="queue_kind").set_value("accept").run()
    assert not at.exception, [e.value for e in at.exception]
    offered = at.selectbox(key="queue_cell").options
    assert offered[0] == NO_CELL and len(offered) > 1
    assert not any("/ tournament /" in o or "/ anchored /" in o for o in offered), offered


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


def test_worth_resting_on_too_few_labels_is_too_few_to_say():
    # the "worth 9 labels" resting on 4 labels: under audit.MIN_N = 5 labels the headline cautions
    import polars as pl
    cells = pl.DataFrame({"judge": ["j", "k"], "format": ["likert5", "binary"], "decoding": ["greedy"] * 2,
                          "system": [None] * 2, "n_labelled": [4, 6], "effective_labels": [9.2, 7.4]})
    best = best_per_format(cells)
    # likert5 is worth the most but rests on 4 labels; binary's 7 rest on 6: the headline names binary's
    assert headline(best, "mine").startswith("**binary**'s verdicts (k) are worth **7 labels** on mine: 6 human "
                                             "labels with the verdicts")
    only_few = best.filter(pl.col("format") == "likert5")
    assert headline(only_few, "mine") == (
        "Too few to say what the verdicts are worth on mine: **likert5**'s would be worth 9 labels, but that rests "
        "on 4 human labels (at least 5 needed); label more items on the Label page.")


def test_a_target_with_no_spread_says_why_nothing_is_valued():
    # every labelled item carries the same human value: the interval from the labels alone has no width, so no
    # cell has effective_labels (the table would read "empty"); the page says why instead
    import polars as pl
    from app.views.trust.worth import unvalued
    flat = pl.DataFrame({"judge": ["j", "j"], "format": ["likert5", "binary"], "n_labelled": [6, 6],
                         "classical_value": [1.0, 1.0], "classical_lo": [1.0, 1.0], "classical_hi": [1.0, 1.0],
                         "effective_labels": [None, None]}, schema_overrides={"effective_labels": pl.Float64})
    assert unvalued(flat) == (
        "No format's verdicts can be valued in labels yet. No spread: in every cell the labelled items all carry the "
        "same human value (θ = 1), so the interval from the labels alone has no width for the verdicts to narrow; "
        "label items where the answer differs.")
    one = flat.with_columns(pl.lit(1).alias("n_labelled"))
    assert unvalued(one).endswith("Too few to say in any case: at most 1 human label a cell (at least 5 needed).")
    few = flat.with_columns(pl.Series("classical_lo", [0.2, 0.1]), pl.lit(3).alias("n_labelled"))
    assert unvalued(few) == ("No format's verdicts can be valued in labels yet: too few to say, at most 3 human "
                             "labels a cell (at least 5 needed).")
    assert unvalued(flat.with_columns(pl.lit(6.0).alias("effective_labels"))) is None


def test_a_classical_interval_of_no_width_values_the_verdicts_at_nothing_not_zero():
    # audit/_estimate.py: labels that do not vary leave no width for the verdicts to narrow: undefined, not 0
    from audit._estimate import effective_labels
    assert effective_labels(6, 0.0, 0.05) is None and effective_labels(6, 0.1, 0.05) == 24.0
