"""How long a scoring run will take, before it starts (docs/scoring.md#time-estimates).

The bundled model's time is what runs measured on this machine (the store's `judge_timings`): its
load time (from the run's process start to the model ready: Python, torch, the model) and, per format
and decoding, its pace: seconds per character of the calls' texts (template, prompt, response or
responses: the model reads every token, so a pool of long answers takes longer a call), and calls per
second beside it. The latest LATEST_RUNS runs count, each run one vote: the load time is the median of
their load times, a format's pace the median of their paces, so that one run made while the machine
was busy (or idle) moves the estimate little. Where nothing was measured here yet, a first guess
stands in (FIRST_GUESS) and the estimate says so. A simulated judge's time is its own latency; an
endpoint's is unknown until a Test connection.

The machine is often shared, and its other work sets the pace: each run also recorded the 1-minute
load average per core at its start (`load_per_core`), and an estimate says the median load its runs
met beside the load now, so that a reader knows what it was measured under. The times are not scaled
by it: scaling each run's times by (1 + load now) / (1 + its load) brought runs estimated from others
of the same quarter hour nearer their actual, but runs estimated from another quarter hour's further
(docs/scoring.md#time-estimates).

    est = estimate_time(db, {"likert5": 18}, "local", "constrained", chars={"likert5": 12691})
    est.seconds, est.load_s, est.runs      # 61.0, 40.0, 3
"""

from __future__ import annotations

import os
import socket
import statistics
from dataclasses import dataclass, field

import polars as pl

from .. import store

# before any run here: the model loads in about a minute on 2 busy cores; 0.3 greedy verdicts/s (16
# generated tokens each, tests/bench/bench_local_judge.py), the label-constrained reading 3.49x that
FIRST_GUESS = {"load_s": 60.0, "greedy": 0.3, "constrained": 0.3 * 3.49}
SAME_PACE = {"sampled": "greedy"}    # a sampled answer is generated as a greedy one is: one pace
LATEST_RUNS = 5       # the runs an estimate rests on: the latest, so a faster machine or version shows soon


@dataclass(frozen=True)
class Estimate:
    """A run's expected time: `seconds` in all, `load_s` of it loading the judge (None: nothing to
    load), `calls_s` making the calls; `runs`: how many runs measured here the numbers rest on (0:
    first guesses only); `guessed`: the formats whose pace is not their own (another format's, or a
    first guess); `paces`: per format, its calls/s in this run and the runs that pace is the median of
    (0: a first guess); `load_now`, `load_then`: the machine's load per core now and the median of the
    loads the runs met (None: not known; said beside the estimate, not applied to it)."""
    seconds: float
    load_s: float | None = None
    calls_s: float = 0.0
    runs: int = 0
    guessed: tuple[str, ...] = field(default_factory=tuple)
    paces: tuple[tuple[str, float, int], ...] = field(default_factory=tuple)
    load_now: float | None = None
    load_then: float | None = None


def machine_load() -> float | None:
    """The machine's 1-minute load average per core (None where the system does not say)."""
    try:
        return os.getloadavg()[0] / (os.cpu_count() or 1)
    except (AttributeError, OSError):
        return None


def from_timings(rows: list[dict], per_format: dict[str, int], decoding: str, chars: dict[str, int] | None = None,
                 latest: int = LATEST_RUNS, load_per_core: float | None = None) -> Estimate:
    """The bundled model's estimate for `per_format` calls (of `chars` characters per format, when
    known) under `decoding`, from what runs measured (rows of the store's judge_timings: run_id,
    format, decoding, calls, chars, call_s, load_s, load_per_core); `load_per_core`, the machine's
    load now, is said beside it."""
    decoding = SAME_PACE.get(decoding, decoding)
    rows = [{**r, "decoding": SAME_PACE.get(r["decoding"], r["decoding"])} for r in rows]
    loads = _latest(rows, latest)
    load_s = statistics.median(r["load_s"] for r in loads.values()) if loads else FIRST_GUESS["load_s"]
    used, calls_s, guessed, paces = dict(loads), 0.0, [], []
    for fmt, n in per_format.items():
        cell = [r for r in rows if r["format"] == fmt and r["decoding"] == decoding and r["call_s"] > 0]
        same = cell or [r for r in rows if r["decoding"] == decoding and r["call_s"] > 0]  # another format's pace
        keep = _latest(same, latest)
        picked = [r for r in same if r["run_id"] in keep]
        if picked and cell:
            used.update(keep)
        else:
            guessed.append(fmt)
        seconds = _seconds(picked, n, (chars or {}).get(fmt), decoding)
        calls_s += seconds
        paces.append((fmt, n / seconds if seconds else 0.0, len(keep)))
    met = [r.get("load_per_core") for r in used.values()]
    then = statistics.median(met) if met and None not in met else None
    return Estimate(load_s + calls_s, load_s, calls_s, len(used), tuple(guessed), tuple(paces),
                    load_per_core if then is not None else None, then)


def _seconds(picked: list[dict], n: int, n_chars: int | None, decoding: str) -> float:
    """Seconds for n calls of n_chars characters at the median pace of the runs whose rows are
    `picked` (a run's rows summed: one pace a run): seconds per character where both sides know the
    characters, else per call; the first guess without any row."""
    if not picked:
        return n / FIRST_GUESS.get(decoding, FIRST_GUESS["greedy"])
    runs: dict[int, list[float]] = {}
    for r in picked:
        calls, chars, seconds = runs.get(r["run_id"], (0, 0, 0.0))
        runs[r["run_id"]] = [calls + r["calls"], chars + (r.get("chars") or 0), seconds + r["call_s"]]
    by_chars = [seconds / chars for _, chars, seconds in runs.values() if chars]
    if n_chars and by_chars:
        return n_chars * statistics.median(by_chars)
    return n * statistics.median(seconds / calls for calls, _, seconds in runs.values())


def _latest(rows: list[dict], latest: int) -> dict[int, dict]:
    """The latest `latest` runs among rows: run_id -> one of its rows."""
    runs: dict[int, dict] = {}
    for r in sorted(rows, key=lambda r: -r["run_id"]):
        if r["run_id"] in runs or len(runs) < latest:
            runs.setdefault(r["run_id"], r)
    return runs


def plan_chars(plan: pl.DataFrame, prompts: pl.DataFrame, responses: pl.DataFrame, formats: dict) -> dict[str, int]:
    """The characters each format's planned calls give the judge: its prompt template, the prompt and
    the response in slot A (and B): {format: characters}. plan: format, prompt_idx, a_idx, b_idx;
    prompts: prompt_idx, prompt; responses: cand_idx, response."""
    if plan.height == 0:
        return {}
    prompt_n = prompts.select("prompt_idx", pl.col("prompt").str.len_chars().alias("n_prompt")).unique("prompt_idx")
    text_n = responses.select(pl.col("cand_idx").cast(pl.Int32), pl.col("response").str.len_chars().alias("n"))
    template_n = pl.DataFrame({"format": list(formats),
                               "n_template": [len(f.template or "") for f in formats.values()]})
    calls = (plan.select("format", pl.col("prompt_idx").cast(pl.Int32), pl.col("a_idx").cast(pl.Int32),
                         pl.col("b_idx").cast(pl.Int32))
             .join(prompt_n.with_columns(pl.col("prompt_idx").cast(pl.Int32)), on="prompt_idx", how="left")
             .join(text_n.rename({"cand_idx": "a_idx", "n": "n_a"}), on="a_idx", how="left")
             .join(text_n.rename({"cand_idx": "b_idx", "n": "n_b"}), on="b_idx", how="left")
             .join(template_n, on="format", how="left"))
    total = (calls.with_columns(pl.sum_horizontal(pl.col("n_prompt", "n_a", "n_b", "n_template").fill_null(0))
                                .alias("chars"))
             .group_by("format").agg(pl.col("chars").sum()))
    return dict(zip(total["format"].to_list(), total["chars"].to_list()))


def estimate_time(db, per_format: dict[str, int], provider: str, decoding: str = "greedy", concurrency: int = 1,
                  latency_ms: float | None = None, chars: dict[str, int] | None = None,
                  load_per_core: float | None = None) -> Estimate | None:
    """The expected wall time of a run making `per_format` calls (of `chars` characters per format):
    for the bundled model (provider `local`) from what runs measured on this machine, with the load
    they met and the load per core now (`load_per_core`) beside it (from_timings; one model, so
    concurrency does not help); for the simulated judge (`fake`) calls x latency / concurrency; None
    for an endpoint (its speed is the server's)."""
    n = sum(per_format.values())
    if provider == "fake":
        return Estimate(n * (latency_ms or 0.0) / 1000 / max(1, int(concurrency)))
    if provider != "local":
        return None
    rows = store.judge_timings(db, "local", socket.gethostname()) if store.Database.of(db).exists() else []
    return from_timings(rows, per_format, decoding, chars, load_per_core=load_per_core)
