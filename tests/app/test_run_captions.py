"""The Evaluate page's run picker reads like a sentence (app/evaluate_form.py): the run, the
condition name its outcomes will carry, seed, length, base model and status, never a cut-off dict;
the run just trained on the page's pool is pre-selected. And the runs panel's rule for rerunning
a page when one of its runs ends and how often it looks (app/runs_panel.py)."""

import pytest
from streamlit.testing.v1 import AppTest

from app.evaluate_form import trained_run_caption, training_choices
from app.runs_panel import poll_every, read_again
from tests.conftest import REPO

JUDGE_CELL = {"pool": "mine", "policy": "judge", "judge": "sim", "format": "tournament", "decoding": None,
              "score": "label", "rate": 0.25}


def _row(run_id, status="finished", pool="mine", **config):
    return {"run_id": run_id, "status": status, "pool": pool, "config": config}


@pytest.mark.parametrize("row, caption", [
    (_row(3, base="local:smollm2", max_steps=5, seed=0, curation=JUDGE_CELL),
     "Run 3 · sim/tournament@0.25 · seed 0 · 5 steps · local:smollm2 · finished"),
    # the paper preset trains by epochs (max_steps 0); a hub base shows its last part; a run stopped
    # with Stop & save kept its adapter
    (_row(4, "cancelled", base="HuggingFaceTB/SmolLM2-135M-Instruct", max_steps=0, epochs=3.0, seed=2,
          curation={**JUDGE_CELL, "format": "likert5", "decoding": "constrained", "rate": 0.1}),
     "Run 4 · sim/likert5~constrained@0.1 · seed 2 · 3 epochs · SmolLM2-135M-Instruct · stopped early"),
    (_row(5, seed=1, curation={"pool": "mine", "policy": "full", "rate": 1.0}), "Run 5 · full · seed 1 · finished"),
    # trained from a subset file: its stored record names the cell; without one, the file's name
    (_row(6, subset="/data/x/picked.jsonl", subset_record={"policy": "random", "rate": 0.5}),
     "Run 6 · random@0.5 · seed 0 · finished"),
    (_row(7, subset="/data/x/picked.jsonl", subset_record={}), "Run 7 · picked · seed 0 · finished"),
    (_row(8, pool="other", curation={**JUDGE_CELL, "pool": "other"}),
     "Run 8 · sim/tournament@0.25 · seed 0 · pool other · finished"),
])
def test_trained_run_caption(row, caption):
    assert trained_run_caption(row, "mine") == caption


def test_a_queued_training_run_is_captioned_from_its_request():
    from app.cli import request_for
    request = request_for("train", pool="mine", policy="judge", judge="sim", fmt="tournament", rate=0.25,
                          base="HuggingFaceTB/SmolLM2-135M-Instruct", seed=3)
    row = {"run_id": 9, "status": "queued", "pool": "mine", "config": request.to_config()}
    # max steps at its default (-1): by epochs, the default 2
    assert trained_run_caption(row, "mine") == "Run 9 · sim/tournament@0.25 · seed 3 · 2 epochs · SmolLM2-135M-Instruct · queued"
    # once it runs, the curation it resolved (rate and all) sits beside the request: the same words
    row["config"]["curation"] = {**JUDGE_CELL, "rate": 0.25}
    assert trained_run_caption(row, "mine", short=True) == "Run 9 · sim/tournament@0.25 · seed 3"


def test_training_choices_newest_first_and_the_pools_newest_preselected():
    rows = [_row(1), _row(2, pool="other"), _row(3, "failed"), _row(4, "running"), _row(5, "cancelled"),
            _row(6, pool="other")]
    # 3 failed and 4 is still running: no adapter to evaluate; 5 (stopped, saved) is this pool's newest
    assert training_choices(rows, "mine") == ([6, 5, 2, 1], [5])
    assert training_choices(rows, "none") == ([6, 5, 2, 1], [])
    assert training_choices([], "mine") == ([], [])


def test_a_page_looks_again_only_while_a_run_it_shows_is_alive_and_less_often_as_it_ages():
    from datetime import datetime
    now = datetime(2026, 1, 1, 12, 10, 0)
    ended = [{"run_id": 1, "status": "finished", "started_at": "2026-01-01 12:09:59"}]
    assert poll_every([], now) is None and poll_every(ended, now) is None       # idle: no look at all
    # the youngest live run sets the pace: 10 s old -> every 1 s; 1 min -> 2 s; 5 min -> 5 s
    young = {"run_id": 2, "status": "running", "started_at": "2026-01-01 12:09:50"}
    assert poll_every(ended + [young], now) == 1.0
    assert poll_every([{**young, "started_at": "2026-01-01 12:09:00"}], now) == 2.0
    assert poll_every([{**young, "started_at": "2026-01-01 12:05:00"}], now) == 5.0
    # a queued run has not started: its age is counted from its launch
    assert poll_every([{"run_id": 3, "status": "queued", "started_at": None, "created_at": "2026-01-01 12:09:40"}],
                      now) == 1.0


def test_the_page_reads_the_database_again_when_a_run_ends_once_not_at_every_look():
    rechecked = {}
    live = {"run_id": 1, "status": "running", "recheck": False}
    assert not read_again([live], rechecked, now=100.0)
    over = {**live, "status": "finished", "recheck": True}     # its live file says it ended, its process is gone
    assert read_again([over], rechecked, now=100.0) and rechecked == {1: 100.0}
    # the database still says running (it is being closed): not again within 30 s, then again
    assert not read_again([over], rechecked, now=110.0)
    assert read_again([over], rechecked, now=131.0)


def test_the_evaluate_page_lists_readable_runs_and_preselects_the_one_just_trained(db, write_jsonl, monkeypatch):
    from ingest.runs import running
    from ingest.store import import_pool
    from tests.fixtures import synthetic_pool
    import_pool(db, write_jsonl("pool.jsonl", synthetic_pool(6, seed=1)), "mine")
    import_pool(db, write_jsonl("other.jsonl", synthetic_pool(3, seed=2)), "other")
    configs = [("mine", {"base": "local:smollm2", "max_steps": 5, "seed": 0, "curation": JUDGE_CELL}),
               ("mine", {"base": "local:smollm2", "max_steps": 5, "seed": 1,
                         "curation": {"pool": "mine", "policy": "random", "rate": 0.5}}),
               ("other", {"base": "local:smollm2", "max_steps": 5, "seed": 0,
                          "curation": {**JUDGE_CELL, "pool": "other"}})]
    for pool, config in configs:                # three finished training runs, as `judgeaudit train` leaves them
        with running(db, "train", pool=pool, config=config):
            pass
    at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=180)
    at.query_params["pool"] = "mine"
    at.run()
    at.switch_page("views/evaluate/page.py")
    at.query_params["pool"] = "mine"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    picker = at.multiselect[0]
    assert picker.label == "Training runs"
    assert picker.options == ["Run 3 · sim/tournament@0.25 · seed 0 · 5 steps · local:smollm2 · pool other · finished",
                              "Run 2 · random@0.5 · seed 1 · 5 steps · local:smollm2 · finished",
                              "Run 1 · sim/tournament@0.25 · seed 0 · 5 steps · local:smollm2 · finished"]
    assert not any(ch in o for o in picker.options for ch in "{}'")
    assert picker.value == [2]                  # the newest run of pool 'mine', not run 3 of 'other'
    # the evaluation runs have their own live panel, outside the launch form
    assert any(s.value == "Evaluation runs" for s in at.subheader)
    assert any(c.value == "No evaluate runs yet." for c in at.caption)
