"""The bundled model's time estimate (ingest.scoring.from_timings, docs/scoring.md#time-estimates):
by hand on made-up measurements (medians of the runs, the load they met said beside them), on what
real runs recorded on a shared 2-core machine (each within 1.5x of the actual), and end to end: a run
of the local judge records its timings, its load and its card's loading phase."""

import json
import socket
import statistics
from pathlib import Path

import pytest

from ingest.scoring import estimate_time, from_timings
from ingest.scoring._estimate import FIRST_GUESS

RECORDED = Path(__file__).resolve().parents[1] / "data" / "local_timings.json"


def _row(run_id, fmt, calls, chars, call_s, load_s, decoding="constrained"):
    return {"run_id": run_id, "format": fmt, "decoding": decoding, "calls": calls, "chars": chars, "call_s": call_s,
            "load_s": load_s}


ROWS = [_row(3, "likert5", 18, 9_000, 9.0, 20.0),
        _row(2, "likert5", 24, 24_000, 12.0, 30.0), _row(2, "tournament", 36, 72_000, 24.0, 30.0),
        _row(1, "likert5", 18, 9_000, 18.0, 40.0)]


def test_the_estimate_by_hand_from_the_runs_measured_here():
    plan = {"likert5": 18, "tournament": 36}
    est = from_timings(ROWS, plan, "constrained", chars={"likert5": 13_000, "tournament": 36_000})
    # load: the median of 20, 30, 40 = 30 s; likert5's pace, a run each: 9/9,000, 12/24,000 and 18/9,000 s a
    # character, median 0.001: 13,000 characters in 13 s; tournament (run 2 alone) 36,000 x 24 / 72,000 = 12 s
    assert est.load_s == 30.0 and est.calls_s == pytest.approx(13.0 + 12.0)
    assert est.seconds == pytest.approx(55.0) and (est.runs, est.guessed) == (3, ())
    # what the page shows per format: its calls/s here, and the runs its pace is the median of
    assert est.paces == (("likert5", pytest.approx(18 / 13), 3), ("tournament", pytest.approx(3.0), 1))
    # the characters unknown: by calls, likert5 at the median of 9/18, 12/24, 18/18 s a call: 18 x 0.5 = 9 s;
    # tournament 36 calls in 24 s
    assert from_timings(ROWS, plan, "constrained").calls_s == pytest.approx(9.0 + 24.0)
    # the latest two runs only: load median(20, 30) = 25 s; likert5 median(0.001, 0.0005) x 11,000 = 8.25 s
    two = from_timings(ROWS, {"likert5": 18}, "constrained", chars={"likert5": 11_000}, latest=2)
    assert (two.load_s, two.calls_s, two.runs) == (25.0, pytest.approx(8.25), 2)


def test_one_run_on_a_busy_machine_moves_the_estimate_little():
    """Each run one vote: a run made while the machine's other work took most of it (load and calls
    ten times slower) leaves the median where the three others put it; pooled seconds over characters
    (what the estimate was before) would have followed it to 2.5 times as long."""
    calm = [_row(k, "likert5", 18, 9_000, 9.0, 20.0) for k in (1, 2, 3)]
    busy = _row(4, "likert5", 18, 9_000, 90.0, 200.0)
    est = from_timings(calm + [busy], {"likert5": 18}, "constrained", chars={"likert5": 9_000})
    # load: median(20, 20, 20, 200) = 20 s; pace: median(0.001, 0.001, 0.001, 0.01) = 0.001 s a character
    assert (est.load_s, est.calls_s, est.runs) == (20.0, pytest.approx(9.0), 4)
    pooled = 9_000 * (3 * 9.0 + 90.0) / (4 * 9_000)
    assert pooled / est.calls_s == pytest.approx(3.25)


def test_the_load_the_runs_met_is_said_beside_the_estimate_not_applied_to_it():
    """Three runs at loads of 1, 3 and 5 a core: the estimate is their medians whatever the load now,
    and says the median load they met (3) beside the load now; without a load for every run it rests
    on (one recorded before schema/022) it says none."""
    rows = [{**_row(k, "likert5", 18, 9_000, 4.5 * (1 + load), 10.0 * (1 + load)), "load_per_core": load}
            for k, load in ((1, 1.0), (2, 3.0), (3, 5.0))]
    for now in (None, 1.0, 3.0):
        est = from_timings(rows, {"likert5": 18}, "constrained", chars={"likert5": 9_000}, load_per_core=now)
        # load median(20, 40, 60) = 40 s; pace median(9, 18, 27 s / 9,000 characters) x 9,000 = 18 s
        assert (est.load_s, est.calls_s) == (40.0, pytest.approx(18.0))
        assert (est.load_now, est.load_then) == (now, 3.0)
    older = from_timings(rows[:2] + [{**rows[2], "load_per_core": None}], {"likert5": 18}, "constrained",
                         chars={"likert5": 9_000}, load_per_core=1.0)
    assert (older.load_now, older.load_then) == (None, None)


def test_a_format_not_measured_here_takes_the_pace_of_the_others_and_says_so():
    # binary, never run: the constrained calls of the latest runs, a pace a run: 9/9,000, 36/96,000 (run 2's
    # two formats together) and 18/9,000 s a character, median 0.001: 19,000 characters in 19 s
    est = from_timings(ROWS, {"binary": 32}, "constrained", chars={"binary": 19_000})
    assert est.calls_s == pytest.approx(19.0) and est.guessed == ("binary",)
    # nothing measured under greedy: the first guess, 0.3 calls/s, and the measured load time
    greedy = from_timings(ROWS, {"likert5": 3}, "greedy", chars={"likert5": 3_000})
    assert greedy.calls_s == pytest.approx(10.0) and greedy.load_s == 30.0 and greedy.guessed == ("likert5",)
    # a sampled answer is generated as a greedy one: one pace
    sampled = from_timings([_row(4, "likert5", 10, 10_000, 20.0, 30.0, "sampled")], {"likert5": 5}, "greedy",
                           chars={"likert5": 4_000})
    assert sampled.calls_s == pytest.approx(8.0) and sampled.runs == 1


def test_the_characters_of_a_plan_are_its_template_prompt_and_responses():
    import polars as pl
    from ingest.scoring import plan_chars
    from ingest.scoring.formats import BUILTIN
    plan = pl.DataFrame({"format": ["likert5", "likert5", "tournament"], "prompt_idx": [0, 1, 0],
                         "a_idx": [0, 2, 0], "b_idx": [None, None, 1]})
    prompts = pl.DataFrame({"prompt_idx": [0, 1], "prompt": ["abc", "hello"]})
    responses = pl.DataFrame({"cand_idx": [0, 1, 2], "response": ["xy", "z" * 10, "uvw"]})
    fmts = {"likert5": BUILTIN["likert5"], "tournament": BUILTIN["tournament"]}
    t5, tt = len(BUILTIN["likert5"].template), len(BUILTIN["tournament"].template)
    # likert5: (t5 + 3 + 2) + (t5 + 5 + 3); tournament: tt + 3 + 2 + 10
    assert plan_chars(plan, prompts, responses, fmts) == {"likert5": 2 * t5 + 13, "tournament": tt + 15}


def test_before_any_run_here_the_estimate_is_a_first_guess():
    est = from_timings([], {"likert5": 18}, "constrained", chars={"likert5": 9_000})
    assert est.runs == 0 and est.load_s == FIRST_GUESS["load_s"]
    assert est.seconds == pytest.approx(FIRST_GUESS["load_s"] + 18 / FIRST_GUESS["constrained"])
    assert estimate_time(Path("/nonexistent.duckdb"), {"likert5": 18}, "local", "constrained",
                         chars={"likert5": 9_000}) == est


@pytest.mark.parametrize("name", ["local_timings.json", "local_timings_first.json"])
def test_on_the_runs_recorded_here_each_estimate_is_within_1_5x_of_the_actual(name):
    """Two sets of 3 runs of 18 and 3 of 60 label-constrained likert5 calls of the bundled model on the
    demo's MT-Bench pool, launched as the Score page launches them, alternating, on a 2-core machine
    shared with other work (its load average 7 to 15: tests/bench/bench_estimate.py), a quarter of an
    hour apart. Each run's estimate from the other five runs' measurements (what the page shows once
    runs like it were measured here) against its wall time from launch to close, and the estimate by
    hand beside it: the median of the other runs' load times, plus the run's characters at the median
    of their seconds per character. local_timings.json's runs recorded their own load; in
    local_timings_first.json, made before they did, it is the bench's reading just before each launch."""
    recorded = json.loads((RECORDED.parent / name).read_text())
    runs, timings = recorded["runs"], recorded["timings"]
    assert sorted(r["calls"] for r in runs) == [18, 18, 18, 60, 60, 60] and recorded["cores"] == 2
    ratios = []
    for run in runs:
        others = [t for t in timings if t["run_id"] != run["run_id"]]      # one row a run: likert5 alone
        est = from_timings(others, run["per_format"], "constrained", run["chars"])
        assert est.runs == 5 and not est.guessed
        load = statistics.median(t["load_s"] for t in others)
        pace = statistics.median(t["call_s"] / t["chars"] for t in others)
        assert est.seconds == pytest.approx(load + pace * run["chars"]["likert5"])
        ratios.append(est.seconds / run["actual_s"])
    assert all(1 / 1.5 <= r <= 1.5 for r in ratios), [round(r, 2) for r in ratios]
    # the fixed rate the measured one replaced (1.05 calls/s constrained, no load time): 2.2x to 6.3x too short
    old = [run["calls"] / FIRST_GUESS["constrained"] / run["actual_s"] for run in runs]
    assert all(r < 0.5 for r in old), [round(r, 2) for r in old]


@pytest.mark.slow
def test_a_run_of_the_bundled_model_records_its_timings_and_says_it_is_loading(db, write_jsonl):
    from ingest import runs, store
    from ingest.scoring import ScoreRequest, score
    from tests.fixtures import synthetic_pool
    rows = synthetic_pool(2, k_range=(3, 3), seed=3)      # 2 prompts x 3 answers: 6 likert5 calls
    store.import_pool(db, write_jsonl("pool.jsonl", rows), "p")
    n = len(rows)
    seen = []
    record = runs.Run.progress

    def watch(self, progress):
        seen.append(dict(progress))
        record(self, progress)
    runs.Run.progress = watch
    try:
        summary = score(ScoreRequest(db=str(db), pool="p", judge="local:smollm2", formats=["likert5"],
                                     decoding="constrained", progress=False))
    finally:
        runs.Run.progress = record
    assert summary["made"] == n
    loading = seen[0]
    assert loading["phase"] == "loading" and loading["what"] == "the bundled model"
    assert loading["expected_load_s"] == FIRST_GUESS["load_s"] and loading["expected_runs"] == 0
    assert seen[-1]["phase"] is None and seen[-1]["done"] == n
    (timing,) = store.judge_timings(db, "local", socket.gethostname())
    assert (timing["format"], timing["decoding"], timing["calls"]) == ("likert5", "constrained", n)
    # its characters: the template, the prompt and the response of each call, as a plan counts them
    from ingest.scoring import count_calls
    assert timing["chars"] == count_calls(db, "p", ["likert5"])["chars"]["likert5"]
    assert 0 < timing["call_s"] < timing["load_s"] + timing["call_s"]
    assert timing["load_per_core"] >= 0      # the machine's load as it began loading, for the next estimates
    # the next estimate rests on it
    assert estimate_time(db, {"likert5": 6}, "local", "constrained").runs == 1
