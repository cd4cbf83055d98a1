"""Benchmark: the full audit on 1M candidates (k = 4) x 3 pointwise formats x 5 judges = 15M
verdicts, against a per-prompt scipy.stats.kendalltau loop timed on a sample in the same run.

    .venv/bin/python tests/bench/bench_audit.py [--prompts 250000] [--judges 5] [--workdir DIR]

Builds the data through the real import path (pool file -> import-pool, one verdict JSONL per
judge -> import-verdicts) and reports the verdict-import rate. The audit runs in a child process
(median of --repeats runs) so its peak memory is its own. Not part of the test run.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

FORMATS = ("binary", "likert5", "numeric100")


def make_files(folder: Path, n_prompts: int, k: int, n_judges: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    n = n_prompts * k
    prompt = np.repeat(np.arange(n_prompts), k)
    pid = pl.Series(prompt).cast(pl.String)
    quality = rng.integers(0, 10, n)                       # references on a 0-9 grid: many ties
    pool = pl.DataFrame({"prompt_id": "p" + pid, "prompt": "Prompt " + pid,
                         "candidate_id": "c" + pl.Series(np.tile(np.arange(k), n_prompts)).cast(pl.String),
                         "response": pl.repeat("a response", n, eager=True),
                         "reference": quality.astype(float)})
    pool_file = folder / "pool.jsonl"
    pool.write_ndjson(pool_file)
    verdict_files = []
    for j in range(n_judges):
        latent = quality + rng.normal(0, 1.5 + j, n)
        raws = {
            "binary": np.where(latent > 4.5, "ACCEPT", "REJECT"),
            "likert5": np.clip(np.round(latent / 2.2) + 1, 1, 5).astype(int).astype(str),
            "numeric100": (np.clip(np.round(latent * 2), 0, 20) * 5).astype(int).astype(str),
        }
        frames = [pool.select("prompt_id", "candidate_id").with_columns(
            pl.lit(f"judge{j}").alias("judge"), pl.lit(f).alias("format"), pl.Series("raw", raws[f]))
            for f in FORMATS]
        path = folder / f"verdicts-judge{j}.jsonl"
        pl.concat(frames).select("judge", "format", "prompt_id", "candidate_id", "raw").write_ndjson(path)
        verdict_files.append(path)
    return pool_file, verdict_files


def kendall_loop_rate(db: Path, sample_prompts: int, seed: int = 0) -> float:
    """Seconds per prompt-cell of a plain loop: scipy.stats.kendalltau(s, r) per prompt."""
    import scipy.stats as ss
    from audit._db import connect, pool_id
    from audit._scores import read_scores
    with connect(db) as con:
        sc = read_scores(con, pool_id(con, "bench"))
    rng = np.random.default_rng(seed)
    n_prompts = int(sc.prompt.max()) + 1
    chosen = rng.choice(n_prompts, size=min(sample_prompts, n_prompts), replace=False)
    by_prompt = {}
    order = np.argsort(sc.prompt, kind="stable")
    starts = np.searchsorted(sc.prompt[order], chosen)
    ends = np.searchsorted(sc.prompt[order], chosen, side="right")
    for p, a, b in zip(chosen, starts, ends):
        by_prompt[p] = order[a:b]
    t = time.perf_counter()
    calls = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for c in range(sc.S.shape[0]):
            for p in chosen:
                idx = by_prompt[p]
                ss.kendalltau(sc.S[c, idx], sc.reference[idx])
                calls += 1
    return (time.perf_counter() - t) / calls


def child_audit(db: str, repeats: int) -> None:
    """Run in a child process: time audit_cells, print JSON with times and peak RSS."""
    from audit import audit_cells
    times = []
    for _ in range(repeats):
        t = time.perf_counter()       # audit_cells keeps nothing between calls: a full audit each time
        cells = audit_cells(db, "bench")
        times.append(time.perf_counter() - t)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"times": times, "peak_mb": peak_mb, "cells": cells.height,
                      "verdicts": int(cells["n_verdicts"].sum())}))


def build(db: Path, work: Path, args) -> None:
    from ingest.store import import_pool
    from ingest.scoring import import_verdicts
    db.unlink(missing_ok=True)
    t = time.perf_counter()
    pool_file, verdict_files = make_files(work, args.prompts, args.k, args.judges)
    print(f"generated files in {time.perf_counter() - t:.1f} s under {work}")
    t = time.perf_counter()
    import_pool(db, pool_file, "bench")
    print(f"import-pool: {args.prompts * args.k:,} candidates in {time.perf_counter() - t:.1f} s")
    rates, total = [], 0
    for path in verdict_files:
        t = time.perf_counter()
        result = import_verdicts(db, path, "bench")
        dt = time.perf_counter() - t
        total += result["imported"]
        rates.append(result["imported"] / dt)
        print(f"import-verdicts {path.name}: {result['imported']:,} rows in {dt:.1f} s "
              f"({result['imported'] / dt:,.0f} rows/s)")
    print(f"verdict import: {total:,} rows, median {statistics.median(rates):,.0f} rows/s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompts", type=int, default=250_000)
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--judges", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sample", type=int, default=400, help="prompts in the kendalltau sample")
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--skip-build", action="store_true", help="reuse WORKDIR/bench.duckdb from an earlier run")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child_audit(args.child[0], int(args.child[1]))
        return

    work = args.workdir or Path(tempfile.mkdtemp(prefix="judgeaudit-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    db = work / "bench.duckdb"
    if not (args.skip_build and db.exists()):
        build(db, work, args)
    proc = subprocess.run([sys.executable, __file__, "--child", str(db), str(args.repeats)],
                          capture_output=True, text=True, check=True)
    child = json.loads(proc.stdout.strip().splitlines()[-1])
    audit_s = statistics.median(child["times"])
    per_call = kendall_loop_rate(db, args.sample)
    n_prompt_cells = args.prompts * child["cells"]
    loop_s = per_call * n_prompt_cells
    print(f"full audit ({child['verdicts']:,} verdicts, {child['cells']} cells): "
          f"median {audit_s:.2f} s of {', '.join(f'{x:.2f}' for x in child['times'])}; "
          f"peak RSS {child['peak_mb']:,.0f} MB")
    print(f"baseline: scipy.stats.kendalltau per prompt, {per_call * 1e6:.0f} us/call on a sample of "
          f"{args.sample} prompts x {child['cells']} cells -> {loop_s:,.0f} s for all "
          f"{n_prompt_cells:,} prompt-cells (tau only)")
    print(f"ratio (loop / audit): {loop_s / audit_s:,.0f}x")


if __name__ == "__main__":
    main()
