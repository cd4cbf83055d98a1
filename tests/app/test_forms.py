"""The Evaluate and Probes forms as data (app/evaluate_form.py, app/views/probes/form.py): the run's
arguments, exactly, with the judge as the Score form picks it (app/score_form.py): a key variable
only from a configured endpoint."""

import pytest

from app.evaluate_form import EvaluateForm, evaluate_argv
from app.views.probes.form import ProbeForm, probe_argv
from app.score_form import JudgeChoice, ScoreForm, judge_argv, score_argv
from ingest import UserError
from ingest.endpoints import Endpoint

ENDPOINTS = {"team": Endpoint("team", "http://gpu-box:8000/v1", ("m1", "m2"), "TEAM_KEY"),
             "open": Endpoint("open", "http://127.0.0.1:9/v1", ("m3",))}
TEAM = JudgeChoice("endpoint", "team", "m2")
FAKE = JudgeChoice("fake", model="sim?slot_bias=0.5")


# -- the judge alone ---------------------------------------------------------------------------------

@pytest.mark.parametrize("choice, argv, name", [
    (TEAM, ["--judge", "openai:m2@http://gpu-box:8000/v1", "--api-key-env", "TEAM_KEY"], "m2"),
    (JudgeChoice("endpoint", "open", "m3"), ["--judge", "openai:m3@http://127.0.0.1:9/v1"], "m3"),
    (JudgeChoice("custom", model=" mine ", base_url=" http://gpu-box:8000/v1 "),     # stripped; never a key
     ["--judge", "openai:mine@http://gpu-box:8000/v1"], "mine"),
    (JudgeChoice("local"), ["--judge", "local:smollm2"], "smollm2"),
    (FAKE, ["--judge", "fake:sim?slot_bias=0.5"], "sim"),
])
def test_judge_argv(choice, argv, name):
    assert judge_argv(choice, ENDPOINTS) == (argv, name)


@pytest.mark.parametrize("choice, message", [
    (JudgeChoice("endpoint", "nope", "m1"), "endpoint 'nope': not configured on this server"),
    (JudgeChoice("endpoint", "team", "m3"), "model 'm3' is not configured"),
    (JudgeChoice("custom", model="m", base_url="ftp://x"), "base URL 'ftp://x'"),
    (JudgeChoice("custom", model="m --api-key-env X", base_url="http://h/v1"), "without spaces"),
    (JudgeChoice("fake", model="../x"), "simulated judge"),
    (JudgeChoice("openai", model="m"), "judge provider 'openai'"),
])
def test_judge_argv_refusals(choice, message):
    with pytest.raises(UserError, match=message):
        judge_argv(choice, ENDPOINTS)


def test_the_score_forms_judge_is_the_same_choice():
    form = ScoreForm("p", "endpoint", ["binary", "likert5"], "team", "m2", "", "balanced", 4, "all")
    assert form.judge == TEAM
    assert score_argv(form, "x.db", ENDPOINTS) == (
        ["score", "--pool", "p", "--judge", "openai:m2@http://gpu-box:8000/v1", "--api-key-env", "TEAM_KEY",
         "--formats", "binary,likert5", "--schedule", "balanced", "--concurrency", "4", "--swap-sample", "all",
         "--db", "x.db", "--json"], "m2")


# -- Evaluate ----------------------------------------------------------------------------------------

def test_evaluate_argv():
    form = EvaluateForm("demo", TEAM, [3, 5], "study-1", 128, 4, 0)
    assert evaluate_argv(form, ENDPOINTS) == [
        "evaluate", "--runs", "3,5", "--pool", "demo", "--study", "study-1", "--max-new-tokens", "128",
        "--batch-size", "4", "--json", "--judge", "openai:m2@http://gpu-box:8000/v1", "--api-key-env", "TEAM_KEY"]


def test_evaluate_argv_with_a_prompt_limit_and_the_defaults():
    form = EvaluateForm("demo", JudgeChoice("fake", model="eval"), [7], "demo", max_prompts=20)
    assert evaluate_argv(form, {}) == [
        "evaluate", "--runs", "7", "--pool", "demo", "--study", "demo", "--max-new-tokens", "256",
        "--batch-size", "8", "--json", "--judge", "fake:eval", "--max-prompts", "20"]


def test_evaluate_argv_refuses_a_bad_judge():
    with pytest.raises(UserError, match="base URL 'ftp://x'"):
        evaluate_argv(EvaluateForm("demo", JudgeChoice("custom", model="m", base_url="ftp://x"), [1], "s"), {})


# -- Probes ------------------------------------------------------------------------------------------

def test_probe_argv_of_the_baseline_judge():
    assert probe_argv(ProbeForm(FAKE), "x.db", {}) == (
        ["probe", "--judge", "fake:sim?slot_bias=0.5", "--db", "x.db", "--json"], "sim")
    assert probe_argv(ProbeForm(FAKE, " none ", 0), "x.db", {}) == (                 # 'none': the baseline too
        ["probe", "--judge", "fake:sim?slot_bias=0.5", "--db", "x.db", "--json"], "sim")


def test_probe_argv_with_a_strategy_and_a_sample():
    # the strategy in its canonical order ('ensemble:3,swap' -> 'swap,ensemble:3'), in the name as well
    assert probe_argv(ProbeForm(TEAM, "ensemble:3,swap", 5), "x.db", ENDPOINTS) == (
        ["probe", "--judge", "openai:m2@http://gpu-box:8000/v1", "--api-key-env", "TEAM_KEY", "--db", "x.db",
         "--json", "--strategy", "swap,ensemble:3", "--sample", "5"], "m2+swap,ensemble:3")
    assert probe_argv(ProbeForm(JudgeChoice("local"), "combined", 1), "x.db", {}) == (
        ["probe", "--judge", "local:smollm2", "--db", "x.db", "--json", "--strategy", "swap,reason,rubric",
         "--sample", "1"], "smollm2+swap,reason,rubric")


@pytest.mark.parametrize("form, message", [
    (ProbeForm(FAKE, "ensemble:x"), "ensemble:K needs a whole number"),
    (ProbeForm(JudgeChoice("fake", model="/etc/x"), "ensemble:x"), "simulated judge"),   # the judge first
])
def test_probe_argv_refusals(form, message):
    with pytest.raises(UserError, match=message):
        probe_argv(form, "x.db", {})
