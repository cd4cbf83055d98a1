"""Benchmark: the derived-results refresh after ONE JUDGE is added to a pool whose results are all
stored (what `judgeaudit import-verdicts` ends with: audit.derived.refresh over train.DERIVED_RESULTS).

The pool is bench_app's: N prompts x 4 candidates, two judges x the five built-in formats (10 cells;
--prompts 2500 is 10k candidates, 250000 is 1M). The refresh runs once on it so every result is
stored (its time is printed, for context). Then a third judge's verdicts on the same pool, in the
same five formats and drawn as bench_app's generator draws them (its SQL, the values written as the
raws the formats parse), are written to a Parquet verdict file. A round: copy the refreshed database,
import that file with `judgeaudit import-verdicts` (JUDGEAUDIT_NO_DERIVE=1: the import alone), then
time the refresh in a process of its own. Printed per result: its name, status (computed / current)
and seconds (medians of --rounds); the refresh's whole wall time, CPU time and peak RSS; how many
results were recomputed.

    .venv/bin/python tests/bench/bench_refresh_judge.py [--prompts 250000] [--rounds 1]
        [--workdir DIR [--skip-build]] [--workers N]

With --workdir and --skip-build, DIR/big.duckdb (the built pool), DIR/refreshed.duckdb (it after the
first refresh, with that refresh's time in DIR/first_refresh.json) and DIR/judge3.parquet are reused.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
EXE = str(Path(sys.executable).with_name("judgeaudit"))
POOL = "big"


def refresh_pool(db: str, pool: str, workers: int | None = None) -> dict:
    # The one call timed: the refresh the command that brings verdicts ends with; it returns
    # {"results": [{"name", "status", "seconds", "parts", "computed"}]} ("parts": since migration 019)
    from audit.derived import refresh
    from train.derived_results import DERIVED_RESULTS
    return refresh(db, pool, DERIVED_RESULTS, workers=workers)


FORMATS = ("binary", "likert5", "numeric100", "anchored", "tournament")
# bench_app._score's values (the same SQL), written as the raw text each built-in format parses back
VALUE = {"binary": "(r + random() * 4 > 6)::INT", "likert5": "least(5, 1 + floor((r + random() * 4) / 3))",
         "numeric100": "least(100, 5 * floor((r + random() * 4) * 1.5))"}
COMPARATIVE_RAW = "CASE CAST(v AS INT) WHEN 2 THEN 'A++' WHEN 1 THEN 'A+' WHEN 0 THEN 'TIE' WHEN -1 THEN 'B+' ELSE 'B++' END"


def verdict_file(db: Path, out: Path, judge: str) -> int:
    """`judge`'s verdicts on pool 'big' of `db` in the five formats as a verdict file (Parquet): judge,
    format, prompt_id, candidate_id (pointwise) or a_id, b_id (comparative), raw; its row count."""
    from ingest.store._database import reader       # a bench reads its rows with SQL of its own
    raw = {"binary": "CASE WHEN v = 1 THEN 'ACCEPT' ELSE 'REJECT' END", "likert5": "CAST(CAST(v AS INT) AS VARCHAR)",
           "numeric100": "CAST(CAST(v AS INT) AS VARCHAR)"}
    cands = ("(SELECT c.cand_idx, c.prompt_idx, c.position, c.candidate_id, c.reference AS r, p.prompt_id "
             "FROM candidates c JOIN prompts p ON p.pool_id = c.pool_id AND p.prompt_idx = c.prompt_idx "
             "WHERE c.pool_id = (SELECT pool_id FROM pools WHERE name = 'big'))")
    parts = []
    for name in FORMATS:
        if name in VALUE:
            parts.append(f"SELECT '{name}' AS format, prompt_id, candidate_id, NULL AS a_id, NULL AS b_id, "
                         f"{raw[name]} AS raw FROM (SELECT *, {VALUE[name]} AS v FROM {cands})")
        elif name == "anchored":     # bench_app: each candidate against the prompt's position 2 (itself too)
            parts.append(f"SELECT 'anchored', a.prompt_id, NULL, a.candidate_id, b.candidate_id, {COMPARATIVE_RAW} "
                         f"FROM (SELECT a.*, least(2, greatest(-2, round((a.r - 4.5) / 2 + random() - 0.5))) AS v "
                         f"FROM {cands} a) a JOIN {cands} b ON b.prompt_idx = a.prompt_idx AND b.position = 2")
        else:                        # every pair within a prompt, the earlier position in slot A
            parts.append(f"SELECT 'tournament', prompt_id, NULL, a_id, b_id, {COMPARATIVE_RAW} FROM ("
                         f"SELECT a.prompt_id, a.candidate_id AS a_id, b.candidate_id AS b_id, "
                         f"least(2, greatest(-2, round((a.r - b.r) / 3 + random()))) AS v "
                         f"FROM {cands} a JOIN {cands} b ON a.prompt_idx = b.prompt_idx AND a.position < b.position)")
    sql = " UNION ALL ".join(parts)
    with reader(db) as con:
        con.execute(f"COPY (SELECT '{judge}' AS judge, format, prompt_id, candidate_id, a_id, b_id, raw "
                    f"FROM ({sql})) TO '{out}' (FORMAT parquet)")
        return con.execute(f"SELECT count(*) FROM read_parquet('{out}')").fetchone()[0]


def timed_refresh(db: Path, workers: int | None = None) -> dict:
    """refresh_pool on `db` in a process of its own (as the command runs it: nothing of this one's
    caches): its result, wall and CPU seconds (user + system) and peak RSS."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    more = ["--workers", str(workers)] if workers else []
    out = subprocess.run([sys.executable, __file__, "--refresh", str(db), *more], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def refresh_here(db: str, workers: int | None = None) -> dict:
    import train.derived_results  # noqa: F401  (the modules' import is the process's start, not the refresh)
    from ingest.store import ensure_current
    ensure_current(db)           # as the command does before it refreshes (an older database is upgraded)
    t, c = time.perf_counter(), time.process_time()
    result = refresh_pool(db, POOL, workers)
    return {"results": result["results"], "n_verdicts": result.get("n_verdicts"),
            "wall_s": time.perf_counter() - t, "cpu_s": time.process_time() - c,
            "peak_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2}


def import_verdicts(db: Path, path: Path) -> tuple[float, dict]:
    """`judgeaudit import-verdicts` of `path` into pool 'big' of `db`, without the refresh after it."""
    t = time.perf_counter()
    proc = subprocess.run([EXE, "import-verdicts", str(path), "--pool", POOL, "--db", str(db), "--json"],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT), "JUDGEAUDIT_NO_DERIVE": "1"})
    took = time.perf_counter() - t
    assert proc.returncode == 0, proc.stderr
    return took, json.loads(proc.stdout)


def copy_db(src: Path, dst: Path) -> None:
    assert not Path(f"{src}.wal").exists(), f"{src}.wal: the database was not checkpointed"
    dst.unlink(missing_ok=True)
    Path(f"{dst}.wal").unlink(missing_ok=True)
    shutil.copyfile(src, dst)


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompts", type=int, default=250_000)
    ap.add_argument("--rounds", type=int, default=1, help="rounds (copy, import the third judge, refresh)")
    ap.add_argument("--judge", default="judge3", help="the added judge's name")
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--skip-build", action="store_true",
                    help="reuse WORKDIR's big.duckdb, refreshed.duckdb and verdict file from an earlier run")
    ap.add_argument("--workers", type=int, default=None,
                    help="results the refresh computes at once (default: one per core; 1: one after another, "
                         "each result's seconds then its own)")
    ap.add_argument("--refresh", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.refresh:
        print(json.dumps(refresh_here(args.refresh, args.workers)))
        return
    from tests.bench.bench_app import build
    work = args.workdir or Path(tempfile.mkdtemp(prefix="judgeaudit-refresh-judge-"))
    work.mkdir(parents=True, exist_ok=True)
    big, refreshed, first_json = work / "big.duckdb", work / "refreshed.duckdb", work / "first_refresh.json"
    verdicts, one = work / f"{args.judge}.parquet", work / "round.duckdb"
    reuse = args.skip_build and big.exists()
    if not reuse:
        for p in (big, refreshed, first_json, verdicts):
            p.unlink(missing_ok=True)
        t = time.perf_counter()
        build(big, args.prompts, n_judges=2)
        print(f"built {args.prompts * 4:,} candidates x 10 cells (2 judges x 5 formats) in "
              f"{time.perf_counter() - t:.1f} s", flush=True)
    if not (reuse and refreshed.exists() and first_json.exists()):
        copy_db(big, refreshed)
        first = timed_refresh(refreshed, args.workers)
        first["load"] = load()
        first_json.write_text(json.dumps(first))
    else:
        print(f"reusing {refreshed} (refreshed in an earlier run)", flush=True)
    first = json.loads(first_json.read_text())
    n_first = sum(r["status"] == "computed" for r in first["results"])
    print(f"first full refresh (2 judges, nothing stored): {first['wall_s']:.1f} s wall, {first['cpu_s']:.1f} s CPU, "
          f"{first['peak_gb']:.2f} GB peak, {n_first} of {len(first['results'])} results computed, "
          f"{first['n_verdicts']:,} verdicts; load average {first['load']}", flush=True)
    if not (reuse and verdicts.exists()):
        t = time.perf_counter()
        n_rows = verdict_file(big, verdicts, args.judge)
        print(f"verdict file of judge '{args.judge}': {n_rows:,} rows, {verdicts.stat().st_size / 2**20:.1f} MiB, "
              f"written in {time.perf_counter() - t:.1f} s", flush=True)
    rounds = []
    for r in range(args.rounds):
        copy_db(refreshed, one)
        took, imported = import_verdicts(one, verdicts)
        assert imported["imported"] > 0, imported
        m = timed_refresh(one, args.workers)
        m["import_s"], m["imported"], m["load"] = took, imported, load()
        rounds.append(m)
        n = sum(x["status"] == "computed" for x in m["results"])
        print(f"round {r + 1}: import {took:.1f} s ({imported['imported']:,} verdicts; "
              f"{imported.get('status_counts')}), refresh {m['wall_s']:.1f} s wall, {m['cpu_s']:.1f} s CPU, "
              f"{m['peak_gb']:.2f} GB peak, {n} computed; load average {m['load']}", flush=True)
    one.unlink(missing_ok=True)

    names = [x["name"] for x in rounds[0]["results"]]
    print(f"\nthe refresh after adding judge '{args.judge}' to {args.prompts * 4:,} candidates x 2 judges "
          f"({rounds[0]['n_verdicts']:,} verdicts after the import); medians of {args.rounds} round(s):")
    print(f"  {'result':18s} {'status':10s} {'seconds':>9s}  parts computed")
    computed = 0
    for i, name in enumerate(names):
        statuses = {m["results"][i]["status"] for m in rounds}
        assert all(m["results"][i]["name"] == name for m in rounds), "the rounds' results differ"
        status = "/".join(sorted(statuses))
        computed += "computed" in statuses
        sec = statistics.median(m["results"][i]["seconds"] for m in rounds)
        first_round = rounds[0]["results"][i]
        parts = f"  {first_round['computed']} of {first_round['parts']}" if "parts" in first_round else ""
        print(f"  {name:18s} {status:10s} {sec:9.2f}{parts}")
    med = {k: statistics.median(m[k] for m in rounds) for k in ("wall_s", "cpu_s", "peak_gb", "import_s")}
    summed = statistics.median(sum(x["seconds"] for x in m["results"]) for m in rounds)
    print(f"  {'sum of results':29s} {summed:9.2f}")
    print(f"  {'total (wall)':29s} {med['wall_s']:9.2f}   (the rest, {med['wall_s'] - summed:.2f} s: fingerprints, "
          f"reading what is stored, storing what is computed)")
    print(f"recomputed {computed} of {len(names)} results; refresh CPU {med['cpu_s']:.1f} s, peak RSS "
          f"{med['peak_gb']:.2f} GB; the import before it {med['import_s']:.1f} s; first full refresh "
          f"{first['wall_s']:.1f} s; load average {', '.join(m['load'] for m in rounds)}")


if __name__ == "__main__":
    main()
