"""The bundled model's time estimate against the actual, on this machine: scoring runs of 18 and of 60
label-constrained calls, alternating, each launched as the Score page launches one (a background
process; its wall time from the launch to the run's close). Before each launch the estimate the page
would show (ingest.scoring.estimate_time, from the runs measured here so far) is noted; after it, what
the run stored (judge_timings). Prints each run's estimate, actual and their ratio, and the ratio of
each run's estimate from the other runs alone; --out writes everything as JSON (tests/data/
local_timings.json, read by tests/ingest/test_estimate.py).

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
from ingest.scoring import count_calls, estimate_time, from_timings  # noqa: E402

DEMO = ROOT / "ingest" / "demo"
# 18 calls: likert5 on 3 MT-Bench questions x 6 answers; 60: likert5 (24) and tournament in listing order
# (6 pairs x 6 prompts) on the five-format demo's 6 questions x 4 answers
SIZES = {18: ("p18", ["likert5"]), 60: ("mtbench-formats", ["likert5", "tournament"])}


def build(db: Path) -> None:
    rows = [json.loads(line) for line in (DEMO / "mtbench-pool.jsonl").open()]
    prompts = sorted({r["prompt_id"] for r in rows})[:3]
    p18 = Path(db).with_suffix(".p18.jsonl")
    p18.write_text("".join(json.dumps(r) + "\n" for r in rows if r["prompt_id"] in prompts))
    store.import_pool(db, p18, "p18")
    store.import_pool(db, DEMO / "mtbench-formats-pool.jsonl", "mtbench-formats")


def one_run(db: Path, n: int, k: int) -> dict:
    pool, formats = SIZES[n]
    count = count_calls(db, pool, formats, "listing")
    per_format, chars = count["per_format"], count["chars"]
    assert count["total"] == n, count
    shown = estimate_time(db, per_format, "local", "constrained", chars=chars)       # what the page shows
    request = request_for("score", pool=pool, judge_spec="local:smollm2", formats=formats, schedule="listing",
                          decoding="constrained", judge_name=f"smollm2-bench{k}", concurrency=1, as_json=True)
    run_id = runs.launch(db, "score", [sys.executable, "-m", "app.cli", *command_line(request)], request=request,
                         pool=pool, key=runs.run_key("score", pool, f"smollm2-bench{k}"))
    while (row := runs.get_run(db, run_id))["status"] in runs.ACTIVE:
        time.sleep(2)
    actual = (datetime.fromisoformat(row["finished_at"]) - datetime.fromisoformat(row["created_at"])).total_seconds()
    assert row["status"] == "finished" and row["progress"]["done"] == n, (row, runs.log_tail(db, run_id))
    print(f"run {run_id}: {n} calls, estimate {shown.seconds:.0f} s (load {shown.load_s:.0f} s, from {shown.runs} "
          f"runs), actual {actual:.0f} s: ratio {shown.seconds / actual:.2f}", flush=True)
    return {"run_id": run_id, "calls": n, "per_format": per_format, "chars": chars, "actual_s": actual,
            "estimate_s": shown.seconds, "estimate_runs": shown.runs}


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
