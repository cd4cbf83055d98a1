"""Benchmark: `judgeaudit apply` of a distilled student on Parquet shards of pool rows, each engine
in a new process: candidates per second (the command's own rows / seconds) and peak memory (the
summed RSS of the command's process tree, sampled every 0.2 s: with Ray, its raylet and workers too;
and the command's own peak RSS).

The shards: --shards files of --rows rows each (prompt_id, prompt, candidate_id, response; responses
of 40 words drawn from a 2,000-word vocabulary). One table of --rows rows is built and written under
each shard's name with the shard's number in its ids, so building 10M candidates costs one shard's
draws and ten writes. The student: a folder `judgeaudit distil` wrote (--student).

    .venv/bin/python tests/bench/bench_apply.py --student DIR [--shards 10] [--rows 100000]
        [--engines local,ray] [--workdir DIR] [--batch-rows 65536]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def build(folder: Path, shards: int, rows: int, seed: int = 0) -> float:
    """Write the shards; their size in MB."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}{'abcdefghij'[i % 10]}" for i in range(2000)], dtype=object)
    words = vocab[rng.integers(0, len(vocab), size=(rows, 40))]
    response = pa.array([" ".join(w) for w in words], type=pa.string())
    prompt_no = np.arange(rows) // 4
    prompt = pa.array([f"Question {p} about topic {p % 97}" for p in prompt_no], type=pa.string())
    base_pid = pa.array([str(p) for p in prompt_no], type=pa.string())
    cid = pa.array([f"c{i % 4}" for i in range(rows)], type=pa.string())
    folder.mkdir(parents=True, exist_ok=True)
    for s in range(shards):
        pid = pc.binary_join_element_wise(pa.scalar(f"s{s}-"), base_pid, "")
        pq.write_table(pa.table({"prompt_id": pid, "prompt": prompt, "candidate_id": cid, "response": response}),
                       folder / f"part-{s:03d}.parquet")
    return sum(p.stat().st_size for p in folder.glob("*.parquet")) / 1e6


def run(student: Path, shards: Path, out: Path, engine: str, batch_rows: int, db: Path) -> dict:
    import psutil
    shutil.rmtree(out, ignore_errors=True)
    cmd = [sys.executable, "-m", "app.cli", "apply", str(student), f"{shards}/*.parquet", "--out", str(out),
           "--engine", engine, "--batch-rows", str(batch_rows), "--db", str(db), "--json"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=ROOT)
    top = psutil.Process(proc.pid)
    peak_tree = peak_own = 0
    while proc.poll() is None:
        try:
            procs = [top, *top.children(recursive=True)]
            rss = []
            for p in procs:
                try:
                    rss.append(p.memory_info().rss)
                except psutil.Error:
                    pass
            peak_tree = max(peak_tree, sum(rss))
            peak_own = max(peak_own, rss[0] if rss else 0)
        except psutil.Error:
            pass
        time.sleep(0.2)
    stdout = proc.stdout.read().decode()
    wall = time.perf_counter() - start
    if proc.returncode:
        raise SystemExit(f"{engine}: exit {proc.returncode}")
    doc = json.loads(stdout.strip().splitlines()[-1])
    return {"engine": engine, "rows": doc["rows"], "seconds": doc["seconds"], "rows_per_s": doc["rows_per_s"],
            "wall_s": round(wall, 1), "peak_tree_mb": round(peak_tree / 1e6), "peak_own_mb": round(peak_own / 1e6)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--student", required=True, type=Path)
    ap.add_argument("--shards", type=int, default=10)
    ap.add_argument("--rows", type=int, default=100000)
    ap.add_argument("--engines", default="local,ray")
    ap.add_argument("--batch-rows", type=int, default=65536)
    ap.add_argument("--workdir", type=Path, default=None)
    args = ap.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="bench-apply-"))
    shards = work / f"shards-{args.shards}x{args.rows}"
    t = time.perf_counter()
    if not shards.is_dir():
        mb = build(shards, args.shards, args.rows)
        print(f"built {args.shards} x {args.rows:,} rows ({mb:.0f} MB) in {time.perf_counter() - t:.0f} s", flush=True)
    for engine in args.engines.split(","):
        print(json.dumps({"load": os.getloadavg()[0], **run(args.student, shards, work / f"out-{engine}", engine,
                                                              args.batch_rows, work / "bench.duckdb")}), flush=True)


if __name__ == "__main__":
    main()
