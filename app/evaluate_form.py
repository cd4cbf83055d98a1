"""The Evaluate page's form, as data: the training runs, the study, the generation limits and the
judge (app/score_form.py's rules), and the `judgeaudit evaluate` arguments they become. Pure (no
Streamlit), so tests/test_forms.py checks the arguments exactly."""

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
