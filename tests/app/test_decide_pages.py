"""Deciding with the labels on the dashboard, through AppTest on the demo: the Judges page's decision per
cell (too few labels to say on the MT-Bench votes), the Formats page's intransitive tournaments, and
the Label page's line of labels still needed (pure, from audit.decisions' rows)."""

import polars as pl

from app.views.label.screen import still_needed
from tests.app.conftest import run_app

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
