"""The Curate & Train page's Distil section (app/views/curate/distil.py) through Streamlit AppTest, on the
synthetic pool of tests/train/test_distil.py (quality written in the responses' words; the teacher
answers it): the section renders; Launch records a `distil` run with the form's fields, its folder the
run's own; a student trained with train/distil.py shows its card's held-out agreement, recomputed here
from the known answers; the score button records a `score` run of `distilled:DIR`; once scored, the
two curations are compared. The Jaccard of two selections by hand."""

from __future__ import annotations

import numpy as np
import polars as pl
from scipy.stats import binomtest
from streamlit.testing.v1 import AppTest

from ingest.runs import cancel, list_runs
from ingest.scoring import ScoreRequest, score
from ingest.scoring.judges.distilled import Student
from tests.app.table_rules import violations
from tests.app.conftest import open_page
from tests.train.test_distil import taught  # noqa: F401 (the fixture)
from train.curate import jaccard
from train.curation_view import top_share
from train.distil import distil, held_out_prompts


DEMO_POOLS_SEEDED = ("mtbench-formats",)


def _page(db, monkeypatch) -> AppTest:
    at = open_page(db, monkeypatch, "curate", {"pool": "p"})
    assert not at.exception, at.exception
    return at


def _teacher_box(at):
    return next(s for s in at.selectbox if s.label.startswith("Teacher"))


def test_jaccard_and_top_share_by_hand():
    # {1,2,3} and {2,3,4}: both keep 2 and 3, together 1..4: 2 / 4
    assert jaccard({1, 2, 3}, {2, 3, 4}) == 0.5
    assert jaccard({1}, {1}) == 1.0 and jaccard({1}, {2}) == 0.0 and jaccard(set(), set()) is None
    # 8 eligible prompts ranked 0..7; at rate 0.25 the first round(0.25 x 8) = 2 ranks are kept: ranks 0 and 1
    picks = pl.DataFrame({"cand_idx": [40, 41, 42, 43, 44, 45, 46, 47], "rank": [3, 0, 7, 1, 2, 6, 4, 5]})
    assert top_share(picks, 0.25) == {41, 43}
    assert top_share(picks, 0.5) == {41, 43, 44, 40}
    assert top_share(picks.head(0), 0.5) == set()


def test_the_section_renders_on_the_demo_pool(demo_db, monkeypatch):
    at = open_page(demo_db, monkeypatch, "curate", {"pool": "mtbench-formats"})
    assert not at.exception, at.exception
    assert any(h.value == "Distil" for h in at.subheader)
    options = _teacher_box(at).options
    assert options and not any("tournament" in o or "anchored" in o for o in options)   # pointwise cells only


def test_launch_records_a_distil_run_with_the_fields_from_the_address(db, monkeypatch, taught):  # noqa: F811
    at = open_page(db, monkeypatch, "curate", {"pool": "p", "distil_cell": "teacher / likert5 / greedy",
                                               "distil_share": "0.3"})
    assert not at.exception, at.exception
    box = _teacher_box(at)
    assert box.options == ["teacher / binary / greedy", "teacher / likert5 / greedy"]   # pointwise cells only
    assert box.value == "teacher / likert5 / greedy"
    next(b for b in at.button if b.label == "Launch distil").click().run()
    assert not at.exception, at.exception
    assert any("Started distil run" in s.value for s in at.success), [e.value for e in at.error]
    rows = list_runs(db, kind="distil", pool="p")
    assert len(rows) == 1
    options = rows[0]["config"]["options"]
    assert (options["judge"], options["fmt"], options["features"], options["held_out"]) == \
        ("teacher", "likert5", "hashing", 0.3)
    assert options["out"] is None and rows[0]["run_key"] == "distil:p:teacher:likert5"
    cancel(db, rows[0]["run_id"], wait_s=30)      # the run itself is tests/train/test_distil.py's


def test_a_trained_student_shows_its_card_then_its_curation(db, tmp_path, monkeypatch, taught):  # noqa: F811
    rows, quality = taught
    card = distil(db, "p", "teacher", "likert5", None, held_out=0.25, seed=0)
    folder = card["folder"]
    student = Student.load(folder)
    # the held-out agreement recomputed from the known answers (q + 1) on the held-out prompts
    test = held_out_prompts([r["prompt_id"] for r in rows], 0.25, 0)
    held = [r for r in rows if r["prompt_id"] in test]
    predicted = np.array(student.answers([r["prompt"] for r in held], [r["response"] for r in held]))
    truth = np.array([str(quality[(r["prompt_id"], r["candidate_id"])] + 1) for r in held])
    exact = float(np.mean(predicted == truth))
    # mean |difference| of the values on the 1..5 scale, as a share of its width 4
    mad = float(np.mean(np.abs(predicted.astype(float) - truth.astype(float)))) / 4
    at = _page(db, monkeypatch)
    text = " ".join(m.value for m in at.markdown)
    assert f"on {len(held)} candidates of 15 held-out prompts" in text      # 60 prompts x 0.25 = 15
    # its 95% Wilson interval, as scipy gives it, on the held-out candidates
    ci = binomtest(int(np.sum(predicted == truth)), len(held)).proportion_ci(method="wilson")
    assert f"exact {exact:.3f} (95% CI {ci.low:.3f}–{ci.high:.3f})" in text and f"mean absolute difference {mad:.3f}" in text
    # no human label in this pool: too few, with n
    assert "Held-out agreement with the human accept labels: too few labels (n = 0" in text
    assert "Held-out agreement with the human pair labels: too few labels (n = 0" in text
    name = f"distilled-{student.sha256[:12]}"
    assert name in text
    # score with the student: a background score run of distilled:FOLDER
    next(b for b in at.button if b.label.startswith("Score the pool with the student")).click().run()
    assert not at.exception, at.exception
    runs = list_runs(db, kind="score", pool="p")
    assert runs and runs[-1]["config"]["options"]["judge_spec"] == f"distilled:{folder}"
    assert runs[-1]["config"]["options"]["formats"] == ["likert5"]
    cancel(db, runs[-1]["run_id"], wait_s=30)
    # scored here in process, then the page compares the two curations
    score(ScoreRequest(pool="p", judge=f"distilled:{folder}", formats=["likert5"], db=db, progress=False))
    # the student gives the teacher's answer on every candidate (the quality is in the words): the two
    # curations are then one and the same (the same values, the same seeded tie-breaks), Jaccard 1 at each rate
    everyone = student.answers([r["prompt"] for r in rows], [r["response"] for r in rows])
    assert everyone == [str(quality[(r["prompt_id"], r["candidate_id"])] + 1) for r in rows]
    at = _page(db, monkeypatch)
    tables = [t.value for t in at.dataframe]
    overlap = next(t for t in tables if "jaccard" in t.columns)
    assert list(overlap["rate"]) == [0.1, 0.25, 0.5]
    assert list(overlap["jaccard"]) == [1.0, 1.0, 1.0]
    assert list(overlap["teacher keeps"]) == list(overlap["student keeps"]) == list(overlap["both keep"])
    cells = next(t for t in tables if "top_tied" in t.columns)
    assert sorted(cells["judge"]) == sorted(["teacher", name])
    # the same verdicts: the same levels, D2 and top-tied share
    for col in ("distinct", "d2", "top_tied"):
        assert cells[col].iloc[0] == cells[col].iloc[1], col
    # the two tables keep the dashboard's table rules (headings, no None or noise cells)
    assert not any(violations(at).values()), violations(at)
