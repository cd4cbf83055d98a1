"""Deciding with the labels on the dashboard, through AppTest on the demo: the Judges page's decision per
cell (too few labels to say on the MT-Bench votes), the Formats page's intransitive tournaments, and
the Label page's line of labels still needed (pure, from audit.decisions' rows)."""

import polars as pl

from app.views.label.screen import still_needed
from tests.app.conftest import open_page, run_app

DEMO_POOLS_SEEDED = ("mtbench-formats", "mtbench")


def test_the_judges_page_says_the_decision_per_cell(demo_db, monkeypatch):
    monkeypatch.delenv("JUDGEAUDIT_CONFIG", raising=False)
    at = run_app(demo_db, monkeypatch)
    at.sidebar.selectbox[0].select("mtbench").run()
    at.switch_page("views/judges/page.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(s.value == "The decision, per cell" for s in at.subheader)
    said = [m.value for m in at.markdown if "alternative annotator test" in m.value]
    assert len(said) == 10                              # 5 judges (the jury too) x 2 formats
    gpt4 = next(m for m in said if m.startswith("- **GPT-4 / llmbar-pair-vanilla-norules / greedy**"))
    # 88 items labelled twice, no annotator with 30 of them: too few to say, and who is closest
    assert "too few labels to say: no annotator has 30 items" in gpt4 and "author_4 needs 19 more" in gpt4
    assert "human labels per system" in gpt4 and "n = 50 labelled pairs" in gpt4
    assert "no price per label in judgeaudit.toml" in gpt4


def test_the_judges_page_takes_h_and_epsilon_from_its_fields_and_keeps_them_in_the_address(demo_db, monkeypatch):
    from audit import decisions
    monkeypatch.delenv("JUDGEAUDIT_CONFIG", raising=False)
    at = open_page(demo_db, monkeypatch, "judges", {"pool": "mtbench", "decision_h": "0.1", "decision_epsilon": "0.15"})
    assert not at.exception, [e.value for e in at.exception]
    # the address's values open the fields and reach the sentences
    assert (at.number_input(key="decision_h").value, at.number_input(key="decision_epsilon").value) == (0.1, 0.15)
    said = [m.value for m in at.markdown if "alternative annotator test" in m.value]
    assert len(said) == 10 and all("at ε = 0.15" in m and "±0.1 on" in m for m in said)
    # the same sentences as audit.decisions at ±0.1 and ε 0.15 (the cheapest plan's labels at ±0.1: the
    # plan's own arithmetic, tested in tests/audit/test_plan.py)
    want = {f"- **{r['judge']} / {r['format']} / {r['decoding']}**: {r['decision']}"
            for r in decisions(demo_db, "mtbench", 0.1, 0.15).to_dicts()}
    assert set(said) == want
    # a field changed by hand reaches the sentences (the address's writing is Streamlit's binding, which
    # tests/app/test_url_state.py checks every bound field uses)
    at.number_input(key="decision_h").set_value(0.02).run()
    at.number_input(key="decision_epsilon").set_value(0.2).run()
    said = [m.value for m in at.markdown if "alternative annotator test" in m.value]
    assert len(said) == 10 and all("±0.02 on" in m and "at ε = 0.2:" in m for m in said)


def test_the_report_page_takes_h_and_epsilon_from_its_fields_and_keeps_them_in_the_address(demo_db, monkeypatch):
    from audit import decisions
    monkeypatch.delenv("JUDGEAUDIT_CONFIG", raising=False)
    at = open_page(demo_db, monkeypatch, "report", {"pool": "mtbench", "report_h": "0.1", "report_epsilon": "0.15"})
    assert not at.exception, [e.value for e in at.exception]
    assert (at.number_input(key="report_h").value, at.number_input(key="report_epsilon").value) == (0.1, 0.15)

    def shown():
        return "\n".join(m.value for m in at.markdown)

    # the section's lines are audit.decisions' at ±0.1 and ε 0.15, as `report --half-width 0.1 --epsilon 0.15`
    # writes them (tests/audit/test_decision.py)
    want = [f"- **{r['judge']} × {r['format']} × {r['decoding']}**: {r['decision']}"
            for r in decisions(demo_db, "mtbench", 0.1, 0.15).to_dicts()]
    assert len(want) == 10 and all(line in shown() for line in want)
    assert "alternative annotator test at ε = 0.15 (`alt-test`) and what ±0.1 would cost" in shown()
    assert "±0.05 on" not in shown() and "at ε = 0.2:" not in shown()
    # a field changed by hand reaches the section
    at.number_input(key="report_h").set_value(0.02).run()
    at.number_input(key="report_epsilon").set_value(0.2).run()
    assert not at.exception, [e.value for e in at.exception]
    lines = [line for line in shown().splitlines() if line.startswith("- **") and "alternative annotator" in line]
    assert len(lines) == 10 and all("±0.02 on" in m and "at ε = 0.2:" in m for m in lines)


def test_the_label_page_plans_for_the_h_of_its_field(demo_db, monkeypatch):
    from audit import decisions
    from app.views.label.screen import still_needed
    monkeypatch.delenv("JUDGEAUDIT_CONFIG", raising=False)
    at = run_app(demo_db, monkeypatch)
    at.sidebar.selectbox[0].select("mtbench").run()
    at.switch_page("views/label/page.py").run()
    at.text_input[0].input("ann-h").run()
    pick = next(b for b in at.selectbox if b.label == "From the judged items of")
    pick.set_value(next(o for o in pick.options if o.startswith("GPT-4 / llmbar-pair-vanilla-norules")))
    at.button(key="draw_queue").click().run()
    assert not at.exception, [e.value for e in at.exception]
    queue = {"judge": "GPT-4", "format": "llmbar-pair-vanilla-norules", "decoding": "greedy", "kind": "pair"}
    for h in (0.05, 0.2):
        if h != 0.05:
            at.number_input(key="label_h").set_value(h).run()
        assert at.number_input(key="label_h").value == h
        # the line the page shows is the one audit.decisions' row at this H gives (still_needed's words
        # are tested by hand in test_the_label_page_line)
        want = still_needed(decisions(demo_db, "mtbench", h), queue)
        assert f"±{h:g} on every system's win rate" in want
        assert any(c.value == want for c in at.caption), [c.value for c in at.caption]


def test_the_formats_page_shows_intransitive_tournaments(demo_db, monkeypatch):
    at = run_app(demo_db, monkeypatch)
    at.sidebar.selectbox[0].select("mtbench-formats").run()
    at.switch_page("views/formats/page.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(s.value == "Intransitive tournaments" for s in at.subheader)
    lines = [m.value for m in at.markdown if "decisive triads" in m.value]
    assert any(line.startswith("- **smollm2-demo-t1** / tournament / constrained: 8% of 24 decisive triads in 6 "
                               "prompts form a cycle") and "a judge flipping coins: 25%" in line for line in lines)


def _decisions(**row):
    base = {"judge": "j", "format": "likert5", "decoding": "greedy", "target": "accept", "n_labelled": 30,
            "half_width": 0.05, "labels_needed": 170, "cost_usd": 85.0}
    return pl.DataFrame([base | row])


def test_the_label_page_line():
    queue = {"judge": "j", "format": "likert5", "decoding": "greedy", "kind": "accept"}
    assert still_needed(_decisions(), queue) == ("170 more labels (≈ $85.00) to reach ±0.05 on the accept rate, "
                                                 "beyond the 30 in (the cheapest plan)")
    assert still_needed(_decisions(cost_usd=None), queue).startswith("170 more labels to reach ±0.05")
    assert still_needed(_decisions(labels_needed=None), queue) == \
        "Too few labels to say how many more would reach ±0.05 on the accept rate."
    assert "is reached with the 30 labels in" in still_needed(_decisions(labels_needed=0), queue)
    # a pair queue of a cell decided on accept labels, or a queue of no cell: no line
    assert still_needed(_decisions(), queue | {"kind": "pair"}) is None
    assert still_needed(_decisions(), queue | {"judge": None}) is None
