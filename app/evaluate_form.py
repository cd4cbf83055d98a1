"""The Evaluate page's form, as data: the training runs, the study, the generation limits and the
judge (app/score_form.py's rules), and the `judgeaudit evaluate` arguments they become. Pure (no
Streamlit), so tests/app/test_forms.py checks the arguments exactly."""

from __future__ import annotations

from dataclasses import dataclass, field

from app.score_form import JudgeChoice, judge_argv
from ingest.endpoints import Endpoint


@dataclass
class EvaluateForm:
    pool: str
    judge: JudgeChoice
    runs: list[int] = field(default_factory=list)     # training run ids
    study: str = ""
    max_new_tokens: int = 256
    batch_size: int = 8
    max_prompts: int = 0                               # 0: every held-out prompt


def evaluate_argv(form: EvaluateForm, endpoints: dict[str, Endpoint]) -> list[str]:
    """Arguments for `python -m app.cli` (the database travels in the run's environment);
    UserError if the judge is not acceptable."""
    judge, _ = judge_argv(form.judge, endpoints)
    argv = ["evaluate", "--runs", ",".join(map(str, form.runs)), "--pool", form.pool, "--study", form.study,
            "--max-new-tokens", str(int(form.max_new_tokens)), "--batch-size", str(int(form.batch_size)),
            "--json", *judge]
    return argv + (["--max-prompts", str(int(form.max_prompts))] if form.max_prompts else [])


def trained_run_label(row: dict, pool: str | None = None, short: bool = False) -> str:
    """The words for a training run (a row of ingest.runs.list_runs), everywhere a page names one:
    its id, the condition name its outcomes will carry (train.evaluate.condition_name), seed,
    length, base model and status, e.g. 'Run 3 · sim/tournament@0.25 · seed 0 · 5 steps ·
    local:smollm2 · finished'; `short` (a chart's legend) stops after the seed."""
    from train.evaluate import condition_name
    config = row.get("config") or {}
    subset = config.get("curation") or config.get("subset_record") or {}
    if not subset and config.get("subset"):
        subset = {"path": config["subset"]}
    parts = [f"Run {row['run_id']}", condition_name({"subset": subset}), f"seed {config.get('seed', 0)}"]
    if not short:
        steps = config.get("max_steps") or 0
        length = f"{steps} steps" if steps else (f"{config['epochs']:g} epochs" if config.get("epochs") else None)
        base = str(config.get("base") or "").rstrip("/").rsplit("/", 1)[-1] or None
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
