"""Benchmark: the Formats page (AppTest) on a database of 1M candidates x 5 formats, cold cache
(the first render of the page on that database in a started app) and warm (the same page again),
against the same page on the small bundled demo pool in the same run. The app's start (imports,
Streamlit's component discovery, a first render) is printed on its own line.

    .venv/bin/python tests/bench/bench_app.py [--prompts 250000] [--repeats 3] [--workdir DIR [--skip-build]]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def build(db: Path, n_prompts: int) -> None:
    from ingest.store import transaction, writer
    from ingest.scoring.formats import BUILTIN
    from ingest.store import ensure_format, ensure_judge, start_cell_run as start_run
    n = n_prompts * 4
    with writer(db) as con, transaction(con):
        con.execute("INSERT INTO pools (pool_id, name, layout) VALUES (1, 'big', 'rows')")
        con.execute("INSERT INTO prompts SELECT 1, i, 'p' || i, 'Prompt ' || i FROM range($n) t(i)", {"n": n_prompts})
        con.execute("INSERT INTO candidates SELECT 1, i, i // 4, 'c' || (i % 4), i % 4, 'a response', "
                    "floor(random() * 10), NULL, 'pool' FROM range($n) t(i)", {"n": n})
        jid = ensure_judge(con, "judge", "fake")
        for name in ("binary", "likert5", "numeric100", "anchored", "tournament"):
            fid = ensure_format(con, BUILTIN[name])
            rid = start_run(con, 1, jid, BUILTIN[name], fid, "score")
            q = {"binary": "(r + random() * 4 > 6)::INT", "likert5": "least(5, 1 + floor((r + random() * 4) / 3))",
                 "numeric100": "least(100, 5 * floor((r + random() * 4) * 1.5))"}
            if name in q:
                con.execute(f"INSERT INTO verdicts (run_id, pool_id, judge_id, format_id, prompt_idx, a_idx, "
                            f"value, label, status) SELECT $rid, 1, $jid, $fid, prompt_idx, cand_idx, v, v::VARCHAR, 'ok' "
                            f"FROM (SELECT prompt_idx, cand_idx, {q[name]} AS v FROM "
                            f"(SELECT prompt_idx, cand_idx, reference AS r FROM candidates))",
                            {"rid": rid, "jid": jid, "fid": fid})
            elif name == "anchored":
                con.execute("INSERT INTO verdicts (run_id, pool_id, judge_id, format_id, prompt_idx, a_idx, b_idx, "
                            "value, status) SELECT $rid, 1, $jid, $fid, prompt_idx, cand_idx, prompt_idx * 4 + 2, "
                            "least(2, greatest(-2, round((reference - 4.5) / 2 + random() - 0.5))), 'ok' "
                            "FROM candidates", {"rid": rid, "jid": jid, "fid": fid})
            else:
                con.execute("INSERT INTO verdicts (run_id, pool_id, judge_id, format_id, prompt_idx, a_idx, b_idx, "
                            "value, status) SELECT $rid, 1, $jid, $fid, a.prompt_idx, a.cand_idx, b.cand_idx, "
                            "least(2, greatest(-2, round((a.reference - b.reference) / 3 + random()))), 'ok' "
                            "FROM candidates a JOIN candidates b ON a.prompt_idx = b.prompt_idx "
                            "AND a.position < b.position", {"rid": rid, "jid": jid, "fid": fid})


def render(app, db: Path, repeats: int) -> tuple[float, list[float]]:
    """The Formats page on `db` in a started app: the cold render (nothing cached for this
    database: Streamlit's cache, the only one, is keyed by its path), then warm repeats."""
    os.environ["JUDGEAUDIT_DB"] = str(db)
    t = time.perf_counter()
    app.switch_page("views/formats.py").run()
    cold = time.perf_counter() - t
    assert not app.exception, app.exception
    warm = []
    for _ in range(repeats):
        t = time.perf_counter()
        app.switch_page("views/formats.py").run()
        warm.append(time.perf_counter() - t)
    return cold, warm


def start(db: Path) -> tuple[object, float]:
    """Start the app (AppTest) on `db`: imports, Streamlit's component discovery and a first
    render; a server does this once, before any user opens a page."""
    from streamlit.testing.v1 import AppTest
    os.environ["JUDGEAUDIT_DB"] = str(db)
    app = AppTest.from_file(str(ROOT / "app" / "main.py"), default_timeout=600)
    t = time.perf_counter()
    app.run()
    assert not app.exception, app.exception
    return app, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prompts", type=int, default=250_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--skip-build", action="store_true", help="reuse WORKDIR/big.duckdb from an earlier run")
    args = ap.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="judgeaudit-app-"))
    work.mkdir(parents=True, exist_ok=True)
    big = work / "big.duckdb"
    if not (args.skip_build and big.exists()):
        big.unlink(missing_ok=True)
        t = time.perf_counter()
        build(big, args.prompts)
        print(f"built {args.prompts * 4:,} candidates x 5 formats in {time.perf_counter() - t:.1f} s")
    from ingest.demo import seed_demo
    small, start_db = work / "demo.duckdb", work / "start.duckdb"
    for db in (small, start_db):
        db.unlink(missing_ok=True)
        seed_demo(db)
    app, started = start(start_db)
    cold_s, warm_s = render(app, small, args.repeats)
    demo_pool = app.session_state["pool"]
    cold_b, warm_b = render(app, big, args.repeats)
    assert app.session_state["pool"] == "big", app.session_state["pool"]
    print(f"app start (imports, component discovery, first render on the demo): {started:.2f} s")
    med_s, med_b = statistics.median(warm_s), statistics.median(warm_b)
    print(f"Formats page, demo database (pool {demo_pool}): cold {cold_s:.2f} s, warm median {med_s:.2f} s")
    print(f"Formats page, 1M candidates x 5 formats:  cold {cold_b:.2f} s, warm median {med_b:.2f} s "
          f"({', '.join(f'{x:.2f}' for x in warm_b)})")
    print(f"ratio big / demo: cold {cold_b / cold_s:.1f}x, warm {med_b / med_s:.1f}x")

    # for comparison with earlier figures: a new AppTest whose first run is the big database, with
    # every cache emptied; this includes the ~0.3 s of component discovery each AppTest repeats
    import streamlit as st
    st.cache_data.clear()
    st.cache_resource.clear()
    _, fresh = start(big)
    print(f"new AppTest, first run on the 1M database, caches emptied: {fresh:.2f} s")


if __name__ == "__main__":
    main()
