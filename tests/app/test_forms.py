"""The Score, Evaluate, Probes and Curate & Train forms as data (app/score_form.py,
app/evaluate_form.py, app/views/probes/form.py, app/views/curate/form.py): the run's request,
exactly, with the judge as the Score form picks it (a key variable only from a configured endpoint);
the command line built from a request, which click parses back to the same request; and the one
legacy adapter that reads the command lines earlier versions stored."""

from pathlib import Path

import pytest

from app.cli import command_line, defaults, legacy_request, request_for, run_request
from app.cli._request import COMMANDS
from app.evaluate_form import EvaluateForm, evaluate_request
from app.score_form import JudgeChoice, ScoreForm, judge_options, score_request
from app.views.curate.form import curation_options, grid_requests, train_request
from app.views.probes.form import ProbeForm, probe_request
from ingest import UserError
from ingest.endpoints import Endpoint
from ingest.runs import RunRequest

ENDPOINTS = {"team": Endpoint("team", "http://gpu-box:8000/v1", ("m1", "m2"), "TEAM_KEY"),
             "open": Endpoint("open", "http://127.0.0.1:9/v1", ("m3",))}
TEAM = JudgeChoice("endpoint", "team", "m2")
FAKE = JudgeChoice("fake", model="sim?slot_bias=0.5")
TEAM_SPEC = "openai:m2@http://gpu-box:8000/v1"
HP = {"max_steps": 4, "epochs": 2.0, "learning_rate": 2e-4, "batch_size": 8, "micro_batch_size": 4, "lora_r": 16,
      "lora_alpha": 32, "lora_dropout": 0.05, "max_length": 1024}


# -- the judge alone ---------------------------------------------------------------------------------

@pytest.mark.parametrize("choice, options, name", [
    (TEAM, {"judge_spec": TEAM_SPEC, "api_key_env": "TEAM_KEY"}, "m2"),
    (JudgeChoice("endpoint", "open", "m3"), {"judge_spec": "openai:m3@http://127.0.0.1:9/v1", "api_key_env": None},
     "m3"),
    (JudgeChoice("custom", model=" mine ", base_url=" http://gpu-box:8000/v1 "),     # stripped; never a key
     {"judge_spec": "openai:mine@http://gpu-box:8000/v1", "api_key_env": None}, "mine"),
    (JudgeChoice("local"), {"judge_spec": "local:smollm2", "api_key_env": None}, "smollm2"),
    (FAKE, {"judge_spec": "fake:sim?slot_bias=0.5", "api_key_env": None}, "sim"),
])
def test_judge_options(choice, options, name):
    assert judge_options(choice, ENDPOINTS) == (options, name)


@pytest.mark.parametrize("choice, message", [
    (JudgeChoice("endpoint", "nope", "m1"), "endpoint 'nope': not configured on this server"),
    (JudgeChoice("endpoint", "team", "m3"), "model 'm3' is not configured"),
    (JudgeChoice("custom", model="m", base_url="ftp://x"), "base URL 'ftp://x'"),
    (JudgeChoice("custom", model="m --api-key-env X", base_url="http://h/v1"), "without spaces"),
    (JudgeChoice("fake", model="../x"), "simulated judge"),
    (JudgeChoice("openai", model="m"), "judge provider 'openai'"),
])
def test_judge_options_refusals(choice, message):
    with pytest.raises(UserError, match=message):
        judge_options(choice, ENDPOINTS)


# -- each form's request -----------------------------------------------------------------------------

def test_the_score_forms_request():
    form = ScoreForm("p", "endpoint", ["binary", "likert5"], "team", "m2", "", "balanced", 4, "all", "constrained")
    assert form.judge == TEAM
    request, name = score_request(form, ENDPOINTS)
    assert name == "m2" and request.command == "score"
    asked = {"pool": "p", "judge_spec": TEAM_SPEC, "api_key_env": "TEAM_KEY", "formats": ["binary", "likert5"],
             "schedule": "balanced", "concurrency": 4, "swap_sample": "all", "decoding": "constrained",
             "as_json": True}
    assert request.options == {**defaults("score"), **asked}
    assert "db" not in request.options             # the database travels in the run's environment
    # the command line: the subcommand, then each option that is not at its default, in the command's order
    assert command_line(request) == [
        "score", "--pool", "p", "--judge", TEAM_SPEC, "--formats", "binary,likert5", "--concurrency", "4",
        "--swap-sample", "all", "--schedule", "balanced", "--api-key-env", "TEAM_KEY", "--decoding", "constrained",
        "--json"]


def test_the_evaluate_forms_request():
    request = evaluate_request(EvaluateForm("demo", TEAM, [3, 5], "study-1", 128, 4, 0), ENDPOINTS)
    asked = {"runs": ["3", "5"], "pool": "demo", "judges": [TEAM_SPEC], "api_key_env": "TEAM_KEY",
             "study": "study-1", "max_new_tokens": 128, "batch_size": 4, "max_prompts": None, "as_json": True}
    assert request == RunRequest("evaluate", {**defaults("evaluate"), **asked})
    assert command_line(request) == [
        "evaluate", "--runs", "3,5", "--pool", "demo", "--judge", TEAM_SPEC, "--max-new-tokens", "128",
        "--batch-size", "4", "--study", "study-1", "--api-key-env", "TEAM_KEY", "--json"]
    limited = evaluate_request(EvaluateForm("demo", JudgeChoice("fake", model="eval"), [7], "demo", max_prompts=20), {})
    assert (limited.get("max_prompts"), limited.get("judges"), limited.get("api_key_env")) == (20, ["fake:eval"], None)
    with pytest.raises(UserError, match="base URL 'ftp://x'"):
        evaluate_request(EvaluateForm("demo", JudgeChoice("custom", model="m", base_url="ftp://x"), [1], "s"), {})


def test_the_probe_forms_request():
    request, name = probe_request(ProbeForm(FAKE), {})
    assert name == "sim" and command_line(request) == ["probe", "--judge", "fake:sim?slot_bias=0.5", "--json"]
    assert probe_request(ProbeForm(FAKE, " none ", 0), {}) == (request, "sim")       # 'none': the baseline too
    # the strategy in its canonical order ('ensemble:3,swap' -> 'swap,ensemble:3'), in the name as well
    request, name = probe_request(ProbeForm(TEAM, "ensemble:3,swap", 5), ENDPOINTS)
    assert name == "m2+swap,ensemble:3"
    assert {k: request.get(k) for k in ("judge_spec", "api_key_env", "strategy", "sample")} == {
        "judge_spec": TEAM_SPEC, "api_key_env": "TEAM_KEY", "strategy": "swap,ensemble:3", "sample": 5}
    assert probe_request(ProbeForm(JudgeChoice("local"), "combined", 1), {})[0].get("strategy") == "swap,reason,rubric"


@pytest.mark.parametrize("form, message", [
    (ProbeForm(FAKE, "ensemble:x"), "ensemble:K needs a whole number"),
    (ProbeForm(JudgeChoice("fake", model="/etc/x"), "ensemble:x"), "simulated judge"),   # the judge first
])
def test_probe_request_refusals(form, message):
    with pytest.raises(UserError, match=message):
        probe_request(form, {})


def test_the_train_forms_request_and_grid():
    request = train_request("p", curation_options("judge", "j", "likert5", None, 0.25), "local:smollm2", 2, HP)
    assert command_line(request) == ["train", "--pool", "p", "--judge", "j", "--format", "likert5", "--rate", "0.25",
                                     "--base", "local:smollm2", "--max-steps", "4", "--seed", "2"]
    # max steps 0: by epochs (the option stays at its default); full takes no rate
    full = train_request("p", curation_options("full", None, None, None, 1.0), "b", 0, {**HP, "max_steps": 0})
    assert (full.get("policy"), full.get("rate"), full.get("max_steps")) == ("full", None, -1)
    # 2 formats x 2 rates + (random, length) x 2 rates + full = 9 runs per seed; 2 seeds = 18
    grid = grid_requests("p", "j", ["binary", "likert5"], "constrained", [0.1, 0.25], [0, 1], "b", HP)
    assert len(grid) == 18 and [r.get("policy") for r in grid[:9]] == [
        "judge", "judge", "random", "length", "judge", "judge", "random", "length", "full"]
    assert {r.get("decoding") for r in grid if r.get("policy") == "judge"} == {"constrained"}
    with pytest.raises(UserError, match="'beam' is not one of 'greedy', 'sampled', 'constrained'"):
        train_request("p", curation_options("judge", "j", "likert5", "beam", 0.25), "b", 0, HP)


# -- the command line is built from the request, and click reads the same request back -----------------

def _parsed(argv: list[str]) -> RunRequest:
    """The request click's own parser makes of a command line: every parameter but --db, paths as
    text, tuples as lists (written out here, apart from app/cli/_request.py)."""
    ctx = COMMANDS[argv[0]].make_context(argv[0], argv[1:])
    plain = {k: [str(x) for x in v] if isinstance(v, tuple) else str(v) if isinstance(v, Path) else v
             for k, v in ctx.params.items() if k != "db"}
    return RunRequest(argv[0], plain)


ROUND_TRIP = {
    "score": lambda: score_request(ScoreForm("p", "endpoint", ["binary", "numeric100"], "team", "m1", "", "both", 16,
                                             "7", "constrained"), ENDPOINTS)[0],
    "probe": lambda: probe_request(ProbeForm(TEAM, "swap,ensemble:3", 5), ENDPOINTS)[0],
    "train": lambda: train_request("p", curation_options("judge", "j", "tournament", "constrained", 0.1),
                                   "/models/base", 3, {**HP, "learning_rate": 1e-05, "lora_dropout": 0.0}),
    "evaluate": lambda: evaluate_request(EvaluateForm("p", TEAM, [4, 9, 12], "s", 64, 2, 30), ENDPOINTS),
}


@pytest.mark.parametrize("command", sorted(ROUND_TRIP))
def test_request_to_command_line_and_back(command):
    request = ROUND_TRIP[command]()
    assert request.command == command
    argv = command_line(request)
    assert _parsed(argv) == request
    # every option the request sets away from its default is named on the line, by its own flag
    changed = [o for o in COMMANDS[command].params if o.name != "db" and request.get(o.name) not in
               (None, [], defaults(command)[o.name])]
    assert changed and all(set(o.opts + o.secondary_opts) & set(argv) for o in changed)


def test_a_typed_request_for_an_unknown_option_or_command_is_refused():
    with pytest.raises(TypeError, match="no option judge"):
        request_for("score", pool="p", judge="fake:x", formats=["binary"])     # the parameter is judge_spec
    with pytest.raises(UserError, match="'import-pool' is not a command that runs in the background"):
        request_for("import-pool")


# -- runs stored by earlier versions: their command line, read by click, through one adapter -----------

LEGACY = {
    "score": (["score", "--pool", "p", "--judge", TEAM_SPEC, "--api-key-env", "TEAM_KEY", "--formats",
               "binary,likert5", "--schedule", "balanced", "--concurrency", "4", "--swap-sample", "all", "--db",
               "x.db", "--json", "--decoding", "constrained"],
              {"pool": "p", "judge_spec": TEAM_SPEC, "api_key_env": "TEAM_KEY", "formats": ["binary", "likert5"],
               "schedule": "balanced", "concurrency": 4, "swap_sample": "all", "decoding": "constrained",
               "as_json": True}),
    "probe": (["probe", "--judge", TEAM_SPEC, "--api-key-env", "TEAM_KEY", "--db", "x.db", "--json", "--strategy",
               "swap,ensemble:3", "--sample", "5"],
              {"judge_spec": TEAM_SPEC, "api_key_env": "TEAM_KEY", "strategy": "swap,ensemble:3", "sample": 5,
               "as_json": True}),
    "train": (["train", "--pool", "p", "--policy", "judge", "--judge", "j", "--format", "likert5", "--rate", "0.25",
               "--base", "local:smollm2", "--seed", "2", "--max-steps", "4", "--learning-rate", "0.0002"],
              {"pool": "p", "policy": "judge", "judge": "j", "fmt": "likert5", "rate": 0.25, "base": "local:smollm2",
               "seed": 2, "max_steps": 4, "learning_rate": 0.0002}),
    "evaluate": (["evaluate", "--runs", "3,5", "--pool", "demo", "--study", "study-1", "--max-new-tokens", "128",
                  "--batch-size", "4", "--json", "--judge", TEAM_SPEC, "--api-key-env", "TEAM_KEY"],
                 {"runs": ["3", "5"], "pool": "demo", "study": "study-1", "max_new_tokens": 128, "batch_size": 4,
                  "as_json": True, "judges": [TEAM_SPEC], "api_key_env": "TEAM_KEY"}),
}


@pytest.mark.parametrize("command", sorted(LEGACY))
def test_a_command_line_an_earlier_version_stored_reads_as_its_request(command):
    argv, options = LEGACY[command]
    expected = RunRequest(command, {**defaults(command), **options})
    assert legacy_request(argv) == expected
    row = {"run_id": 1, "kind": command, "config": {"argv": argv, "pool": "p"}}     # the fields it recorded beside
    assert run_request(row) == expected
    assert run_request({"config": expected.to_config()}) == expected               # today's config: the request


def test_the_legacy_adapter_reads_no_unknown_command_and_no_broken_line():
    assert legacy_request(["import-pool", "x.jsonl"]) is None
    assert legacy_request(["score", "--pool"]) is None                             # does not parse
    assert legacy_request([]) is None and run_request({"config": None}) is None
    assert run_request({"config": {"base": "b", "seed": 1}}) is None                # fields only: no request
