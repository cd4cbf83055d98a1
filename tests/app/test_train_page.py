"""Curate & Train, the parts a new user reads (app/views/curate/form.py, the page through Streamlit AppTest):
kept and dropped keep their colours across both charts, the loss chart steps in whole numbers and
tells train from eval, and a finished run shows its final losses, its adapter's folder and a link to
Evaluate. The finished run is a real run row (ingest.runs.running) with the files a fine-tune
leaves in its folder; no model is trained here (tests/train/test_train.py does that)."""

import json

import polars as pl
from streamlit.testing.v1 import AppTest

from app.run_card import outcome_text, train_outcome
from app.views.curate import form as tf
from ingest.runs import running
from ingest.store import import_pool
from tests.conftest import REPO

ROWS = [{"prompt_id": f"q{i // 3}", "prompt": f"Question {i // 3}", "candidate_id": f"c{i % 3}",
         "response": "x" * (10 + i), "reference": float(i % 3)} for i in range(12)]


def test_kept_and_dropped_have_one_colour_each_in_both_charts():
    bins = pl.DataFrame({"set": ["kept", "dropped"], "lo": [0.0, 0.5], "hi": [0.5, 1.0], "n": [2, 1]})
    hist = tf.binned_chart(bins, "value", 0.5).to_dict()["layer"][0]["encoding"]["color"]
    lengths = tf.binned_chart(bins, "chars", stacked=False).to_dict()["encoding"]["color"]
    assert hist["scale"] == lengths["scale"] == {"domain": ["kept", "dropped"], "range": ["#2b8cbe", "#bdbdbd"]}


def test_the_loss_chart_has_whole_steps_and_a_legend_for_train_and_eval():
    curves = pl.DataFrame({"run": ["1: a"] * 3, "step": [1, 2, 2], "loss": [2.5, 2.0, 2.2],
                           "kind": ["train", "train", "eval"]})
    enc = tf.loss_chart(curves).to_dict()["encoding"]
    assert enc["x"]["axis"] == {"format": "d", "tickMinStep": 1, "title": "optimiser step"}
    # step 1's marks drawn whole: the x scale padded past the first and last step, the y scale past the extremes
    assert enc["x"]["scale"]["padding"] > 0 and enc["x"]["scale"]["zero"] is False and enc["y"]["scale"]["padding"] > 0
    assert enc["strokeDash"]["field"] == enc["shape"]["field"] == "kind"           # dashes and marks differ
    assert enc["strokeDash"]["scale"]["domain"] == enc["shape"]["scale"]["domain"] == ["train", "eval"]
    assert enc["strokeDash"]["title"] == enc["shape"]["title"] == "loss on"          # one legend, named


def test_finished_runs_table_by_hand():
    rows = [{"run_id": 3, "config": {"curation": {"policy": "judge", "judge": "j", "format": "likert5",
                                                  "rate": 0.25}, "seed": 0}},
            {"run_id": 4, "config": {"curation": {"policy": "random", "rate": 0.5}, "seed": 1}}]
    progress = json.dumps({"step": 1, "loss": 2.5}) + "\n" + json.dumps({"step": 2, "loss": 1.75}) + "\n" \
        + json.dumps({"step": 2, "eval_loss": 1.9}) + "\n"
    outcomes = {3: train_outcome({"status": "finished", "steps": 2, "train_loss": 2.125, "eval_loss": 1.9,
                                  "adapter": "/r/3"}, progress)}
    got = tf.finished_runs(rows, outcomes).to_dicts()
    # run 4 has no outcome yet (still running); run 3's last train loss is step 2's 1.75, not the mean 2.125,
    # and it is the number the run's card shows (one source: train_outcome)
    assert got == [{"run": "Run 3 · j/likert5@0.25 · seed 0", "status": "finished", "steps": 2, "last train loss": 1.75,
                    "final eval loss": 1.9, "adapter folder": "/r/3"}]
    assert "last train loss **1.7500** (mean over the run 2.1250)" in outcome_text(outcomes[3])


def test_a_finished_run_shows_its_losses_adapter_folder_and_a_link_to_evaluate(db, write_jsonl, monkeypatch):
    import_pool(db, write_jsonl("pool.jsonl", ROWS), "mini")
    config = {"curation": {"pool": "mini", "policy": "random", "rate": 0.5}, "seed": 0, "base": "local:smollm2"}
    with running(db, "train", pool="mini", config=config, queue="train") as run:
        # what train.finetune leaves in the run's folder: progress lines and metrics.json
        (run.out_dir / "progress.jsonl").write_text(
            json.dumps({"step": 1, "loss": 2.5}) + "\n" + json.dumps({"step": 2, "loss": 2.0, "eval_loss": 2.25}) + "\n")
        (run.out_dir / "metrics.json").write_text(json.dumps(
            {"status": "finished", "steps": 2, "max_steps": 2, "train_loss": 2.25, "eval_loss": 2.25, "seconds": 3.0,
             "adapter": str(run.out_dir)}))
    monkeypatch.setenv("JUDGEAUDIT_DB", str(db))
    at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=180).run()
    at.switch_page("views/curate/page.py").run()
    assert not at.exception
    table = next(d.value for d in at.dataframe if "adapter folder" in d.value.columns)
    assert table.to_dict("records") == [{"run": f"Run {run.id} · random@0.5 · seed 0", "status": "finished", "steps": 2,
                                         "last train loss": 2.0, "final eval loss": 2.25,
                                         "adapter folder": str(run.out_dir)}]
    assert sorted((link.proto.label, link.proto.page.endswith("evaluate")) for link in at.get("page_link")) == [
        ("Evaluate the adapters", True), ("Evaluate this adapter", True)]     # the table's and the run card's
    # the run's card: what it trained on, then its final losses and adapter folder (metrics.json above)
    texts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    assert any(t.startswith("train · random baseline at rate 0.5") for t in texts)
    # the card's train loss is the table's (the last logged step's, 2.0), the Trainer's mean beside it
    assert any("last train loss **2.0000** (mean over the run 2.2500) · final eval loss **2.2500**" in t
               and f"`{run.out_dir}`" in t for t in texts)
