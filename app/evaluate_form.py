"""The Evaluate page's form, as data: the training runs, the study, the generation limits and the
judge (app/score_form.py's rules), and the `judgeaudit evaluate` request they become; and the words
for a training run wherever a page names one, read from its request (app.cli.run_request) and what
it recorded beside. Pure (no Streamlit), so tests/app/test_forms.py checks the requests exactly."""

from __future__ import annotations

from dataclasses import dataclass, field

from app.cli import request_for, run_request
from app.score_form import JudgeChoice, judge_options
from ingest.endpoints import Endpoint
from ingest.runs import RunRequest
from train.evaluate import condition_name


@dataclass
class EvaluateForm:
    pool: str
    judge: JudgeChoice
    runs: list[int] = field(default_factory=list)     # training run ids
    study: str = ""
    max_new_tokens: int = 256
    batch_size: int = 8
    max_prompts: int = 0                               # 0: every held-out prompt


def evaluate_request(form: EvaluateForm, endpoints: dict[str, Endpoint]) -> RunRequest:
    """The `judgeaudit evaluate` request (the database travels in the run's environment);
    UserError if the judge is not acceptable."""
    judge, _ = judge_options(form.judge, endpoints)
    return request_for("evaluate", runs=[str(r) for r in form.runs], pool=form.pool, study=form.study,
                       max_new_tokens=int(form.max_new_tokens), batch_size=int(form.batch_size), as_json=True,
                       judges=[judge["judge_spec"]], api_key_env=judge["api_key_env"],
                       max_prompts=int(form.max_prompts) if form.max_prompts else None)


def trained_run_caption(row: dict, pool: str | None = None, short: bool = False) -> str:
    """The words for a training run (a row of ingest.runs.list_runs), everywhere a page names one:
    its id, the condition name its outcomes will carry (train.evaluate.condition_name), seed,
    length, base model and status, e.g. 'Run 3 · sim/tournament@0.25 · seed 0 · 5 steps ·
    local:smollm2 · finished'; `short` (a chart's legend) stops after the seed."""
    config = row.get("config") or {}
    asked = train_fields(row)
    subset = config.get("curation") or config.get("subset_record") or asked["curation"] or {}
    if not subset and asked["subset"]:
        subset = {"path": asked["subset"]}
    parts = [f"Run {row['run_id']}", condition_name({"subset": subset}), f"seed {asked['seed']}"]
    if not short:
        steps = max(asked["max_steps"] or 0, 0)
        epochs = asked["epochs"]
        length = f"{steps} steps" if steps else (f"{epochs:g} epochs" if epochs else None)
        base = str(asked["base"] or "").rstrip("/").rsplit("/", 1)[-1] or None
        where = f"pool {row['pool']}" if row.get("pool") and pool and row["pool"] != pool else None
        status = "stopped early" if row.get("status") == "cancelled" else row.get("status")
        parts += [length, base, where, status]
    return " · ".join(str(p) for p in parts if p)


def training_choices(rows: list[dict], pool: str) -> tuple[list[int], list[int]]:
    """(run ids to offer, newest first; the ones to pre-select): the training runs that left an
    adapter (finished, or stopped early and saved), and the newest of them trained on this pool."""
    done = sorted((r for r in rows if r.get("status") in ("finished", "cancelled")), key=lambda r: -r["run_id"])
    mine = [r["run_id"] for r in done if r.get("pool") == pool]
    return [r["run_id"] for r in done], mine[:1]


def train_fields(row: dict) -> dict:
    """What a training run was asked, by field: its request's options (app.cli.run_request) or, for
    a run recorded without one, the fields its command recorded (base, seed, max_steps, epochs,
    subset, curation): base, seed, max_steps, epochs, subset, curation (a dict when it curates from a
    pool: pool, policy, judge, format, decoding, score, rate; else None)."""
    config = row.get("config") or {}
    request = run_request(row)
    if request is None:
        return {"base": config.get("base"), "seed": config.get("seed", 0), "max_steps": config.get("max_steps"),
                "epochs": config.get("epochs"), "subset": config.get("subset"), "curation": config.get("curation")}
    o = request.options
    curation = None if not o.get("pool") else {
        "pool": o["pool"], "policy": o.get("policy"), "judge": o.get("judge"), "format": o.get("fmt"),
        "decoding": o.get("decoding"), "score": o.get("score_kind"), "rate": o.get("rate")}
    return {"base": o.get("base"), "seed": o.get("seed", 0), "max_steps": o.get("max_steps"),
            "epochs": o.get("epochs"), "subset": o.get("subset"), "curation": curation}
