"""The Align page (app/views/align/page.py) and the Calibration page's human scale through Streamlit's
AppTest on the planted pool of tests/train/test_align.py: a run launched from the form runs in the
background (`judgeaudit align` as its own process) and its result reads before → after with the
interval, the chosen instructions and demonstrations verbatim; a judge that cannot improve is said
so. The form's rules are checked without Streamlit."""

from __future__ import annotations

import time

from streamlit.testing.v1 import AppTest

from app.views.align.form import align_request, gain_sentence, gepa_sentence, reference_sentence
from tests.conftest import REPO
from tests.train.test_align import planted


def _app(db, monkeypatch, page: str) -> AppTest:
    monkeypatch.setenv("JUDGEAUDIT_DB", str(db))
    at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=180).run()
    at.sidebar.selectbox[0].select("al").run()
    at.switch_page(f"views/{page}/page.py").run()
    assert not at.exception, at.exception
    return at


def test_the_form_is_the_commands_request_and_the_sentences_say_the_interval():
    req = align_request("al", ("teach", "binary", "greedy"), 2, 300, 0.25)
    assert req.command == "align" and req.options["judge"] == "teach" and req.options["fmt"] == "binary"
    assert req.options["budget"] == 300 and req.options["held_out"] == 0.25 and req.options["demonstrations"] == 2
    doc = {"before": {"value": .5, "lo": .4, "hi": .6}, "after": {"value": .7, "lo": .6, "hi": .8},
           "gain": {"value": .2, "lo": .1, "hi": .3}, "n_heldout_items": 40, "n_heldout_prompts": 20}
    assert "excludes 0" in gain_sentence(doc) and "0.500 [0.400, 0.600] → 0.700" in gain_sentence(doc)
    doc["gain"] = {"value": 0.0, "lo": -0.05, "hi": 0.05}
    assert "runs through 0: no gain is shown" in gain_sentence(doc)
    assert reference_sentence(doc) is None
    doc["reference"] = {"tau_a": {"before": 0.1, "after": 0.25}, "top1": {"before": 0.5, "after": None},
                        "n_prompts": {"before": 20, "after": 19}}
    assert reference_sentence(doc).endswith("20 → 19): τa 0.100 → 0.250, top-1 0.500 → –.")
    assert gepa_sentence(doc) is None
    doc.update(instructions_name="gepa", gepa={"candidates": ["a", "b"], "metric_calls": 18, "reflection_calls": 1})
    assert gepa_sentence(doc) == ("GEPA: 2 wording(s) kept of its proposals, 18 judge calls and 1 reflection call(s) "
                                  "on the training minibatch; its own wording won the search.")


def _wait(db, n: int, timeout_s: float = 240) -> list[dict]:
    from ingest.runs import list_runs
    end = time.time() + timeout_s
    while time.time() < end:
        rows = list_runs(db, kind="align", pool="al")
        if len(rows) >= n and rows[-1]["status"] not in ("queued", "running"):
            return rows
        time.sleep(1)
    raise AssertionError(f"the align run did not end in {timeout_s} s: {list_runs(db, kind='align')}")


def test_align_page_launches_a_run_and_reads_its_result(db, tmp_path, monkeypatch):
    planted(db, tmp_path)
    at = _app(db, monkeypatch, "align")
    assert any("teach" in str(o) for o in at.selectbox[0].options)
    at.number_input[1].set_value(1500)
    at.slider[0].set_value(0.0)
    at.button[0].click().run()
    assert not at.exception and any("Started align run" in s.value for s in at.success), [e.value for e in at.error]
    rows = _wait(db, 1)
    assert rows[-1]["status"] == "finished", rows[-1]
    at = _app(db, monkeypatch, "align")
    text = " ".join(m.value for m in at.markdown)
    assert "The interval excludes 0" in text and "teach-aligned-" in text and "τa" in text
    codes = [c.value for c in at.code]
    assert any("You are evaluating the quality of a response" in c for c in codes)
    assert any("Examples a person judged" in c and "[exemplary]" in c for c in codes)   # verbatim prompt
    assert at.dataframe and at.dataframe[-1].value.shape[0] == 2


def test_a_judge_that_cannot_improve_is_said_so(db, tmp_path, monkeypatch):
    from train import align
    planted(db, tmp_path, taught=0.0)
    align(db, "al", "teach", "binary", demonstrations=1, budget=300, held_out=0.0)
    text = " ".join(m.value for m in _app(db, monkeypatch, "align").markdown)
    assert "runs through 0: no gain is shown" in text and "no new judge was stored" in text


def test_calibration_page_shows_the_human_scale(db, tmp_path, monkeypatch):
    """Accept labels only: the page says there are no pair labels and shows the map per cell."""
    planted(db, tmp_path)
    at = _app(db, monkeypatch, "calibration")
    assert any(s.value == "Scores on the human scale" for s in at.subheader)
    text = " ".join(m.value for m in at.markdown)
    assert "systems tested" in text or "too few labelled items" in text
