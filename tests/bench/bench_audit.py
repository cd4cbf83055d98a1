"""Benchmark: the full audit, `judgeaudit audit --json` as a process (CLI start included), against
the in-memory engine it replaced (issue 21 §3) and a per-prompt scipy.stats.kendalltau loop.

    .venv/bin/python tests/bench/bench_audit.py [--prompts 250000] [--judges 5]
        [--formats binary,likert5,numeric100] [--build sql|import] [--workdir DIR] [--skip-build]
    # issue 21's case: 10M candidates x 10 cells = 100M verdicts
    .venv/bin/python tests/bench/bench_audit.py --prompts 2500000 --judges 5 --formats binary,likert5

--build sql (the default) writes the database directly with DuckDB SQL (generate_series-style
ranges and hash-based pseudo-random values: references on a 0-9 grid, 0.5% missing, each judge's
noise growing with its index, 1% of calls unparsed; ties everywhere) through the real migrations,
ensure_judge / ensure_format / start_cell_run, and writes the verdicts as Parquet in
import-verdicts' layout too (through import-verdicts, 100M verdicts would be 20 files of at most
5M rows: about 2 minutes at 0.9-1.2M rows/s, tests/bench/bench_import.py). --build import goes
through the real import path (pool file -> import-pool, one verdict JSONL per judge ->
import-verdicts) and reports the import rate and the scipy loop baseline.

Then `judgeaudit audit --json` runs --repeats times as a child process: wall time and peak RSS
(os.wait4), with the load average; the in-memory engine (compute_cells over pool_scores, the whole
pool's score matrix at once) runs --old-repeats times in a child on the same pool unless
--old-max-candidates is smaller than the pool, and every number of both is compared (1e-12).
Not part of the test run.

Result (2026-12-01, the shared 2-core, 24 GB machine, load average 5.1-5.6 from other work), issue
21's case, 2.5M prompts x 4 = 10M candidates, 5 judges x binary, likert5 = 10 cells, 100M verdicts
(a 7.9 GiB database, built in 565 s): `judgeaudit audit --json` median 15.4 s wall of 15.4, 20.7,
15.2 (10.6-11.5 s CPU), peak RSS 961 MB (953-973); the in-memory engine on the same pool (the
largest measured; it holds it): 25.0 s without the CLI start, 2,687 MB, so 1.6x the time and 2.8x
the memory; the largest difference of any number 2.2e-16. A later run (load average 4.9-5.0):
12.5 s, 956 MB against 24.1 s, 2,758 MB; in one process without the CLI start, the in-memory
engine 24.1 s and the block engine 9.4 s (2.6x). Memory follows the block, not the pool:
with 256k-candidate blocks the audit peaks at 419 MB on 1M candidates and 612 MB on 10M, its RSS
between 519 and 587 MB over the 40 blocks of the 10M pool.

Result (2026-12-06, the shared 2-core machine at load average 10-11 from other work), 250k prompts x 4 =
1M candidates x 10 cells = 10M verdicts (`--prompts 250000 --judges 5 --formats binary,likert5 --no-parquet
--old-repeats 0`), the code before and after these changes run in turn, 3 runs each: before, median 8.1 s
wall (7.6-8.4), 3.4 s CPU, 528 MB peak; after, 6.2 s wall (6.2-6.6), 2.4 s CPU, 429 MB; the same output
byte for byte. What went: about 1.2 s CPU of each start (audit's face loaded every module, SciPy's
statistics among them; now a name's module loads when asked for), and 40% of the numpy work per block
(each block's prompts laid out once for all cells, _metrics.PromptMatrix, instead of twice per cell; the
levels counted by comparison instead of a sort): on one 1M-candidate block, 0.74 s -> 0.43 s for 10 cells.
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
import warnings
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

FORMATS = ("binary", "likert5", "numeric100")


def make_files(folder: Path, n_prompts: int, k: int, n_judges: int, formats=FORMATS, seed: int = 0):
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
            for f in formats]
        path = folder / f"verdicts-judge{j}.jsonl"
        pl.concat(frames).select("judge", "format", "prompt_id", "candidate_id", "raw").write_ndjson(path)
        verdict_files.append(path)
    return pool_file, verdict_files


def kendall_loop_rate(db: Path, sample_prompts: int, seed: int = 0) -> float:
    """Seconds per prompt-cell of a plain loop: scipy.stats.kendalltau(s, r) per prompt."""
    import scipy.stats as ss
    from audit._read import reading
    from audit._scores import read_scores
    with reading(db) as con:
        sc = read_scores(con, con.pool_id("bench"))
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


# Per format: the parsed value from the latent quality `lat`, and its label from the value `v`.
SQL_VALUES = {
    "binary": ("CASE WHEN lat > 4.5 THEN 1.0 ELSE 0.0 END", "CASE WHEN v = 1 THEN 'ACCEPT' ELSE 'REJECT' END"),
    "likert5": ("greatest(1.0, least(5.0, round(lat / 2.2) + 1))", "CAST(CAST(v AS INTEGER) AS VARCHAR)"),
    "numeric100": ("greatest(0.0, least(100.0, round(lat * 2) * 5))", "CAST(CAST(v AS INTEGER) AS VARCHAR)"),
}
VERDICT_ROWS = """
    SELECT i, i // $k AS prompt, i % $k AS pos, bad, CASE WHEN bad THEN NULL ELSE v END AS value,
           CASE WHEN bad THEN 'unsure' ELSE {label} END AS raw
    FROM (SELECT i, bad, {value} AS v FROM (
        SELECT i, hash(i, $jid, $fid, 'unparsed') % 100 = 0 AS bad,
               hash(i, 'ref') % 10 + ((hash(i, $jid, 'noise') % 10000) / 10000.0 - 0.5) * (3 + 2 * $j) AS lat
        FROM range($n) t(i)))"""


def build_sql(db: Path, work: Path, args) -> None:
    """The pool, judges, formats, cell runs and verdicts written with DuckDB SQL (see the module
    docstring); the verdicts also as WORK/verdicts-judgeJ-FORMAT.parquet."""
    from ingest.scoring.formats import BUILTIN
    # a bench writes its rows with SQL of its own
    from ingest.store._cell_runs import CellRunDescription, finish_cell_run, start_cell_run
    from ingest.store._database import transaction, writer
    from ingest.store._judges import ensure_format, ensure_judge, judge_identity
    db.unlink(missing_ok=True)
    n = args.prompts * args.k
    t0 = time.perf_counter()
    with writer(db) as con:
        with transaction(con):
            con.execute("INSERT INTO pools (pool_id, name, source_file, layout) VALUES (1, 'bench', 'bench_audit.py', 'rows')")
            con.execute("INSERT INTO id_marks VALUES ('pools', 1)")
            con.execute("INSERT INTO prompts (pool_id, prompt_idx, prompt_id, prompt) SELECT 1, p, 'p' || p, 'Prompt ' || p FROM range($P) t(p)", {"P": args.prompts})
            con.execute("INSERT INTO candidates (pool_id, cand_idx, prompt_idx, candidate_id, position, response, reference) "
                        "SELECT 1, i, i // $k, 'c' || (i % $k), i % $k, 'a response', CASE WHEN hash(i, 'missing') % 200 = 0 "
                        "THEN NULL ELSE CAST(hash(i, 'ref') % 10 AS DOUBLE) END FROM range($n) t(i)", {"k": args.k, "n": n})
        print(f"pool: {n:,} candidates in {time.perf_counter() - t0:.1f} s", flush=True)
        for j in range(args.judges):
            with transaction(con):
                jid = ensure_judge(con, f"judge{j}", "imported", identity=judge_identity("imported"))
                for name in args.formats:
                    t = time.perf_counter()
                    fmt = BUILTIN[name]
                    fid = ensure_format(con, fmt)
                    rid = start_cell_run(con, 1, jid, fid, CellRunDescription("import", source_file="bench_audit.py"))
                    value, label = SQL_VALUES[name]
                    rows = VERDICT_ROWS.format(value=value, label=label)
                    params = {"k": args.k, "n": n, "jid": jid, "fid": fid, "j": j}
                    con.execute(f"INSERT INTO verdicts (cell_run_id, pool_id, judge_id, format_id, decoding, prompt_idx, a_idx, "
                                f"sample, raw, answer, value, status) SELECT {rid}, 1, {jid}, {fid}, 'greedy', prompt, i, 0, "
                                f"raw, CASE WHEN bad THEN NULL ELSE raw END, value, CASE WHEN bad THEN 'no_label' ELSE 'ok' END "
                                f"FROM ({rows})", params)
                    finish_cell_run(con, rid)
                    if args.parquet:
                        out = work / f"verdicts-judge{j}-{name}.parquet"
                        con.execute(f"COPY (SELECT 'judge{j}' AS judge, '{name}' AS format, 'p' || prompt AS prompt_id, "
                                    f"'c' || pos AS candidate_id, raw FROM ({rows})) TO '{out}' (FORMAT parquet)", params)
                    print(f"judge{j} {name}: {n:,} verdicts in {time.perf_counter() - t:.1f} s", flush=True)
    print(f"built {db} ({db.stat().st_size / 2**30:.2f} GiB) in {time.perf_counter() - t0:.0f} s", flush=True)


def child_old_engine(db: str, repeats: int, out: str) -> None:
    """Run in a child process: the in-memory engine (the whole pool's score matrix at once), timed;
    its cells written to OUT as JSON, its times and peak RSS printed; then the block engine
    (audit_cells) once in the same process, timed."""
    from audit._cells import compute_cells
    from audit._scores import pool_scores
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        cells = compute_cells(pool_scores(db, "bench", repeats=True))
        times.append(time.perf_counter() - t)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    from audit import audit_cells
    t = time.perf_counter()               # then the block engine in the same process: time alike
    audit_cells(db, "bench")
    Path(out).write_text(json.dumps({"cells": cells.to_dicts()}))
    print(json.dumps({"times": times, "peak_mb": peak_mb, "blocks_s": time.perf_counter() - t}))


def run_cli(db: Path, out: Path) -> dict:
    """`judgeaudit audit --json` as its own process: wall and CPU seconds, peak RSS (MB), load average."""
    exe = Path(sys.executable).with_name("judgeaudit")
    load = os.getloadavg()[0]
    t = time.perf_counter()
    with open(out, "w") as fh:
        proc = subprocess.Popen([str(exe), "audit", "--json", "--db", str(db), "--pool", "bench"], stdout=fh)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"judgeaudit audit failed with status {status}")
    return {"wall_s": wall, "peak_mb": usage.ru_maxrss / 1024, "load": load,
            "cpu_s": usage.ru_utime + usage.ru_stime}


def compare(new: list[dict], old: list[dict]) -> float:
    """The largest absolute difference between two audits' numbers (keys and non-numbers equal)."""
    assert len(new) == len(old)
    worst = 0.0
    for a, b in zip(new, old):
        assert a.keys() == b.keys()
        for key in a:
            if isinstance(a[key], float) and isinstance(b[key], float):
                worst = max(worst, abs(a[key] - b[key]))
            else:
                assert a[key] == b[key], (key, a[key], b[key])
    return worst


def build_import(db: Path, work: Path, args) -> None:
    from ingest.store import import_pool
    from ingest.scoring import import_verdicts
    db.unlink(missing_ok=True)
    t = time.perf_counter()
    pool_file, verdict_files = make_files(work, args.prompts, args.k, args.judges, args.formats)
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
    ap.add_argument("--formats", type=lambda v: tuple(v.split(",")), default=FORMATS)
    ap.add_argument("--build", choices=("sql", "import"), default="sql")
    ap.add_argument("--no-parquet", dest="parquet", action="store_false", help="sql build: no Parquet copy")
    ap.add_argument("--repeats", type=int, default=3, help="runs of judgeaudit audit --json")
    ap.add_argument("--old-repeats", type=int, default=1, help="runs of the in-memory engine")
    ap.add_argument("--old-max-candidates", type=int, default=10**9,
                    help="skip the in-memory engine on a larger pool")
    ap.add_argument("--sample", type=int, default=400, help="prompts in the kendalltau sample (import build)")
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--skip-build", action="store_true", help="reuse WORKDIR/bench.duckdb from an earlier run")
    ap.add_argument("--child-old", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child_old:
        child_old_engine(args.child_old[0], int(args.child_old[1]), args.child_old[2])
        return
    unknown = set(args.formats) - set(SQL_VALUES)
    if unknown:
        raise SystemExit(f"--formats: pointwise built-ins only ({', '.join(SQL_VALUES)}), not {', '.join(unknown)}")

    work = args.workdir or Path(tempfile.mkdtemp(prefix="judgeaudit-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    db = work / "bench.duckdb"
    if not (args.skip_build and db.exists()):
        (build_sql if args.build == "sql" else build_import)(db, work, args)
    n = args.prompts * args.k
    runs = []
    for r in range(args.repeats):
        runs.append(run_cli(db, work / "audit.json"))
        print(f"judgeaudit audit --json, run {r + 1}: {runs[-1]['wall_s']:.1f} s ({runs[-1]['cpu_s']:.1f} s CPU), peak RSS "
              f"{runs[-1]['peak_mb']:,.0f} MB (load average {runs[-1]['load']:.2f})", flush=True)
    if not runs:   # --repeats 0: build only
        return
    new_cells = json.loads((work / "audit.json").read_text())["cells"]
    wall, peak = statistics.median(r["wall_s"] for r in runs), statistics.median(r["peak_mb"] for r in runs)
    print(f"audit ({sum(c['n_verdicts'] for c in new_cells):,} verdicts, {len(new_cells)} cells, {n:,} candidates): "
          f"median {wall:.1f} s wall, {peak:,.0f} MB peak RSS of {len(runs)} runs")
    if args.old_repeats > 0 and n <= args.old_max_candidates:          # --old-repeats 0: the audit alone
        load = os.getloadavg()[0]
        t = time.perf_counter()
        proc = subprocess.run([sys.executable, __file__, "--child-old", str(db), str(args.old_repeats),
                               str(work / "old.json")], capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"in-memory engine failed on this pool ({proc.returncode}): {proc.stderr.strip()[-300:]}")
        else:
            old = json.loads(proc.stdout.strip().splitlines()[-1])
            old_s = statistics.median(old["times"])
            diff = compare(new_cells, json.loads((work / "old.json").read_text())["cells"])
            print(f"in-memory engine (no CLI start): median {old_s:.1f} s of {old['times']}, peak RSS "
                  f"{old['peak_mb']:,.0f} MB (load average {load:.2f}; child {time.perf_counter() - t:.0f} s)")
            print(f"the block engine in that process, after it: {old['blocks_s']:.1f} s (in-memory / blocks "
                  f"{old_s / old['blocks_s']:.2f}x, no CLI start on either side)")
            print(f"ratio (in-memory / judgeaudit audit): time {old_s / wall:.2f}x, peak memory {old['peak_mb'] / peak:.2f}x; "
                  f"largest difference of any number {diff:.1e}")
    if args.build == "import" and args.sample:
        per_call = kendall_loop_rate(db, args.sample)
        loop_s = per_call * args.prompts * len(new_cells)
        print(f"baseline: scipy.stats.kendalltau per prompt, {per_call * 1e6:.0f} us/call on a sample of "
              f"{args.sample} prompts x {len(new_cells)} cells -> {loop_s:,.0f} s for all prompt-cells (tau only); "
              f"ratio (loop / audit) {loop_s / wall:,.0f}x")


if __name__ == "__main__":
    main()
