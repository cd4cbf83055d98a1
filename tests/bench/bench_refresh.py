"""Benchmark: the derived-results refresh (audit.derived.refresh, what the command that brings verdicts
runs after it; issue 29) result by result, on bench_app's pool: N prompts x 4 candidates, two judges
x five formats (10 cells; --prompts 25000 is 100k candidates, 250000 is 1M, 2500000 the issue's 10M).

Each result of train.DERIVED_RESULTS is computed with the arguments of a page's first view
(its first_view), as refresh computes it when nothing is stored, each time in a new process (`--one`), so its peak
memory is its own; printed per result: wall and CPU seconds (user + system: what it costs on a shared
machine) and the process's peak RSS, medians of --rounds, and their sums. `--names` picks results
(default: the four that took 115 of the 156 s at 100k: style_rank, rank, judges_board, estimate;
`all` for every one).

    .venv/bin/python tests/bench/bench_refresh.py [--prompts 25000] [--rounds 3] [--names all]
        [--workdir DIR [--skip-build]]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

SLOW = ("style_rank", "rank", "judges_board", "estimate")


def one(db: str, name: str) -> dict:
    """Compute the result `name` of pool 'big' as refresh does (in this process): wall, CPU, peak RSS."""
    from audit.derived import Reader
    from ingest import Database
    from train.derived_results import DERIVED_RESULTS
    result = DERIVED_RESULTS[name]
    args = result.first_view(Reader(Database(db), "big", DERIVED_RESULTS), "big")
    fn = result.compute
    t, c = time.perf_counter(), time.process_time()
    frame = fn(db, "big", *args)
    return {"name": name, "wall_s": time.perf_counter() - t, "cpu_s": time.process_time() - c,
            "peak_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2, "rows": frame.height}


def measure(db: Path, name: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, __file__, "--one", name, "--db", str(db)], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prompts", type=int, default=25_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--names", default=",".join(SLOW), help="comma-separated names of train.DERIVED_RESULTS, or all")
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--skip-build", action="store_true", help="reuse WORKDIR/big.duckdb from an earlier run")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--db", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(args.db, args.one)))
        return
    from tests.bench.bench_app import build
    from train.derived_results import DERIVED_RESULTS
    names = [n for n, r in DERIVED_RESULTS.items() if not r.built_from] if args.names == "all" else args.names.split(",")
    work = args.workdir or Path(tempfile.mkdtemp(prefix="judgeaudit-refresh-"))
    work.mkdir(parents=True, exist_ok=True)
    big = work / "big.duckdb"
    if not (args.skip_build and big.exists()):
        big.unlink(missing_ok=True)
        t = time.perf_counter()
        build(big, args.prompts, n_judges=2)
        print(f"built {args.prompts * 4:,} candidates x 10 cells in {time.perf_counter() - t:.1f} s", flush=True)
    runs: dict[str, list[dict]] = {n: [] for n in names}
    for r in range(args.rounds):
        for name in names:
            m = measure(big, name)
            runs[name].append(m)
            print(f"round {r + 1} {name}: {m['wall_s']:.2f} s wall, {m['cpu_s']:.2f} s CPU, "
                  f"{m['peak_gb']:.2f} GB peak, {m['rows']} rows", flush=True)
    print(f"load average {os.getloadavg()[0]:.1f}; medians of {args.rounds} on {args.prompts * 4:,} candidates:")
    total = {"wall_s": 0.0, "cpu_s": 0.0}
    for name in names:
        med = {k: statistics.median(m[k] for m in runs[name]) for k in ("wall_s", "cpu_s", "peak_gb")}
        total["wall_s"] += med["wall_s"]
        total["cpu_s"] += med["cpu_s"]
        print(f"  {name:16s} {med['wall_s']:8.2f} s wall {med['cpu_s']:8.2f} s CPU {med['peak_gb']:6.2f} GB peak")
    print(f"  {'sum':16s} {total['wall_s']:8.2f} s wall {total['cpu_s']:8.2f} s CPU")


if __name__ == "__main__":
    main()
