"""The bundled model's time estimate against the actual, on this machine: scoring runs of 18 and of 60
label-constrained likert5 calls, alternating, each launched as the Score page launches one (a
background process; its wall time from the launch to the run's close). Before each launch the estimate
the page would show (ingest.scoring.estimate_time, from the runs measured here so far) is noted, with
the machine's load average (the machine is shared: its other work sets the pace); after it, what the
run stored (judge_timings) and the mean 1-minute load average while it ran. Prints each run's
estimate, actual and their ratio, and the ratio of each run's estimate from the other runs alone;
--out writes everything as JSON (tests/data/local_timings.json, read by tests/ingest/test_estimate.py).

    .venv/bin/python tests/bench/bench_estimate.py [--rounds 3] [--out tests/data/local_timings.json]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from app.cli import command_line, request_for  # noqa: E402
from ingest import runs, store  # noqa: E402
from ingest.scoring import count_calls, estimate_time, from_timings, machine_load  # noqa: E402

DEMO = ROOT / "ingest" / "demo"
# likert5 on the first 3 (18 calls) and the first 10 (60 calls) MT-Bench questions of the demo, 6 answers each
SIZES = {18: ("p18", ["likert5"]), 60: ("p60", ["likert5"])}


def build(db: Path) -> None:
    rows = [json.loads(line) for line in (DEMO / "mtbench-pool.jsonl").open()]
    for n, (pool, _) in SIZES.items():
        prompts = sorted({r["prompt_id"] for r in rows})[:n // 6]
        path = Path(db).with_suffix(f".{pool}.jsonl")
        path.write_text("".join(json.dumps(r) + "\n" for r in rows if r["prompt_id"] in prompts))
        store.import_pool(db, path, pool)


class LoadWatch:
    """The machine's 1-minute load average, sampled every 2 s in a thread while a run goes on."""

    def __init__(self):
        import threading
        self.samples, self._stop = [], threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(2.0):
            self.samples.append(os.getloadavg()[0])

    def mean(self) -> float:
        self._stop.set()
        self._thread.join()
        return sum(self.samples) / max(1, len(self.samples))


def one_run(db: Path, n: int, k: int) -> dict:
    pool, formats = SIZES[n]
    count = count_calls(db, pool, formats, "listing")
    per_format, chars = count["per_format"], count["chars"]
    assert count["total"] == n, count
    before = os.getloadavg()
    shown = estimate_time(db, per_format, "local", "constrained", chars=chars,       # what the page shows
                          load_per_core=machine_load())
    request = request_for("score", pool=pool, judge_spec="local:smollm2", formats=formats, schedule="listing",
                          decoding="constrained", judge_name=f"smollm2-bench{k}", concurrency=1, as_json=True)
    run_id = runs.launch(db, "score", [sys.executable, "-m", "app.cli", *command_line(request)], request=request,
                         pool=pool, key=runs.run_key("score", pool, f"smollm2-bench{k}"))
    watch = LoadWatch()
    live = runs.runs_dir(db) / f"{run_id}-score" / runs.LIVE_FILE     # followed as a page follows it: its
    state, deadline = {}, time.monotonic() + 1800                       # live file, never the database
    ended = ("finished", "failed", "cancelled")
    while time.monotonic() < deadline and (not state.get("pid") or state.get("status") not in ended
                                           or runs.alive(state["pid"], None)):  # and what it stores after
        time.sleep(2)
        state = json.loads(live.read_text()) if live.exists() else {}
    during = watch.mean()
    row = runs.get_run(db, run_id)
    actual = (datetime.fromisoformat(row["finished_at"]) - datetime.fromisoformat(row["created_at"])).total_seconds()
    assert row["status"] == "finished" and row["progress"]["done"] == n, (row, runs.log_tail(db, run_id))
    print(f"run {run_id}: {n} calls, estimate {shown.seconds:.0f} s (load {shown.load_s:.0f} s, from {shown.runs} "
          f"runs), actual {actual:.0f} s: ratio {shown.seconds / actual:.2f}; load average {before[0]:.1f} before, "
          f"{during:.1f} during", flush=True)
    return {"run_id": run_id, "calls": n, "per_format": per_format, "chars": chars, "actual_s": actual,
            "estimate_s": shown.seconds, "estimate_runs": shown.runs, "load_before": list(before),
            "load_during": during}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--workdir", type=Path)
    args = ap.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="bench-estimate-"))
    work.mkdir(parents=True, exist_ok=True)
    db = work / "rates.duckdb"
    if not db.exists():
        build(db)
    made = [one_run(db, n, k) for k in range(args.rounds) for n in (18, 60)]
    timings = store.judge_timings(db, "local", socket.gethostname())
    print("\nleave one out (each run's estimate from the other runs' measurements):")
    for r in made:
        others = [t for t in timings if t["run_id"] != r["run_id"]]
        est = from_timings(others, r["per_format"], "constrained", r["chars"])
        r["leave_one_out_s"] = est.seconds
        print(f"  run {r['run_id']} ({r['calls']} calls): {est.seconds:.0f} s against {r['actual_s']:.0f} s, "
              f"ratio {est.seconds / r['actual_s']:.2f}")
    if args.out:
        args.out.write_text(json.dumps({"cores": os.cpu_count(), "load_average": os.getloadavg(), "runs": made,
                                        "timings": timings}, indent=1) + "\n")
        print(f"written to {args.out}")


if __name__ == "__main__":
    main()
