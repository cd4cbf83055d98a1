"""A run's card in words (app/run_card.py, pure): the headline names the judge and formats, a
finished training run shows its final losses and adapter folder, and the log reads as a terminal
left it. Every expected string is written out by hand."""

from app.cli import request_for
from app.run_card import clean_log, judge_words, run_title, outcome_text, train_outcome

SCORE_ARGV = ["score", "--pool", "p", "--judge", "fake:sim?noise=0.3&slot_bias=-0.25&latency_ms=40",
              "--formats", "binary,anchored", "--schedule", "listing", "--concurrency", "8", "--swap-sample", "0",
              "--db", "x.duckdb", "--json", "--decoding", "constrained"]
TRAIN_ARGV = ["train", "--pool", "p", "--policy", "judge", "--judge", "j", "--format", "likert5", "--rate", "0.25",
              "--base", "local:smollm2", "--seed", "2", "--max-steps", "4"]


def test_a_score_runs_headline_names_the_judge_with_its_simulated_settings_and_the_formats():
    request = request_for("score", pool="p", judge_spec="fake:sim?noise=0.3&slot_bias=-0.25&latency_ms=40",
                          formats=["binary", "anchored"], decoding="constrained", as_json=True)
    row = {"kind": "score", "config": request.to_config()}       # queued: only the request so far
    title = ("score · judge sim (simulated: noise 0.3, slot bias -0.25, latency 40 ms) · formats binary, anchored · "
             "constrained")
    assert run_title(row) == title
    # started: the run recorded its judge and formats beside the request, which still says how it was asked
    row["config"].update(judge="sim", provider="fake", formats=["binary", "anchored"])
    assert run_title(row) == title
    # a run an earlier version launched: its stored command line, read by click, says the same
    assert run_title({"kind": "score", "config": {"argv": SCORE_ARGV}}) == title
    # a run recorded with neither (typed in a terminal by an earlier version): the fields it recorded
    assert run_title({"kind": "score", "config": {"judge": "sim", "formats": ["binary"], "decoding": "greedy"}}) == \
        "score · judge sim · formats binary"
    assert judge_words("local:smollm2") == "smollm2 (the bundled SmolLM2-135M)"
    assert judge_words("openai:gpt-4o@https://api.example/v1") == "gpt-4o at https://api.example/v1"
    assert judge_words("fake:plain") == "plain (simulated)"


def test_a_training_runs_headline_names_its_curation():
    request = request_for("train", pool="p", policy="judge", judge="j", fmt="likert5", rate=0.25,
                          base="local:smollm2", seed=2, max_steps=4)
    # the request's judge is the curating judge, not a judge SPEC: the headline says so in curation words
    title = "train · j × likert5 at rate 0.25, seed 2, on local:smollm2"
    assert run_title({"kind": "train", "config": request.to_config()}) == title
    assert run_title({"kind": "train", "config": {"argv": TRAIN_ARGV}}) == title       # an earlier version's
    full = request_for("train", pool="p", policy="full", base="b", seed=0)
    assert run_title({"kind": "train", "config": full.to_config()}) == "train · full baseline, seed 0, on b"
    subset = request_for("train", subset="/data/x/picked.jsonl", base="b", seed=1)
    assert run_title({"kind": "train", "config": subset.to_config()}) == "train · subset picked.jsonl, seed 1, on b"


def test_a_finished_training_runs_outcome_gives_final_losses_and_the_adapter_folder():
    from datetime import datetime
    metrics = {"status": "finished", "steps": 20, "max_steps": 20, "train_loss": 2.345678, "eval_loss": 2.10001,
               "seconds": 81.4, "adapter": "/data/runs/7", "tokens": 999}
    got = train_outcome(metrics)
    assert got == {"status": "finished", "steps": 20, "max_steps": 20, "train_loss": 2.3457, "mean_train_loss": 2.3457,
                   "eval_loss": 2.1, "seconds": 81.4, "wall": False, "adapter": "/data/runs/7"}
    assert outcome_text(got) == ("finished after 20 of 20 steps in 81 s (training loop) · last train loss **2.3457** · "
                                 "final eval loss **2.1000** · adapter in `/data/runs/7`")
    assert "final eval loss **n/a**" in outcome_text(train_outcome({**metrics, "eval_loss": None}))
    # with its progress lines and the run's row: the last logged loss (the runs table's) and the wall time,
    # 12:00:00 to 12:02:31 = 151 s, though the training loop took 81.4 s of it
    progress = '{"step": 10, "loss": 2.5}\n{"step": 20, "loss": 1.0339}\n{"step": 20, "eval_loss": 2.1}\n'
    row = {"started_at": datetime(2026, 1, 1, 12, 0, 0), "finished_at": datetime(2026, 1, 1, 12, 2, 31)}
    got = train_outcome(metrics, progress, row)
    assert (got["train_loss"], got["mean_train_loss"], got["seconds"], got["wall"]) == (1.0339, 2.3457, 151.0, True)
    assert outcome_text(got).startswith("finished after 20 of 20 steps in 2 min 31 s (wall time, loading the model "
                                        "included) · last train loss **1.0339** (mean over the run 2.3457)")


def test_clean_log_keeps_a_progress_bars_last_state_and_says_a_repeat_once():
    wait = "judgeaudit: /d/x.duckdb is in use by another process; waiting for it (up to 60 s)..."
    log = ("loading\n"
           "\r  0%|          | 0/4 [00:00<?, ?it/s]\r 50%|#####     | 2/4 [00:01<00:01]\r100%|##########| 4/4 [00:02<00:00]\n"
           f"{wait}\n"
           "step 1/4, loss 2.5\n"
           f"{wait}\n"
           f"{wait}\n"
           "\x1b[32mstep 2/4, loss 2.25\x1b[0m\n"
           "retrying\nretrying\nretrying\n"
           "done\r\n")
    # the bar: three states on one line, the last one kept; the wait: once, said 3 times in all;
    # the colour codes go; three consecutive 'retrying' lines become one with its count
    assert clean_log(log).split("\n") == [
        "loading",
        "100%|##########| 4/4 [00:02<00:00]",
        wait + "  [×3]",
        "step 1/4, loss 2.5",
        "step 2/4, loss 2.25",
        "retrying  [×3]",
        "done",
    ]
    assert clean_log("") == "" and clean_log("one\n\n\ntwo") == "one\n\n\ntwo"    # blank lines are kept as they are


def test_a_training_run_before_its_first_step_says_its_phase_and_how_long_so_far():
    from datetime import datetime
    from app.run_card import phase_text
    now = datetime(2026, 1, 1, 12, 1, 40)
    # started 12:00:00, now 12:01:40: 100 s (under two minutes, in seconds)
    assert phase_text({"phase": "loading", "base": "local:smollm2"}, "2026-01-01 12:00:00", now) == (
        "Loading the base model (local:smollm2) · 100 s so far · an ETA comes with the first step")
    assert phase_text({"phase": "preparing"}, datetime(2026, 1, 1, 12, 1, 0), now) == (
        "Tokenizing the subset and building the trainer · 40 s so far · an ETA comes with the first step")
    assert phase_text({"phase": "curating"}, None, now) == "Curating the subset"


def test_a_probe_runs_card_names_its_strategy():
    from app.cli import request_for
    # a mitigation strategy, written as the command writes it, and the sample per probe type
    swap = request_for("probe", judge_spec="fake:sim?slot_bias=0.5", strategy="swap", sample=5, as_json=True)
    assert run_title({"kind": "probe", "config": swap.to_config()}) == (
        "probe · judge sim (simulated: slot bias 0.5) · strategy swap · 5 pairs per probe type")
    # no strategy: the baseline judge, said so; every pair (no sample)
    base = request_for("probe", judge_spec="fake:sim", as_json=True)
    assert run_title({"kind": "probe", "config": base.to_config()}) == (
        "probe · judge sim (simulated) · baseline (no mitigation strategy)")
    one = request_for("probe", judge_spec="fake:sim", strategy="ensemble:3", sample=1, as_json=True)
    assert run_title({"kind": "probe", "config": one.to_config()}).endswith("strategy ensemble:3 · 1 pair per probe type")


def test_a_scoring_run_loading_its_model_says_so_with_the_time_it_took_here():
    from app.run_card import loading_text
    p = {"phase": "loading", "what": "the bundled model", "since": 1000.0, "expected_load_s": 40.0, "expected_runs": 3}
    # 12 s after its process started, against the median of 3 runs measured here
    assert loading_text(p, now=1012.0) == ("Loading the bundled model · 12 s so far · about 40 s expected "
                                           "(measured here over 3 runs)")
    assert loading_text(p, now=1062.0) == ("Loading the bundled model · 62 s so far · longer than the 40 s "
                                           "expected (measured here over 3 runs)")
    first = {**p, "expected_load_s": 60.0, "expected_runs": 0}
    assert loading_text(first, now=1001.0).endswith("about 60 s expected (a first guess: no run measured on this "
                                                    "machine yet)")
    assert loading_text({"phase": "loading"}, now=5.0) == "Loading the judge · 0 s so far"


def test_the_bundled_models_estimate_says_what_it_rests_on():
    from app.views.score.help import local_basis
    from ingest.scoring import Estimate
    # 60 calls in 40 s of calls: 1.50 calls/s, after 30 s of loading
    assert local_basis(Estimate(70.0, 30.0, 40.0, 3, (), (("likert5", 1.5, 3),)), 60) == (
        "the bundled model as 3 runs measured it here (medians): 30 s to load, then 1.50 calls/s")
    # two formats: each its pace and the runs behind it (tournament's borrowed from likert5's run)
    two = Estimate(70.0, 30.0, 40.0, 1, ("tournament",), (("likert5", 2.0, 1), ("tournament", 1.25, 1)))
    assert local_basis(two, 60) == (
        "the bundled model as 1 run measured it here (medians): 30 s to load, then 1.50 calls/s (likert5 2.00/s "
        "over 1 run, tournament 1.25/s over 1 run); tournament not measured here yet")
    # the load the runs met, and the load now
    busy = Estimate(70.0, 30.0, 40.0, 3, (), (("likert5", 1.5, 3),), load_now=4.04, load_then=2.5)
    assert local_basis(busy, 60) == (
        "the bundled model as 3 runs measured it here (medians): 30 s to load, then 1.50 calls/s; measured at a "
        "load of 2.5 a core, 4.0 now (a busier machine takes longer)")
    assert local_basis(Estimate(117.0, 60.0, 57.0, 0, ("likert5",)), 60) == (
        "a first guess for the bundled model: 1 min to load, then 1.05 calls/s; no run measured on this machine yet")
