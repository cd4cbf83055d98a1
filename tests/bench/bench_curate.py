"""Benchmark (issue 29): `judgeaudit curate` on the bench pool (tests/bench/bench_app.py's builder:
--prompts 2500000 is 10M candidates x 5 formats), each run a new process under /usr/bin/time -v:
wall time, CPU time (user + system: what the command costs when the machine is shared) and peak
RSS, the medians of --rounds; then the Curate & Train page's first view on a 3-prompt pool and on the
big one, built the same way, alternating, in a server whose caches are empty: with the page's derived
results stored (a restarted server; what `judgeaudit derive` leaves) and, once, computed by that
first view (the first reader after a run brought verdicts).

    .venv/bin/python tests/bench/bench_curate.py [--prompts 2500000] [--rounds 3] [--workdir DIR [--skip-build]]
        [--no-page | --page-only]

Targets (DESIGN.md 'Ten million candidates on every page'): curate <= 30 s and <= 4 GB at 10M;
the page's first view <= 1.5x the 3-prompt pool's.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "bench"))

import bench_app  # noqa: E402

EXE = str(Path(sys.executable).with_name("judgeaudit"))
PAGE = "views/curate/page.py"


def timed(cmd: list[str]) -> dict:
    """Run `cmd` under /usr/bin/time -v: wall_s, cpu_s, peak_gb (and its stdout)."""
    proc = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True, env={**os.environ})
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")
    field = lambda name: re.search(rf"{re.escape(name)}: (.+)", proc.stderr).group(1).strip()   # noqa: E731
    h_m_s = [float(x) for x in field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":")]
    wall = sum(x * 60 ** i for i, x in enumerate(reversed(h_m_s)))
    return {"wall_s": wall, "cpu_s": float(field("User time (seconds)")) + float(field("System time (seconds)")),
            "peak_gb": int(field("Maximum resident set size (kbytes)")) / 1024 ** 2, "stdout": proc.stdout}


def bench_command(db: Path, work: Path, rounds: int) -> None:
    runs = []
    for i in range(rounds):
        out = work / f"subset-{i}.jsonl"
        runs.append(timed([EXE, "curate", "--db", str(db), "--pool", "big", "--judge", "judge", "--format", "likert5",
                           "--rate", "0.25", "--out", str(out)]))
        print(f"  curate run {i + 1}: {runs[-1]['wall_s']:.1f} s wall, {runs[-1]['cpu_s']:.1f} s CPU, "
              f"{runs[-1]['peak_gb']:.2f} GB peak; {runs[-1]['stdout'].strip()[:120]}", flush=True)
    med = {k: statistics.median(r[k] for r in runs) for k in ("wall_s", "cpu_s", "peak_gb")}
    print(f"curate, judge x likert5 at rate 0.25 (medians of {rounds}): {med['wall_s']:.1f} s wall, "
          f"{med['cpu_s']:.1f} s CPU, {med['peak_gb']:.2f} GB peak RSS (targets: <= 30 s, <= 4 GB)", flush=True)
    digests = {subprocess.run(["sha256sum", str(work / f"subset-{i}.jsonl")], capture_output=True,
                              text=True).stdout.split()[0] for i in range(rounds)}
    assert len(digests) == 1, digests


def bench_page(work: Path, big: Path, rounds: int, computed: bool = True) -> None:
    import streamlit as st

    from audit import derived
    small = work / "small.duckdb"
    if computed or not small.exists():
        small.unlink(missing_ok=True)
        bench_app.build(small, 3)
    app, started = bench_app.start(small)
    print(f"app start on the 3-prompt pool: {started:.2f} s", flush=True)
    first = {}
    for key, db in (("3 prompts", small), ("big", big)):     # the first reader computes and stores
        if computed:
            bench_app.forget_derived(db)
        st.cache_data.clear()
        derived.forget()
        first[key] = bench_app.render(app, db, 0, PAGE)[0]
    if computed:
        print(f"Curate & Train first view, derived results computed by it: 3 prompts {first['3 prompts']:.2f} s, "
              f"big {first['big']:.2f} s", flush=True)
    times = {"3 prompts": [], "big": []}
    for _ in range(rounds):
        for key, db in (("3 prompts", small), ("big", big)):
            st.cache_data.clear()
            derived.forget()
            t = time.perf_counter()
            bench_app.render(app, db, 0, PAGE)
            times[key].append(time.perf_counter() - t)
    a, b = statistics.median(times["3 prompts"]), statistics.median(times["big"])
    print(f"Curate & Train first view, derived results stored, caches empty (medians of {rounds}): "
          f"3 prompts {a:.2f} s ({', '.join(f'{x:.2f}' for x in times['3 prompts'])}), big {b:.2f} s "
          f"({', '.join(f'{x:.2f}' for x in times['big'])}), ratio {b / a:.2f}x (target <= 1.5x)", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prompts", type=int, default=2_500_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--skip-build", action="store_true", help="reuse WORKDIR/big.duckdb from an earlier run")
    ap.add_argument("--no-page", action="store_true", help="the command alone")
    ap.add_argument("--page-only", action="store_true", help="the page alone, on the derived results an earlier run stored")
    args = ap.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="judgeaudit-curate-"))
    work.mkdir(parents=True, exist_ok=True)
    big = work / "big.duckdb"
    if not (args.skip_build and big.exists()):
        big.unlink(missing_ok=True)
        t = time.perf_counter()
        bench_app.build(big, args.prompts)
        print(f"built {args.prompts * 4:,} candidates x 5 formats in {time.perf_counter() - t:.1f} s", flush=True)
    if not args.page_only:
        bench_command(big, work, args.rounds)
    if not args.no_page:
        bench_page(work, big, args.rounds, computed=not args.page_only)


if __name__ == "__main__":
    main()
