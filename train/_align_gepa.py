"""`align --optimizer gepa`: the format's instructions evolved by GEPA (the optional `gepa` package,
`pip install 'judgeaudit[gepa]'`) with a reflection model the user names as an OpenAI-compatible
endpoint (docs/metrics.md#aligning-a-judge-align).

GEPA sees the training prompts' minibatch only, both as its training and its validation set: it
asks the judge the items under a candidate wording (one call an item, through align's cached asker),
scores each by its agreement with the human value, shows the reflection model the items the judge
got wrong and right with what the human said, and keeps the wordings that score best within its
share of the budget. Its best wording then joins the built-in search as one more instruction variant
(the built-in wording first, a tie keeps it), so demonstrations are chosen as without GEPA and the
held-out prompts stay out of both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from ingest import UserError

COMPONENT = "instructions"


def reflection_model(spec: str | None, api_key_env: str | None, max_tokens: int = 1000):
    """The reflection model of `--reflection openai:MODEL@BASE_URL` (its key, if any, from the
    environment variable `api_key_env` names), answering at most `max_tokens` tokens a call."""
    if not spec:
        raise UserError("--optimizer gepa: give the reflection model as --reflection openai:MODEL@BASE_URL "
                        "(an OpenAI-compatible endpoint; its API key, if any, by --reflection-api-key-env)")
    provider, _, rest = spec.partition(":")
    model, _, url = rest.partition("@")
    if provider != "openai" or not model or not url.startswith(("http://", "https://")):
        raise UserError(f"--reflection {spec}: expected openai:MODEL@BASE_URL, e.g. "
                        "openai:gpt-4o-mini@https://api.openai.com/v1")
    from ingest.scoring.judges.openai_compat import ChatModel
    if max_tokens < 1:
        raise UserError(f"--reflection-max-tokens {max_tokens}: at least 1")
    return ChatModel(model, url, api_key_env=api_key_env, max_tokens=max_tokens)


def _gepa():
    try:
        import gepa
    except ImportError:
        raise UserError("--optimizer gepa: the gepa package is not installed; install the optional extra "
                        "(pip install 'judgeaudit[gepa]'), or use --optimizer search") from None
    return gepa


class JudgeAdapter:
    """GEPA's adapter (gepa.core.adapter.GEPAAdapter): a candidate is {"instructions": wording}.

    ask(wording, items) -> the answers (dicts with raw, value, status) in the items' order;
    agree(wording, items) -> their agreements with the human values; show(item) -> the item's
    texts as the reflection model reads them; verdict(y) -> the format's answer for human value y."""

    def __init__(self, ask: Callable, agree: Callable, show: Callable, verdict: Callable):
        self.ask, self.agree, self.show, self.verdict = ask, agree, show, verdict
        self.propose_new_texts = None       # GEPA's own proposer, with the reflection model

    def evaluate(self, batch: list[dict], candidate: dict[str, str], capture_traces: bool = False):
        from gepa.core.adapter import EvaluationBatch
        wording = candidate[COMPONENT].strip() or None
        answers = self.ask(wording, batch)            # asked once: agree reads the same cached answers
        scores = [float(x) for x in self.agree(wording, batch)]
        outputs = [a["raw"] for a in answers]
        traces = [{"item": i, "answer": a, "agreement": s} for i, a, s in zip(batch, answers, scores)] \
            if capture_traces else None
        return EvaluationBatch(outputs=outputs, scores=scores, trajectories=traces)

    def make_reflective_dataset(self, candidate: dict[str, str], eval_batch, components_to_update: list[str]) -> dict:
        rows = []
        for t in eval_batch.trajectories or []:
            answer = t["answer"]
            said = answer["raw"] if answer["raw"] is not None else f"(no answer: {answer['error']})"
            parsed = "" if answer["status"] == "ok" else " It did not parse as one of the format's answers."
            feedback = (f"A person's verdict was {self.verdict(t['item']['y'])}. The judge's answer "
                        f"{'agrees' if t['agreement'] >= 1 else 'partly agrees' if t['agreement'] > 0 else 'disagrees'}"
                        f" with it.{parsed}")
            rows.append({"Inputs": self.show(t["item"]), "Generated Outputs": said, "Feedback": feedback})
        return {c: rows for c in components_to_update}


class _FileLogger:
    """GEPA's log lines into a file of the run (never stdout: `align --json` prints there)."""

    def __init__(self, path: Path):
        self.path = path

    def log(self, message: str) -> None:
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(str(message) + "\n")


def limits(n: int, calls: int) -> tuple[int, int, int]:
    """(reflection minibatch r, validation items v, GEPA's max_metric_calls) for `calls` judge calls on
    a minibatch of n items. GEPA stops before an iteration once it has made max_metric_calls; an
    iteration costs at most 2r + v (the parent and the child on r items, then the child on the v
    validation items), so max_metric_calls = calls − 2r − v keeps the total within `calls`, and
    v = min(n, (calls − 2r − 1) // 2) leaves room for at least one iteration after the seed's v.
    v < 1: too few calls for GEPA."""
    r = min(3, n)
    v = min(n, (calls - 2 * r - 1) // 2)
    return r, v, calls - 2 * r - v


def check_room(n: int, calls: int) -> None:
    """A UserError when `calls` (GEPA's half of --budget) leave no room for one iteration on n items."""
    r, v, _ = limits(n, calls)
    if v < 1:
        raise UserError(f"--optimizer gepa: GEPA's half of the budget ({calls} calls) leaves no room for one "
                        f"iteration on {n} items; give a larger --budget (at least {2 * (2 * r + 3)})")


def evolve(seed_wording: str, minibatch: list[dict], adapter: JudgeAdapter, reflection, calls: int, seed: int,
           log: Path) -> dict:
    """GEPA within `calls` judge calls on the minibatch (its first v items validate, every item may
    be reflected on; `limits`): {wording, candidates, scores, metric_calls, reflection_calls};
    `wording` is GEPA's best (the seed wording when nothing beat it)."""
    gepa = _gepa()
    r, v, most = limits(len(minibatch), calls)
    check_room(len(minibatch), calls)
    result = gepa.optimize(seed_candidate={COMPONENT: seed_wording}, trainset=minibatch, valset=minibatch[:v],
                           adapter=adapter, reflection_lm=reflection, max_metric_calls=most,
                           reflection_minibatch_size=r, skip_perfect_score=False,
                           candidate_selection_strategy="current_best", logger=_FileLogger(log),
                           display_progress_bar=False, seed=seed, raise_on_exception=True)
    best = result.candidates[result.best_idx][COMPONENT]
    return {"wording": best.strip() or seed_wording, "candidates": [c[COMPONENT] for c in result.candidates],
            "scores": [float(s) for s in result.val_aggregate_scores],
            "metric_calls": result.total_metric_calls, "reflection_calls": getattr(reflection, "calls", None)}
