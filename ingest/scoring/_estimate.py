"""How long a scoring run will take, before it starts (docs/scoring.md#time-estimates).

The bundled model's time is what runs measured on this machine (the store's `judge_timings`): its
load time (from the run's process start to the model ready: Python, torch, the model) and, per format
and decoding, calls per second. The latest LATEST_RUNS runs count: the load time is their median, a
format's rate their calls over their seconds. Where nothing was measured here yet, a first guess
stands in (FIRST_GUESS) and the estimate says so. A simulated judge's time is its own latency; an
endpoint's is unknown until a Test connection.

    est = estimate_time(db, {"likert5": 18}, "local", "constrained")
    est.seconds, est.load_s, est.runs      # 61.0, 40.0, 3
"""

from __future__ import annotations

import socket
import statistics
from dataclasses import dataclass, field

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
    first guesses only); `guessed`: the formats whose rate is a first guess."""
    seconds: float
    load_s: float | None = None
    calls_s: float = 0.0
    runs: int = 0
    guessed: tuple[str, ...] = field(default_factory=tuple)


def from_timings(rows: list[dict], per_format: dict[str, int], decoding: str,
                 latest: int = LATEST_RUNS) -> Estimate:
    """The bundled model's estimate for `per_format` calls under `decoding` from what runs measured
    (rows of the store's judge_timings: run_id, format, decoding, calls, call_s, load_s)."""
    decoding = SAME_PACE.get(decoding, decoding)
    rows = [{**r, "decoding": SAME_PACE.get(r["decoding"], r["decoding"])} for r in rows]
    loads = _latest(rows, latest)
    load_s = statistics.median(r["load_s"] for r in loads.values()) if loads else FIRST_GUESS["load_s"]
    used, calls_s, guessed = set(loads), 0.0, []
    for fmt, n in per_format.items():
        cell = [r for r in rows if r["format"] == fmt and r["decoding"] == decoding and r["call_s"] > 0]
        same = cell or [r for r in rows if r["decoding"] == decoding and r["call_s"] > 0]  # another format's pace
        keep = _latest(same, latest)
        picked = [r for r in same if r["run_id"] in keep]
        if picked and cell:
            used |= {r["run_id"] for r in picked}
        else:
            guessed.append(fmt)
        rate = (sum(r["calls"] for r in picked) / sum(r["call_s"] for r in picked) if picked
                else FIRST_GUESS.get(decoding, FIRST_GUESS["greedy"]))
        calls_s += n / rate
    return Estimate(load_s + calls_s, load_s, calls_s, len(used), tuple(guessed))


def _latest(rows: list[dict], latest: int) -> dict[int, dict]:
    """The latest `latest` runs among rows: run_id -> one of its rows."""
    runs: dict[int, dict] = {}
    for r in sorted(rows, key=lambda r: -r["run_id"]):
        if r["run_id"] in runs or len(runs) < latest:
            runs.setdefault(r["run_id"], r)
    return runs


def estimate_time(db, per_format: dict[str, int], provider: str, decoding: str = "greedy", concurrency: int = 1,
                  latency_ms: float | None = None) -> Estimate | None:
    """The expected wall time of a run making `per_format` calls: for the bundled model (provider
    `local`) from what runs measured on this machine (from_timings; one model, so concurrency does not
    help); for the simulated judge (`fake`) calls x latency / concurrency; None for an endpoint (its
    speed is the server's)."""
    n = sum(per_format.values())
    if provider == "fake":
        return Estimate(n * (latency_ms or 0.0) / 1000 / max(1, int(concurrency)))
    if provider != "local":
        return None
    rows = store.judge_timings(db, "local", socket.gethostname()) if store.Database.of(db).exists() else []
    return from_timings(rows, per_format, decoding)
