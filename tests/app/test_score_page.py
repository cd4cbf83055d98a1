"""Score, for a first user: the simulated judge's settings on the page, its time estimate (calls x
latency / concurrency), and a run card that names the judge and the formats (app/run_card.py)."""

import time

import pytest
from streamlit.testing.v1 import AppTest

from app.run_card import run_title
from app.score_form import fake_spec
from app.views.score.help import duration, estimate_text, sim_basis
from ingest import UserError
from ingest.runs import list_runs
from ingest.scoring import estimate_time
from ingest.store import import_pool
from tests.conftest import REPO

ROWS = [{"prompt_id": f"q{i // 3}", "prompt": f"Q{i // 3}", "candidate_id": f"c{i % 3}", "response": f"r{i}",
         "reference": float(i % 3)} for i in range(12)]


def test_fake_spec_and_its_estimate_by_hand():
    assert fake_spec(" sim ", 0.0, -0.25, 40.0) == "sim?noise=0&slot_bias=-0.25&latency_ms=40"
    for bad, message in [((-0.1, 0.0, 0.0), "noise -0.1: between 0 and 5"),
                         ((0.1, 2.5, 0.0), "slot bias 2.5: between -2 and \\+2"),
                         ((0.1, 0.0, -1.0), "latency -1 ms: between 0 and 60000")]:
        with pytest.raises(UserError, match=message):
            fake_spec("sim", *bad)
    # 36 calls x 200 ms / concurrency 4 = 1.8 s; with no latency the judge answers at once
    count = {"total": 36, "per_format": {"binary": 12, "likert5": 12, "numeric100": 12}}
    assert estimate_time(None, count["per_format"], "fake", "greedy", 4, 200.0).seconds == pytest.approx(1.8)
    assert estimate_time(None, count["per_format"], "fake", "greedy", 4, None).seconds == 0.0
    assert duration(0.0) == "under a second"
    assert estimate_time(None, count["per_format"], "openai", "greedy", 4, 200.0) is None   # a server's speed is its own
    assert estimate_text(count, 1.8, None, "sim", 4, sim_basis(200.0, 4)) == (
        "**36 calls** (12 binary + 12 likert5 + 12 numeric100); about 2 s (at the simulated 200 ms per call "
        "over concurrency 4). Calls already answered are not made again.")


def test_score_page_sets_the_simulated_judge_estimates_it_and_the_card_names_judge_and_formats(db, write_jsonl,
                                                                                                 monkeypatch):
    import_pool(db, write_jsonl("pool.jsonl", ROWS), "mine")
    monkeypatch.setenv("JUDGEAUDIT_DB", str(db))
    at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=180).run()
    at.switch_page("views/score/page.py").run()
    at.radio[0].set_value("fake").run()
    labels = [n.label for n in at.number_input]
    assert labels[:3] == ["Noise", "Slot bias", "Latency (ms per call)"]
    at.number_input[0].set_value(0.0)
    at.number_input[1].set_value(0.25)
    at.number_input[2].set_value(200.0)
    next(n for n in at.number_input if n.label == "Concurrency").set_value(4)
    at.text_input[0].set_value("sim2").run()
    assert not at.exception
    # 12 candidates x 3 formats = 36 calls; 36 x 0.2 s / 4 = 1.8 s, said 'about 2 s'
    assert "**36 calls**" in at.info[0].value and "about 2 s (at the simulated 200 ms per call over concurrency 4)" \
        in at.info[0].value
    at.button(key="score-launch").click().run()
    assert not at.exception and at.success[0].value.startswith("Started run ")
    deadline = time.time() + 120
    while time.time() < deadline:
        runs = list_runs(db, kind="score")
        if runs and runs[-1]["status"] in ("finished", "failed"):
            break
        time.sleep(1)
    assert runs[-1]["status"] == "finished", runs[-1]["error"]
    assert run_title(runs[-1]) == ("score · judge sim2 (simulated: noise 0, slot bias 0.25, latency 200 ms) · "
                                  "formats binary, likert5, numeric100")


def test_repeats_rules_of_the_form_are_the_clis():
    # issue 26 item 1: N > 1 at temperature 0 is refused as `judgeaudit score --samples N` refuses it
    from app.score_form import ScoreForm, check_repeats, score_request
    form = ScoreForm("mine", "fake", ["likert5"], model="sim", samples=3, temperature=0.0)
    with pytest.raises(UserError, match="3 samples at temperature 0 would ask for 3 copies of one answer"):
        score_request(form, {})
    with pytest.raises(UserError, match="temperature 2.5: between 0 and 2"):
        check_repeats(ScoreForm("mine", "fake", ["likert5"], model="sim", temperature=2.5))
    with pytest.raises(UserError, match="bundled local judge"):
        check_repeats(ScoreForm("mine", "local", ["likert5"], temperature=0.7))
    request, _ = score_request(ScoreForm("mine", "fake", ["likert5"], model="sim", samples=3, temperature=0.7), {})
    assert (request.options["samples"], request.options["temperature"]) == (3, 0.7)
    plain, _ = score_request(ScoreForm("mine", "fake", ["likert5"], model="sim"), {})
    assert plain.options["samples"] == 1 and plain.options["temperature"] == 0.0


def test_score_page_makes_repeats_and_the_formats_page_reads_their_flip_rate_and_alpha(db, write_jsonl, monkeypatch):
    from audit import consistency
    from tests.conftest import query_rows
    import_pool(db, write_jsonl("pool.jsonl", ROWS), "mine")
    monkeypatch.setenv("JUDGEAUDIT_DB", str(db))
    at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=180).run()
    at.switch_page("views/score/page.py").run()
    at.radio[0].set_value("fake").run()
    at.text_input[0].set_value("rep").run()
    at.multiselect[0].set_value(["likert5"]).run()
    next(n for n in at.number_input if n.label == "Samples per call").set_value(3).run()
    # 3 samples at temperature 0: refused before a launch, in the CLI's words
    assert any("would ask for 3 copies of one answer" in w.value for w in at.warning)
    assert at.button(key="score-launch").disabled
    next(n for n in at.number_input if n.label == "Temperature").set_value(0.7).run()
    assert not at.exception and not at.warning
    assert "**36 calls** (36 likert5)" in at.info[0].value          # 12 candidates x 3 samples
    at.button(key="score-launch").click().run()
    assert at.success[0].value.startswith("Started run ")
    deadline = time.time() + 120
    while time.time() < deadline:
        runs = list_runs(db, kind="score")
        if runs and runs[-1]["status"] in ("finished", "failed"):
            break
        time.sleep(1)
    assert runs[-1]["status"] == "finished", runs[-1]["error"]
    assert query_rows(db, "SELECT DISTINCT decoding, max(sample) FROM verdicts GROUP BY 1") == [("sampled", 2)]
    at.switch_page("views/formats/page.py").run()
    assert not at.exception
    ref = consistency(db, "mine").to_dicts()[0]
    words = " ".join(m.value for m in at.markdown)
    assert f"flip rate {ref['flip_rate']:.0%} of 12 calls" in words
    assert f"α = {ref['alpha']:.2f} (95% CI {ref['alpha_lo']:.2f} to {ref['alpha_hi']:.2f})" in words
