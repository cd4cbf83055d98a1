"""Benchmark: `import-verdicts` from Parquet against the same rows as JSONL (issue 21 §3: 1M rows/s
or more from Parquet), the same Parquet file read where it lies (the command line's path, issue 29:
ingest.scoring._file_import) against the batch path, and `export-verdicts` of the stored rows (Parquet
and JSONL), on one pool.

Each import goes into a fresh copy of a database that holds only the pool, through the whole path a
user's import takes (read, check, parse, orient, store in one transaction); the median of --reps
runs is printed with the rows/s and the Parquet/JSONL ratio, both measured in this run. A
breakdown times reading and checking the file alone (ingest.files.read_verdicts).

    .venv/bin/python tests/bench/bench_import.py [--rows 1000000] [--reps 3] [--label-probs]

`--cli-rows N --cli-stored 0,50000000,95000000 [--cli-reps 3]` (issue 29) times instead the command
line, `judgeaudit import-verdicts` in a process of its own with its start, importing an N-row Parquet
file (streamed: files.batch_rows rows at a time) into one pool that already holds each number of
stored verdicts (filled in-process with the same calls under other sample numbers; each rep imports
into a copy of that database), with the command's CPU time and peak RSS: the rate and the memory must
not follow what is stored. The issue's case is N = 20M at 0, 50M and 95M stored; on a shared machine
the CPU time (rows per CPU-second) is the figure the load does not move.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

RAWS = {"likert5": ["1", "2", "3", "4", "5", "Score: 4", "I'd rate it 3.", "4/5", "It is fine.", ""],
        "binary": ["ACCEPT", "REJECT", "I would ACCEPT this response.", "ACCEPT or REJECT?", "Yes."]}
SAMPLES = {"likert5": 3, "binary": 2}      # per candidate: 5 calls a candidate


def build(work: Path, n_rows: int, label_probs: bool, seed: int = 0, jsonl: bool = True) -> tuple[Path, Path, Path, int]:
    """A database holding the pool, and the same verdicts as Parquet and as JSONL."""
    from ingest.store import import_pool
    per_cand = sum(SAMPLES.values())
    n_cands = max(2, n_rows // per_cand)
    k = 10
    n_prompts = -(-n_cands // k)
    prompt_ids = [f"q{i}" for i in range(n_prompts)]
    pool = pl.DataFrame({"prompt_id": np.repeat(prompt_ids, k)[:n_cands],
                         "candidate_id": np.tile([f"m{j}" for j in range(k)], n_prompts)[:n_cands]})
    pool = pool.with_columns(pl.format("prompt {}", "prompt_id").alias("prompt"),
                             pl.format("answer of {} to {}", "candidate_id", "prompt_id").alias("response"))
    pool_file = work / "pool.parquet"
    pool.write_parquet(pool_file)
    db = work / "base.duckdb"
    import_pool(db, pool_file, "bench")

    rng = np.random.default_rng(seed)
    parts = []
    for fmt, samples in SAMPLES.items():
        for s in range(samples):
            raws = np.asarray(RAWS[fmt])[rng.integers(0, len(RAWS[fmt]), pool.height)]
            part = pool.select("prompt_id", "candidate_id").with_columns(
                pl.lit("judge-a").alias("judge"), pl.lit(fmt).alias("format"), pl.Series("raw", raws),
                pl.lit(s, pl.Int64).alias("sample"))
            if label_probs and fmt == "likert5":
                p = rng.dirichlet(np.ones(5), pool.height).round(4)
                part = part.with_columns(pl.Series("label_probs", [
                    json.dumps({str(i + 1): float(v) for i, v in enumerate(row)}) for row in p]))
            parts.append(part)
    verdicts = pl.concat(parts, how="diagonal").select(
        "judge", "format", "prompt_id", "candidate_id", "sample", "raw",
        *(["label_probs"] if label_probs else []))
    parquet, jsonl_file = work / "verdicts.parquet", work / "verdicts.jsonl"
    verdicts.write_parquet(parquet)
    if jsonl:
        verdicts.write_ndjson(jsonl_file)
    return db, parquet, jsonl_file, verdicts.height


def cli_at_scale(work: Path, n_rows: int, levels: list[int], reps: int = 3) -> None:
    """The command line's import of an n_rows file into a pool holding each of `levels` stored verdicts:
    `reps` imports into copies of the same database, their median wall time, rows/s, CPU time (user +
    system of the command, all its threads) and peak RSS."""
    import os
    from ingest.scoring import import_verdicts
    t0 = time.perf_counter()
    base, parquet, _, n = build(work, n_rows, False, jsonl=False)
    db, first = work / "scale.duckdb", pl.read_parquet(parquet)
    shutil.copy(base, db)
    print(f"{n:,}-row verdict file of {n // sum(SAMPLES.values()):,} candidates "
          f"({parquet.stat().st_size / 2**20:,.0f} MiB Parquet), built in {time.perf_counter() - t0:.0f} s", flush=True)
    exe = str(Path(sys.executable).with_name("judgeaudit"))
    stored, k = 0, 0
    for level in levels:
        t0 = time.perf_counter()
        while stored < level:                 # the verdicts already there: later samples of the same calls
            k += 1
            fill = work / "fill.parquet"
            part = first.head(min(n, level - stored))       # exactly `level` stored
            part.with_columns(pl.col("sample") + 10 * k).write_parquet(fill)
            import_verdicts(db, fill, "bench", capped=False)
            stored += part.height
        if time.perf_counter() - t0 > 1:
            print(f"  (filled the pool to {stored:,} stored verdicts in {time.perf_counter() - t0:.0f} s)", flush=True)
        path = work / "cli.parquet"
        first.with_columns(pl.col("sample") + 10 * (k + 1)).write_parquet(path)
        runs = []
        for rep in range(reps):
            copy = work / "cli.duckdb"
            shutil.copy(db, copy)
            started = time.perf_counter()
            with open(work / "out.json", "wb") as out, open(work / "err.txt", "wb") as err:
                # the import alone: the derived results the command stores after it (audit/derived/) are
                # the pages' work, timed by bench_refresh.py
                proc = subprocess.Popen([exe, "import-verdicts", str(path), "--pool", "bench", "--db", str(copy),
                                         "--json"], stdout=out, stderr=err,
                                        env={**os.environ, "JUDGEAUDIT_NO_DERIVE": "1"})
                _, status, usage = os.wait4(proc.pid, 0)    # this child's own peak RSS and CPU time
            took = time.perf_counter() - started
            assert status == 0, (work / "err.txt").read_text()
            assert json.loads((work / "out.json").read_text())["imported"] == n
            runs.append((took, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024))
            print(f"  rep {rep + 1}: {took:.2f} s wall = {n / took:,.0f} rows/s, CPU {runs[-1][1]:.1f} s, "
                  f"peak RSS {runs[-1][2]:,.0f} MB; load average {os.getloadavg()[0]:.1f}", flush=True)
            copy.unlink()
        took, cpu = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
        print(f"judgeaudit import-verdicts of {n:,} rows into a pool holding {stored:,}: median {took:.2f} s of "
              f"{reps} = {n / took:,.0f} rows/s (start included); CPU {cpu:.1f} s = {n / cpu:,.0f} rows per "
              f"CPU-second; peak RSS {max(r[2] for r in runs):,.0f} MB", flush=True)


def timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


@contextlib.contextmanager
def store_timer():
    """Time the import's one INSERT (ingest.store.insert_verdicts) and its look at the stored calls
    (stored_statuses, once a cell held verdicts) apart from the rest of the path."""
    from ingest.store._units import Reading, Writing
    spent = [0.0]
    inner = [(Writing, "insert_verdicts", Writing.insert_verdicts), (Reading, "stored_statuses", Reading.stored_statuses)]

    def timing(method):
        def call(unit, *args, **kw):
            started = time.perf_counter()
            try:
                return method(unit, *args, **kw)
            finally:
                spent[0] += time.perf_counter() - started
        return call
    for cls, name, method in inner:
        setattr(cls, name, timing(method))
    try:
        yield spent
    finally:
        for cls, name, method in inner:
            setattr(cls, name, method)


def more_files(work: Path, base: Path, parquet: Path, n: int, count: int) -> None:
    """Files 2, 3, ... of one import: the same calls under later sample numbers, into one database."""
    import resource
    from ingest.scoring import import_verdicts
    db, first = work / "more.duckdb", pl.read_parquet(parquet)
    shutil.copy(base, db)
    import_verdicts(db, parquet, "bench")
    for k in range(1, count + 1):
        path = work / f"more-{k}.parquet"
        first.with_columns(pl.col("sample") + 10 * k).write_parquet(path)
        took = timed(lambda: import_verdicts(db, path, "bench"))
        print(f"file {k + 1} into cells holding {k * n:,} stored calls: {took:.2f} s = {n / took:,.0f} rows/s; "
              f"peak RSS so far {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--label-probs", action="store_true", help="every likert5 row carries a distribution")
    ap.add_argument("--more-files", type=int, default=4,
                    help="then import this many more files of as many new calls into the same cells, one "
                         "after another: the check against stored calls must not grow with what is stored")
    ap.add_argument("--cli-rows", type=int, default=0,
                    help="time `judgeaudit import-verdicts` of a file of this many rows instead (issue 29: 20M)")
    ap.add_argument("--cli-stored", default="0,50000000,95000000",
                    help="stored verdicts in the pool before each --cli-rows import (comma-separated)")
    ap.add_argument("--cli-reps", type=int, default=3, help="imports at each stored level (median)")
    args = ap.parse_args()
    if args.cli_rows:
        with tempfile.TemporaryDirectory(prefix="bench-import-") as tmp:
            cli_at_scale(Path(tmp), args.cli_rows, [int(float(x)) for x in args.cli_stored.split(",")],
                         args.cli_reps)
        return
    from ingest.files import read_verdicts
    from ingest.scoring import import_verdicts

    with tempfile.TemporaryDirectory(prefix="bench-import-") as tmp:
        work = Path(tmp)
        t0 = time.perf_counter()
        base, parquet, jsonl, n = build(work, args.rows, args.label_probs)
        print(f"{n:,} verdicts of {n // sum(SAMPLES.values()):,} candidates; files: Parquet "
              f"{parquet.stat().st_size / 2**20:.1f} MiB, JSONL {jsonl.stat().st_size / 2**20:.1f} MiB "
              f"(built in {time.perf_counter() - t0:.1f} s)")
        results = {}
        for name, path in (("parquet", parquet), ("jsonl", jsonl)):
            read_s = statistics.median(timed(lambda: read_verdicts(path)) for _ in range(args.reps))
            runs, stores = [], []
            for rep in range(args.reps):
                db = work / f"{name}-{rep}.duckdb"
                shutil.copy(base, db)
                with store_timer() as store_s:
                    runs.append(timed(lambda: import_verdicts(db, path, "bench")))
                stores.append(store_s[0])
            results[name] = statistics.median(runs)
            print(f"import {name:8s}: median {results[name]:6.2f} s of {args.reps} "
                  f"({', '.join(f'{r:.2f}' for r in runs)}) = {n / results[name]:>10,.0f} rows/s; of which "
                  f"reading and checking the file {read_s:.2f} s, storing the rows "
                  f"(ingest.store.insert_verdicts: its one-row-per-call check and the INSERT, with stored_statuses) "
                  f"{statistics.median(stores):.2f} s")
        print(f"Parquet / JSONL import speed: {results['jsonl'] / results['parquet']:.2f}x")
        # the command line's way (capped=False): a Parquet file read where it lies by DuckDB (_file_import)
        runs, cpus = [], []
        for rep in range(args.reps):
            db = work / f"place-{rep}.duckdb"
            shutil.copy(base, db)
            cpu = time.process_time()
            runs.append(timed(lambda: import_verdicts(db, parquet, "bench", capped=False)))
            cpus.append(time.process_time() - cpu)
        place = statistics.median(runs)
        print(f"import parquet in place (the command line's path): median {place:6.2f} s of {args.reps} "
              f"({', '.join(f'{r:.2f}' for r in runs)}) = {n / place:>10,.0f} rows/s, CPU {statistics.median(cpus):.2f} s; "
              f"{results['parquet'] / place:.2f}x the batch path's speed")
        more_files(work, base, parquet, n, args.more_files)

        stored = work / "parquet-0.duckdb"   # the command line, its start included
        exe = str(Path(sys.executable).with_name("judgeaudit"))
        for kind in ("parquet", "jsonl"):
            out = work / f"export.{kind}"
            cmd = [exe, "export-verdicts", "--pool", "bench", "--out", str(out), "--db", str(stored)]
            runs = [timed(lambda: subprocess.run(cmd, check=True, capture_output=True)) for _ in range(args.reps)]
            med = statistics.median(runs)
            print(f"export {kind:8s}: median {med:6.2f} s = {n / med:>10,.0f} rows/s "
                  f"({out.stat().st_size / 2**20:.1f} MiB), judgeaudit export-verdicts, start included")

if __name__ == "__main__":
    main()
