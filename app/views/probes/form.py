"""The Probes page's form, as data: the judge (app/score_form.py's rules), a mitigation strategy
and a sample size, and the `judgeaudit probe` arguments they become. Pure (no Streamlit), so
tests/app/test_forms.py checks the arguments exactly."""

from __future__ import annotations

from dataclasses import dataclass

from app.score_form import JudgeChoice, judge_argv
from ingest.endpoints import Endpoint


@dataclass
class ProbeForm:
    judge: JudgeChoice
    strategy: str = ""                  # empty: the baseline judge
    sample: int = 0                     # pairs per probe type; 0: all 325 pairs


def probe_argv(form: ProbeForm, db: str, endpoints: dict[str, Endpoint]) -> tuple[list[str], str]:
    """(arguments for `python -m app.cli`, the judge's name in the store: NAME, or NAME+STRATEGY
    with the strategy written canonically); UserError for a bad judge or strategy."""
    from ingest.scoring.judges import parse_strategy      # (loads the judges: only when a form is sent)
    judge, name = judge_argv(form.judge, endpoints)
    strategy = parse_strategy(form.strategy)
    argv = ["probe", *judge, "--db", str(db), "--json"]
    if strategy:
        argv += ["--strategy", strategy.canonical]
        name = f"{name}+{strategy.canonical}"
    return argv + (["--sample", str(int(form.sample))] if form.sample else []), name
