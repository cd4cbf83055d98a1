"""What a run's card says, as pure functions (no Streamlit; tested by hand in tests/app/test_run_card.py):
the headline that names what the run does (the judge and formats of a scoring run, the curation of a
training run: fields of its request, never flags), a finished training run's outcome, and its log
made readable.

The runs panel (app/runs_panel.py) draws the card; these functions give it its words:

    run_title(row)           "score · judge sim (simulated: noise 0.15, slot bias 0.5, latency 0 ms) ·
                              formats binary, likert5"
    train_outcome(metrics, progress, row)   last train loss (as the runs table), final eval loss, steps,
                             wall time, the adapter's folder (metrics.json, progress.jsonl, the run's row)
    clean_log(text)          a log without carriage-return progress bars, ANSI colours or the lock
                             wait repeated: what a person would have seen in a terminal
"""

from __future__ import annotations

import json
import re
import time
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import parse_qsl

from app.cli import run_request
from audit import plural
from app.evaluate_form import train_fields

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
# ingest/store/connection.py open_with_retry: said once per connection, so a busy run repeats it
_WAIT = re.compile(r"is in use by another process; waiting")


def judge_words(spec: str) -> str:
    """A --judge SPEC in words: the simulated judge's settings spelled out (it is no model)."""
    provider, _, rest = spec.partition(":")
    if provider == "fake":
        name, _, query = rest.partition("?")
        settings = dict(parse_qsl(query))
        words = [f"{k.replace('_', ' ').replace(' ms', '')} {v}{' ms' if k == 'latency_ms' else ''}"
                 for k, v in settings.items()]
        return f"{name} (simulated" + (": " + ", ".join(words) if words else "") + ")"
    if provider == "local":
        return "smollm2 (the bundled SmolLM2-135M)"
    if provider == "openai":
        model, _, url = rest.partition("@")
        return f"{model} at {url}" if url else model
    return spec


def run_title(row: dict) -> str:
    """What the run does, from its request (app.cli.run_request) and what the run recorded beside
    it once it started: the judge and formats of a score or probe run, the curation and base model
    of a training run."""
    config = row.get("config") or {}
    request = run_request(row)
    options = request.options if request else {}
    kind = row.get("kind") or (request.command if request else "run")
    parts = [kind]
    if kind in ("score", "probe", "evaluate"):     # a train run's judge is the curating judge's name
        spec = options.get("judge_spec") or next(iter(options.get("judges") or []), None)
        judge = judge_words(spec) if spec else config.get("judge")
        formats = options.get("formats") or config.get("formats") or []
        if judge:
            parts.append(f"judge {judge}")
        if formats:
            parts.append("formats " + ", ".join(formats))
        decoding = options.get("decoding") or config.get("decoding")
        if isinstance(decoding, str) and decoding != "greedy":
            parts.append(decoding)
    if kind == "probe":     # what a probe run measures: the judge as it is, or under a mitigation
        strategy = options.get("strategy") or config.get("strategy")
        parts.append(f"strategy {strategy}" if strategy else "baseline (no mitigation strategy)")
        if options.get("sample"):
            parts.append(f"{plural(int(options['sample']), 'pair')} per probe type")
    if kind == "train":
        parts.append(train_subject(row))
    if kind == "apply" and options.get("shards"):     # a student applied to shards
        parts.append(f"shards {options['shards']} → {options.get('out')}")
    return " · ".join(parts)


def train_subject(row: dict) -> str:
    """'smollm2-demo × likert5 at rate 0.25, seed 0, on local:smollm2' for a training run."""
    asked = train_fields(row)
    c = (row.get("config") or {}).get("curation") or asked["curation"] or {}
    policy = c.get("policy") or "judge"
    judge, fmt, rate = c.get("judge"), c.get("format"), c.get("rate")
    what = f"{judge} × {fmt}" if policy == "judge" and judge else f"{policy} baseline"
    if asked["subset"]:
        what = "subset " + str(asked["subset"]).rsplit("/", 1)[-1]
    seed, base = asked["seed"], asked["base"]
    return (what + (f" at rate {float(rate):g}" if rate and policy != "full" else "")
            + (f", seed {seed}" if seed is not None else "") + (f", on {base}" if base else ""))


def train_outcome(metrics: dict, progress_text: str = "", row: dict | None = None) -> dict:
    """A finished (or stopped) training run's outcome from its metrics.json: steps, the last train
    loss (the last logged step's, from progress.jsonl: what the runs table and the loss curve show;
    the Trainer's mean over the run when no step was logged), that mean (`mean_train_loss`), the
    final eval loss, the adapter's folder, and `seconds`: the run's wall time from its start to its
    end in the runs table (loading the model included), else the training loop's (metrics.json)."""
    def num(x):
        return None if x is None else round(float(x), 4)
    logged = [json.loads(line).get("loss") for line in progress_text.splitlines() if line.strip()]
    logged = [x for x in logged if x is not None]
    row = row or {}
    start, end = stored_time(row.get("started_at")), stored_time(row.get("finished_at"))
    wall = (end - start).total_seconds() if start and end else None
    return {"status": metrics.get("status"), "steps": metrics.get("steps"), "max_steps": metrics.get("max_steps"),
            "train_loss": num(logged[-1] if logged else metrics.get("train_loss")),
            "mean_train_loss": num(metrics.get("train_loss")), "eval_loss": num(metrics.get("eval_loss")),
            "seconds": round(wall, 2) if wall is not None else metrics.get("seconds"),
            "wall": wall is not None, "adapter": metrics.get("adapter")}


def stored_time(stamp):
    """A stored time (UTC, naive; text or datetime) as a datetime, or None."""
    if stamp is None or hasattr(stamp, "year"):
        return stamp
    try:
        return datetime.fromisoformat(str(stamp))
    except ValueError:
        return None


def phase_text(progress: dict, started_at, now: datetime | None = None) -> str:
    """What a running run without a step count yet is doing, and for how long: "Loading the base
    model (local:smollm2) · 45 s so far · an ETA comes with the first step"."""
    phase = {"loading": "Loading the base model", "preparing": "Tokenizing the subset and building the trainer",
             "curating": "Curating the subset"}.get(progress.get("phase"), (progress.get("phase") or "Starting").capitalize())
    if progress.get("phase") == "loading" and progress.get("base"):
        phase += f" ({progress['base']})"
    start = stored_time(started_at)
    now = now or datetime.now(timezone.utc).replace(tzinfo=None)
    so_far = f" · {duration_text((now - start).total_seconds())} so far" if start else ""
    tail = " · an ETA comes with the first step" if progress.get("phase") in ("loading", "preparing") else ""
    return f"{phase}{so_far}{tail}"


def loading_text(progress: dict, now: float | None = None) -> str:
    """A scoring run loading its judge (phase "loading", since `since`, the process's start in epoch
    seconds), with the load time measured for that judge on this machine: "Loading the bundled model
    · 12 s so far · about 40 s expected (measured here over 3 runs)"."""
    now = time.time() if now is None else now
    so_far = max(0.0, now - float(progress.get("since") or now))
    expected, runs = progress.get("expected_load_s"), progress.get("expected_runs") or 0
    text = f"Loading {progress.get('what') or 'the judge'} · {duration_text(so_far)} so far"
    if expected is None:
        return text
    basis = f"measured here over {runs} run{'s' if runs != 1 else ''}" if runs else \
        "a first guess: no run measured on this machine yet"
    if so_far > expected:
        return f"{text} · longer than the {duration_text(expected)} expected ({basis})"
    return f"{text} · about {duration_text(expected)} expected ({basis})"


def duration_text(seconds: float) -> str:
    """81.4 -> "81 s"; 151 -> "2 min 31 s"; 3725 -> "1 h 2 min"."""
    s = int(round(seconds))
    if s < 120:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60} min"


def outcome_text(outcome: dict) -> str:
    """The outcome in one Markdown line: the same last train loss as the runs table, the mean beside it."""
    def num(x):
        return "n/a" if x is None else f"{x:.4f}"
    seconds = outcome.get("seconds")
    took = "" if seconds is None else f" in {duration_text(seconds)}" + (
        " (wall time, loading the model included)" if outcome.get("wall") else " (training loop)")
    mean = outcome.get("mean_train_loss")
    return (f"{outcome['status'] or 'finished'} after {outcome['steps']} of {outcome['max_steps']} steps{took}"
            + f" · last train loss **{num(outcome['train_loss'])}**"
            + (f" (mean over the run {num(mean)})" if mean is not None and mean != outcome["train_loss"] else "")
            + f" · final eval loss **{num(outcome['eval_loss'])}** · adapter in `{outcome['adapter']}`")


def clean_log(text: str) -> str:
    """A log as a terminal would have left it: for a line that a progress bar rewrote with carriage
    returns, only its last state; no ANSI colour codes; a run of identical lines once with its count;
    the lock-wait notice once, with the number of times it was said."""
    lines = []
    for raw in text.replace("\r\n", "\n").split("\n"):
        states = [s for s in _ANSI.sub("", raw).split("\r") if s.strip()]
        lines.append(states[-1].rstrip() if states else "")
    out, counts, waits = [], [], None
    for line in lines:
        if _WAIT.search(line):
            if waits is not None:
                counts[waits] += 1
                continue
            waits = len(out)
        elif out and line == out[-1] and line:
            counts[-1] += 1
            continue
        out.append(line)
        counts.append(1)
    return "\n".join(line + (f"  [×{n}]" if n > 1 else "") for line, n in zip(out, counts)).strip("\n")


def distil_card(row: dict) -> dict | None:
    """A finished distil run's model card (card.json in the student's folder: the one the run reported,
    else the one its request named, else the run's own folder) with `folder` added; None without one."""
    result = (row.get("progress") or {}).get("result")
    asked = ((row.get("config") or {}).get("options") or {}).get("out")
    for path in (Path(result) if result else None, Path(asked) / "card.json" if asked else None,
                 Path(row["out_dir"]) / "card.json" if row.get("out_dir") else None):
        if path is not None and path.is_file():
            return {**json.loads(path.read_text(encoding="utf-8")), "folder": str(path.parent)}
    return None
