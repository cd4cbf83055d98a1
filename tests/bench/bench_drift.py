"""Benchmark: `judgeaudit drift --pool big --judge judge2 --against judge --json` on bench_app's pool (N
prompts x 4 candidates, two judges x five formats: 10 cells; --prompts 250000 is 1M candidates, 2500000
the issue's 10M), out of core as the command reads now, against the comparison in memory it made before
(`--old`: drift_sides and compare_verdicts, the document built whole and printed), each in a process of
its own with its output to a file: wall seconds, CPU seconds (user + system) and the process's peak
RSS, medians of --rounds; the two documents are compared (the same cells and moved calls, floats to
1e-12) when both ran.

    .venv/bin/python tests/bench/bench_drift.py [--prompts 250000] [--rounds 3] [--old]
        [--workdir DIR [--skip-build]]
"""

from __future__ import annotations

import argparse
import json
import math
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

ARGS = ["--pool", "big", "--judge", "judge2", "--against", "judge"]

OLD = """
import json, sys
import polars as pl
from audit import compare_verdicts, drift_sides
from app.cli._common import jsonable
db = sys.argv[1]
sides = drift_sides(db, "big", "judge2", against="judge")
cells, moved = compare_verdicts(sides["baseline"], sides["current"])
doc = {"pool": "big", "judge": "judge2", "against": "judge", "current_version": sides["current_version"],
       "baseline_version": sides["baseline_version"], "versions": sides["versions"].to_dicts(), "cells": []}
for cell in cells.to_dicts():
    items = moved.filter((pl.col("format") == cell["format"]) & (pl.col("decoding") == cell["decoding"]))
    doc["cells"].append({**cell, "moved": items.drop("format", "decoding").to_dicts()})
print(json.dumps(jsonable(doc), allow_nan=False, ensure_ascii=False))
"""


def timed(argv: list[str], out: Path) -> dict:
    """Run argv with stdout to `out`: wall, CPU (user + system) and peak RSS of the child."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with open(out, "w") as fh:
        proc = subprocess.run(argv, stdout=fh, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        raise SystemExit(f"{argv[:4]}: exit {proc.returncode}\n{proc.stderr[-2000:]}")
    return {"wall_s": wall, "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
            "peak_gb": after.ru_maxrss / 1024 ** 2}      # the largest child so far (one kind a run: see main)


def same(got, want, where="$") -> list[str]:
    if isinstance(want, float) and isinstance(got, (int, float)):
        return [] if math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-15) else [f"{where}: {got} != {want}"]
    if isinstance(want, dict):
        if not isinstance(got, dict) or set(got) != set(want):
            return [f"{where}: keys differ"]
        return [d for k in want for d in same(got[k], want[k], f"{where}.{k}")]
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return [f"{where}: {len(got)} items != {len(want)}"]
        return [d for i, (g, w) in enumerate(zip(got, want)) for d in same(g, w, f"{where}[{i}]")][:20]
    return [] if got == want else [f"{where}: {got!r} != {want!r}"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prompts", type=int, default=250_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--old", action="store_true", help="also the comparison in memory (before)")
    ap.add_argument("--kind", choices=("new", "old"), default=None, help="one kind only (a process each: its peak)")
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--skip-build", action="store_true")
    args = ap.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="bench-drift-"))
    work.mkdir(parents=True, exist_ok=True)
    db = work / "big.duckdb"
    if not args.skip_build:
        from tests.bench.bench_app import build
        db.unlink(missing_ok=True)
        start = time.perf_counter()
        build(db, args.prompts, n_judges=2)
        print(f"built {args.prompts * 4:,} candidates x 10 cells in {time.perf_counter() - start:.0f} s", flush=True)
    if args.kind:                 # one kind, its rounds: called by main below, so that ru_maxrss is that kind's
        argv = ([sys.executable, "-m", "app.cli", "drift", *ARGS, "--db", str(db), "--json"] if args.kind == "new"
                else [sys.executable, "-c", OLD, str(db)])
        runs = [timed(argv, work / f"{args.kind}.json") for _ in range(args.rounds)]
        print(json.dumps(runs))
        return
    kinds = ["new", "old"] if args.old else ["new"]
    for kind in kinds:
        proc = subprocess.run([sys.executable, __file__, "--workdir", str(work), "--skip-build", "--kind", kind,
                               "--rounds", str(args.rounds)], capture_output=True, text=True)
        if proc.returncode:
            raise SystemExit(proc.stderr[-3000:])
        runs = json.loads(proc.stdout.splitlines()[-1])
        med = {k: statistics.median(r[k] for r in runs) for k in ("wall_s", "cpu_s")}
        size = (work / f"{kind}.json").stat().st_size / 1024 ** 2
        print(f"{kind}: wall {[round(r['wall_s'], 1) for r in runs]} s (median {med['wall_s']:.1f}), CPU median "
              f"{med['cpu_s']:.1f} s, peak RSS {runs[-1]['peak_gb']:.2f} GB, {size:.0f} MB of JSON; "
              f"load average {os.getloadavg()[0]:.1f}", flush=True)
    if args.old:
        new, old = (json.loads((work / f"{k}.json").read_text()) for k in ("new", "old"))
        faults = same(new, old)
        moved = sum(len(c["moved"]) for c in old["cells"])
        print(f"documents: {'the same' if not faults else faults[:5]} ({len(old['cells'])} cells, "
              f"{moved:,} moved calls)")


if __name__ == "__main__":
    main()
