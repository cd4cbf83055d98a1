"""The Probes page's form, as data: the judge (app/score_form.py's rules), a mitigation strategy
and a sample size, and the `judgeaudit probe` request they become. Pure (no Streamlit), so
tests/app/test_forms.py checks the requests exactly."""

from __future__ import annotations

from dataclasses import dataclass

from app.cli import request_for
from app.score_form import JudgeChoice, judge_options
from ingest.endpoints import Endpoint
from ingest.runs import RunRequest
from ingest.scoring.judges import parse_strategy


@dataclass
class ProbeForm:
    judge: JudgeChoice
    strategy: str = ""                  # empty: the baseline judge
    sample: int = 0                     # pairs per probe type; 0: all of them (ingest.scoring.probes.probe_set)


def probe_request(form: ProbeForm, endpoints: dict[str, Endpoint]) -> tuple[RunRequest, str]:
    """(the `judgeaudit probe` request, the judge's name in the store: NAME, or NAME+STRATEGY with
    the strategy written canonically); UserError for a bad judge or strategy."""
    judge, name = judge_options(form.judge, endpoints)
    strategy = parse_strategy(form.strategy)
    if strategy:
        name = f"{name}+{strategy.canonical}"
    return request_for("probe", **judge, as_json=True, strategy=strategy.canonical if strategy else None,
                       sample=int(form.sample) if form.sample else None), name
