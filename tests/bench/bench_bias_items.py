"""Benchmark: one read of bias_items.sql (slot bias's items, what `bias` and `bias_items` read) against the
query before it (tests/audit/sql/bias_items_before.sql), on bench_app's pool of N prompts x 4 candidates
scored by three judges in the five built-in formats (--prompts 250000: 1M candidates, 15 cells, 16.5M
calls, of which 3M anchored and 4.5M tournament), asked three ways:

* none: as bench_app draws it, no call asked swapped;
* few: 1% of the comparative calls (self-comparisons left out) asked again swapped;
* all: every comparative call asked again swapped (a fully swapped run).

A swapped copy is a verdicts row of the same cell run with a_idx and b_idx exchanged, swapped = true and
a margin drawn anew. Per case and query: the rows (checked equal, old against new, to 1e-12) and the
medians of --rounds reads' wall and CPU seconds (process time: DuckDB's threads included), the two
queries alternating on one connection.

    .venv/bin/python tests/bench/bench_bias_items.py [--prompts 250000] [--rounds 3] [--workdir DIR [--skip-build]]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

CASES = {"none": None, "few": 0.01, "all": 1.0}


def swap(db: Path, share: float) -> None:
    """Ask `share` of the pool's comparative calls (not self-comparisons) again swapped: one verdicts row
    each, slots exchanged, its margin drawn anew."""
    from ingest.store._database import transaction, writer      # a bench writes its rows with SQL of its own
    with writer(db) as con, transaction(con):
        con.execute("INSERT INTO verdicts (cell_run_id, pool_id, judge_id, format_id, decoding, prompt_idx, a_idx, "
                    "b_idx, swapped, value, status) SELECT cell_run_id, pool_id, judge_id, format_id, decoding, "
                    "prompt_idx, b_idx, a_idx, true, round(random() * 4) - 2, 'ok' FROM verdicts "
                    "WHERE b_idx IS NOT NULL AND a_idx <> b_idx AND random() < $share", {"share": share})


def timed(read, name: str) -> tuple[float, float, object]:
    """One read of sql/NAME.sql of pool 'big': wall seconds, CPU seconds and its frame."""
    wall, cpu = time.perf_counter(), time.process_time()
    frame = read.frame(name, pool_id=read.pool_id("big"))
    return time.perf_counter() - wall, time.process_time() - cpu, frame


def measure(db: Path, rounds: int) -> dict:
    """Medians of `rounds` reads of the old and the new query, alternating on one connection."""
    from polars.testing import assert_frame_equal
    from ingest.store.database import Database
    times, frames = {"old": [], "new": []}, {}
    with Database.of(db).reading(queries="tests.audit") as old, Database.of(db).reading(queries="audit") as new:
        for _ in range(rounds):
            for key, read, name in (("old", old, "bias_items_before"), ("new", new, "bias_items")):
                wall, cpu, frame = timed(read, name)
                times[key].append((wall, cpu))
                frames[key] = frame
        assert_frame_equal(frames["new"], frames["old"], check_exact=False, rel_tol=1e-12, abs_tol=1e-12)
    out = {"items": frames["new"].height}
    for key, runs in times.items():
        out[key] = (statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompts", type=int, default=250_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--skip-build", action="store_true", help="reuse WORKDIR/{none,few,all}.duckdb")
    args = ap.parse_args()
    from tests.bench.bench_app import build
    work = Path(args.workdir or tempfile.mkdtemp(prefix="bench_bias_"))
    work.mkdir(parents=True, exist_ok=True)
    base = work / "none.duckdb"
    if not (args.skip_build and base.exists()):
        base.unlink(missing_ok=True)
        t = time.perf_counter()
        build(base, args.prompts, n_judges=3)
        print(f"built {args.prompts * 4:,} candidates x 15 cells in {time.perf_counter() - t:.1f} s", flush=True)
    for case, share in CASES.items():
        db = work / f"{case}.duckdb"
        if share is not None and not (args.skip_build and db.exists()):
            shutil.copyfile(base, db)
            swap(db, share)
        got = measure(db, args.rounds)
        (ow, oc), (nw, nc) = got["old"], got["new"]
        print(f"{case:>4}: {got['items']:>9,} items   old {ow:6.3f} s wall {oc:6.3f} s CPU   "
              f"new {nw:6.3f} s wall {nc:6.3f} s CPU   (medians of {args.rounds})", flush=True)


if __name__ == "__main__":
    main()
