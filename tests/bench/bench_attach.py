"""Benchmark: `judgeaudit attach-verdicts` on a pool of N candidates x 10 pointwise cells
(5 judges x binary and likert5), as hive shards judge=J/format=F/part-K.parquet: the attach's time (the command, its start included), the
database's growth, and `judgeaudit audit --json` on the attached pool against the same rows imported
(both timed, each the median of --rounds runs; their output compared; the ratio attached/imported), each
command's peak RSS and the load average when it ended.

    .venv/bin/python tests/bench/bench_attach.py [--candidates 10000000] [--shards 4] [--rounds 3] [--no-import]
        [--workdir DIR [--skip-build]]

--workdir keeps the pool, its shards and both databases in DIR (default: a temporary folder, removed);
--skip-build reuses them (both databases as a run with that --workdir left them) and times the audits alone.
"""

from __future__ import annotations

import argparse
import os
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
EXE = str(Path(sys.executable).with_name("judgeaudit"))
RAWS = {"likert5": ["1", "2", "3", "4", "5", "Score: 4", "I'd rate it 3.", "4/5", "It is fine."],
        "binary": ["ACCEPT", "REJECT", "I would ACCEPT this response.", "Yes."]}
JUDGES = [f"judge-{j}" for j in range(5)]


def build(work: Path, n: int, shards: int, seed: int = 0) -> tuple[Path, Path]:
    """The pool file (10 candidates a prompt) and the hive folder of its verdicts."""
    k = 10
    n_prompts = -(-n // k)
    pool = pl.DataFrame({"prompt_id": pl.int_range(n, eager=True) // k}).with_columns(
        pl.format("q{}", "prompt_id").alias("prompt_id"),
        (pl.int_range(pl.len()) % k).cast(pl.String).alias("candidate_id"))
    pool = pool.with_columns(pl.lit("a prompt").alias("prompt"), pl.lit("an answer").alias("response"))
    pool_file = work / "pool.parquet"
    pool.write_parquet(pool_file)
    rng = np.random.default_rng(seed)
    hive = work / "out"
    for judge in JUDGES:
        for fmt, raws in RAWS.items():
            folder = hive / f"judge={judge}" / f"format={fmt}"
            folder.mkdir(parents=True)
            raw = pl.Series("raw", np.asarray(raws)[rng.integers(0, len(raws), n)])
            frame = pool.select("prompt_id", "candidate_id").with_columns(raw)
            for s, part in enumerate(np.array_split(np.arange(n), shards)):
                frame[int(part[0]):int(part[-1]) + 1].write_parquet(folder / f"part-{s}.parquet")
    print(f"{n:,} candidates of {n_prompts:,} prompts, {len(JUDGES) * len(RAWS)} cells = {n * 10:,} verdicts "
          f"in {len(JUDGES) * len(RAWS) * shards} shards", flush=True)
    return pool_file, hive


def run(*args) -> tuple[float, str, float]:
    """The command, timed (its start included) without the derived results' refresh that a command bringing
    verdicts runs after its work (audit/derived/; `bench_app.py --browser` times that refresh); its peak RSS
    and the load average are printed; (wall seconds, its output, its CPU seconds)."""
    t = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([EXE, *map(str, args)], stdout=out, stderr=err,
                                env={**os.environ, "JUDGEAUDIT_NO_DERIVE": "1"})
        _, status, usage = os.wait4(proc.pid, 0)
        took = time.perf_counter() - t
        out.seek(0)
        err.seek(0)
        assert os.waitstatus_to_exitcode(status) == 0, err.read().decode()
        cpu = usage.ru_utime + usage.ru_stime
        print(f"  {args[0]}: {took:.1f} s, {cpu:.1f} s CPU, peak RSS {usage.ru_maxrss / 2**20:.2f} GB, "
              f"load {os.getloadavg()[0]:.1f}", flush=True)
        return took, out.read().decode(), cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--candidates", type=int, default=10_000_000)
    ap.add_argument("--shards", type=int, default=4, help="files per (judge, format) cell")
    ap.add_argument("--no-import", action="store_true", help="skip the imported copy and its audit")
    ap.add_argument("--rounds", type=int, default=3, help="audit runs per pool (the median is reported)")
    ap.add_argument("--workdir", type=Path, help="keep the files and databases here (default: a temporary folder)")
    ap.add_argument("--skip-build", action="store_true", help="reuse --workdir's databases: time the audits alone")
    args = ap.parse_args()
    if args.skip_build and not args.workdir:
        ap.error("--skip-build needs --workdir")
    with tempfile.TemporaryDirectory(prefix="bench-attach-") as tmp:
        work = args.workdir or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        db = work / "attached.duckdb"
        if args.skip_build:
            took, attached = audit(db, args.rounds)
            print(f"audit --json on the attached pool: {took:.1f} s (median of {args.rounds})", flush=True)
            if not args.no_import:
                base, same = audit(work / "imported.duckdb", args.rounds)
                print(f"audit --json on the imported pool: {base:.1f} s (median of {args.rounds}); the same "
                      f"output: {same == attached}; attached / imported = {took / base:.2f}")
            return
        pool_file, hive = build(work, args.candidates, args.shards)
        run("import-pool", pool_file, "--pool", "big", "--db", db)
        before = db.stat().st_size
        took, _, _ = run("attach-verdicts", str(hive / "**" / "*.parquet"), "--pool", "big", "--hive", "--db", db)
        grew = db.stat().st_size - before
        print(f"attach-verdicts: {took:.1f} s (start included); the database grew {grew / 2**20:.2f} MiB "
              f"({before / 2**20:.1f} -> {db.stat().st_size / 2**20:.1f} MiB)", flush=True)
        took, attached = audit(db, args.rounds)
        print(f"audit --json on the attached pool: {took:.1f} s (median of {args.rounds})", flush=True)
        if args.no_import:
            return
        imported = work / "imported.duckdb"
        run("import-pool", pool_file, "--pool", "big", "--db", imported)
        parts = []
        for f in sorted(hive.glob("**/*.parquet")):      # the same rows, as one verdict file
            judge, fmt = f.parent.parent.name.split("=")[1], f.parent.name.split("=")[1]
            parts.append(pl.read_parquet(f).with_columns(pl.lit(judge).alias("judge"), pl.lit(fmt).alias("format")))
        pl.concat(parts).write_parquet(work / "all.parquet")
        del parts
        t = time.perf_counter()
        run("import-verdicts", work / "all.parquet", "--pool", "big", "--db", imported)
        print(f"the same rows imported: {time.perf_counter() - t:.1f} s; the database "
              f"{imported.stat().st_size / 2**20:.1f} MiB", flush=True)
        base, same = audit(imported, args.rounds)
        print(f"audit --json on the imported pool: {base:.1f} s (median of {args.rounds}); the same output: "
              f"{same == attached}; attached / imported = {took / base:.2f}")


def audit(db: Path, rounds: int) -> tuple[float, str]:
    """The median wall time of `judgeaudit audit --json` over `rounds` runs (start included), and its output;
    the median CPU time is printed."""
    times, cpus, outs = [], [], set()
    for _ in range(rounds):
        took, out, cpu = run("audit", "--pool", "big", "--json", "--db", db)
        times.append(took)
        cpus.append(cpu)
        outs.add(out)
    assert len(outs) == 1, "audit printed different outputs on the same pool"
    print(f"  audit: median {statistics.median(times):.2f} s wall, {statistics.median(cpus):.2f} s CPU", flush=True)
    return statistics.median(times), outs.pop()

if __name__ == "__main__":
    main()
