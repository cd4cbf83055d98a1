"""Benchmark: the Formats and Overview pages (AppTest) on a database of 1M candidates x 5 formats,
cold cache (the first render of the page on that database in a started app, every cache emptied
before each page) and warm (the same page again), against the same page on the small bundled demo
pool in the same run. The app's start (imports, Streamlit's component discovery, a first render) is
printed on its own line, and last a new AppTest whose first run is the 1M database: it opens on the
Overview, the landing page (issue 20: at most 1.5 s where the Formats page opens cold in 1.1 s).

    .venv/bin/python tests/bench/bench_app.py [--prompts 250000] [--repeats 3] [--rounds 3] [--workdir DIR [--skip-build]]

`--every-page` (issue 29) instead renders every page of app/views, each cold (caches emptied) on a
3-prompt pool and on the big pool, both built and scored the same way, the pages alternating, and
prints per page the medians of --rounds first views and their ratio (big / small);
`--prompts 2500000` is the issue's 10M candidates (x 5 formats here, not its 10 cells).
`--derived stored` (the default) times each first view in a server whose caches are empty on a pool
whose derived results are stored (audit/derived/); `--derived computed` deletes them before each.

`--browser` (issue 29) times every page's first view in headless chromium instead, a fresh `judgeaudit
app` server per round, on N prompts x 4 candidates x 10 cells against 3 prompts scored the same way:
tests/bench/bench_pages_browser.py.
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


def build(db: Path, n_prompts: int, n_judges: int = 1) -> None:
    """Pool 'big': n_prompts prompts x 4 candidates, scored by `n_judges` judges (judge, judge2, ...) in
    the five built-in formats each (n_judges x 5 cells; 2: the issue's 10 cells)."""
    from ingest.store._database import transaction, writer      # a bench writes its rows with SQL of its own
    from ingest.store._judges import ensure_judge
    n = n_prompts * 4
    with writer(db) as con, transaction(con):
        con.execute("INSERT INTO pools (pool_id, name, layout) VALUES (1, 'big', 'rows')")
        con.execute("INSERT INTO prompts (pool_id, prompt_idx, prompt_id, prompt) SELECT 1, i, 'p' || i, 'Prompt ' || i FROM range($n) t(i)", {"n": n_prompts})
        con.execute("INSERT INTO candidates SELECT 1, i, i // 4, 'c' || (i % 4), i % 4, 'a response', "
                    "floor(random() * 10), NULL, 'pool' FROM range($n) t(i)", {"n": n})
        for j in range(n_judges):
            _score(con, ensure_judge(con, "judge" if j == 0 else f"judge{j + 1}", "fake"))


def _score(con, jid: int) -> None:
    """The judge's verdicts on pool 1 in the five built-in formats (build's SQL, one cell run each)."""
    from ingest.scoring.formats import BUILTIN
    from ingest.store._cell_runs import CellRunDescription, start_cell_run as start_run
    from ingest.store._judges import ensure_format
    for name in ("binary", "likert5", "numeric100", "anchored", "tournament"):
        fid = ensure_format(con, BUILTIN[name])
        rid = start_run(con, 1, jid, fid, CellRunDescription("score"))
        q = {"binary": "(r + random() * 4 > 6)::INT", "likert5": "least(5, 1 + floor((r + random() * 4) / 3))",
             "numeric100": "least(100, 5 * floor((r + random() * 4) * 1.5))"}
        if name in q:
            con.execute(f"INSERT INTO verdicts (cell_run_id, pool_id, judge_id, format_id, prompt_idx, a_idx, "
                        f"value, answer, status) SELECT $rid, 1, $jid, $fid, prompt_idx, cand_idx, v, v::VARCHAR, 'ok' "
                        f"FROM (SELECT prompt_idx, cand_idx, {q[name]} AS v FROM "
                        f"(SELECT prompt_idx, cand_idx, reference AS r FROM candidates))",
                        {"rid": rid, "jid": jid, "fid": fid})
        elif name == "anchored":
            con.execute("INSERT INTO verdicts (cell_run_id, pool_id, judge_id, format_id, prompt_idx, a_idx, b_idx, "
                        "value, status) SELECT $rid, 1, $jid, $fid, prompt_idx, cand_idx, prompt_idx * 4 + 2, "
                        "least(2, greatest(-2, round((reference - 4.5) / 2 + random() - 0.5))), 'ok' "
                        "FROM candidates", {"rid": rid, "jid": jid, "fid": fid})
        else:
            con.execute("INSERT INTO verdicts (cell_run_id, pool_id, judge_id, format_id, prompt_idx, a_idx, b_idx, "
                        "value, status) SELECT $rid, 1, $jid, $fid, a.prompt_idx, a.cand_idx, b.cand_idx, "
                        "least(2, greatest(-2, round((a.reference - b.reference) / 3 + random()))), 'ok' "
                        "FROM candidates a JOIN candidates b ON a.prompt_idx = b.prompt_idx "
                        "AND a.position < b.position", {"rid": rid, "jid": jid, "fid": fid})


PAGES = {"Formats": "views/formats/page.py", "Overview": "views/overview/page.py"}


def render(app, db: Path, repeats: int, page: str = "views/formats/page.py") -> tuple[float, list[float]]:
    """`page` on `db` in a started app: the cold render (nothing cached for this database:
    Streamlit's cache, the only one, is keyed by its path), then warm repeats."""
    os.environ["JUDGEAUDIT_DB"] = str(db)
    t = time.perf_counter()
    app.switch_page(page).run()
    cold = time.perf_counter() - t
    assert not app.exception, app.exception
    warm = []
    for _ in range(repeats):
        t = time.perf_counter()
        app.switch_page(page).run()
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


def forget_derived(db: Path) -> None:
    """Delete every stored derived result (audit/derived/), as before any page was viewed."""
    from ingest.store._database import transaction, writer      # a bench writes with SQL of its own
    with writer(db) as con, transaction(con):
        con.execute("DELETE FROM derived_results")


def every_page(work: Path, big: Path, rounds: int, derived: str = "stored") -> None:
    """Each page's first view on a 3-prompt pool and on the big one, built the same way: medians, ratio.
    `derived`: 'stored' (a warm-up pass stores the derived results, then each first view starts with
    the server's caches emptied: a new server on a pool whose last run refreshed them) or 'computed'
    (the derived results deleted before each first view: the first reader computes them)."""
    import streamlit as st

    from audit import derived as derived_results
    small = work / "small.duckdb"
    small.unlink(missing_ok=True)
    build(small, 3)
    pages = sorted(p.relative_to(ROOT / "app").as_posix() for p in (ROOT / "app" / "views").glob("*/page.py"))
    app, started = start(small)
    print(f"app start on the 3-prompt pool: {started:.2f} s", flush=True)
    for db in (small, big):
        forget_derived(db)
    if derived == "stored":
        t = time.perf_counter()
        for page in pages:
            for db in (small, big):
                render(app, db, 0, page)
        print(f"warm-up (every page once on each pool: the derived results stored): {time.perf_counter() - t:.1f} s",
              flush=True)
    times = {page: {"small": [], "big": []} for page in pages}
    failed = {}
    for _ in range(rounds):
        for page in pages:
            for key, db in (("small", small), ("big", big)):
                st.cache_data.clear()
                derived_results.forget()
                if derived == "computed":
                    forget_derived(db)
                try:
                    times[page][key].append(render(app, db, 0, page)[0])
                except AssertionError as exc:
                    failed[page] = str(exc)[:200]
    print(f"{'page':32s} {'3 prompts':>10s} {'big':>10s} {'ratio':>6s}   (first view, medians of {rounds}; "
          f"derived results {derived})")
    for page, t in times.items():
        if page in failed or not t["small"] or not t["big"]:
            print(f"{page:32s} failed: {failed.get(page)}")
            continue
        a, b = statistics.median(t["small"]), statistics.median(t["big"])
        print(f"{page:32s} {a:9.2f}s {b:9.2f}s {b / a:5.1f}x")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--every-page", action="store_true", help="every page, first view, 3-prompt pool against big")
    ap.add_argument("--browser", action="store_true",
                    help="every page's first view in chromium, a fresh server per round: N prompts x 4 candidates x "
                         "10 cells against 3 prompts (tests/bench/bench_pages_browser.py)")
    ap.add_argument("--limit", type=float, default=300.0, help="--browser: seconds a page may take to draw")
    ap.add_argument("--derived", choices=("stored", "computed"), default="stored",
                    help="--every-page: derived results stored beforehand, or deleted before each first view")
    ap.add_argument("--prompts", type=int, default=250_000)
    ap.add_argument("--repeats", type=int, default=3, help="warm renders after each cold one")
    ap.add_argument("--rounds", type=int, default=3, help="cold renders of each page (alternating)")
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--skip-build", action="store_true", help="reuse WORKDIR/big.duckdb from an earlier run")
    args = ap.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="judgeaudit-app-"))
    work.mkdir(parents=True, exist_ok=True)
    big = work / "big.duckdb"
    if args.browser:
        from tests.bench.bench_pages_browser import run
        run(work, args.prompts, args.rounds, args.skip_build, args.limit)
        return
    if not (args.skip_build and big.exists()):
        big.unlink(missing_ok=True)
        t = time.perf_counter()
        build(big, args.prompts)
        print(f"built {args.prompts * 4:,} candidates x 5 formats in {time.perf_counter() - t:.1f} s")
    if args.every_page:
        every_page(work, big, args.rounds, args.derived)
        return
    from ingest.demo import seed_demo
    small, start_db = work / "demo.duckdb", work / "start.duckdb"
    for db in (small, start_db):
        db.unlink(missing_ok=True)
        seed_demo(db)
    import streamlit as st
    app, started = start(start_db)
    print(f"app start (imports, component discovery, first render on the demo): {started:.2f} s")
    times = {name: {"demo cold": [], "demo warm": [], "1M cold": [], "1M warm": []} for name in PAGES}
    for _ in range(args.rounds):       # the pages alternate, so a change in the machine's load hits both
        for name, page in PAGES.items():
            st.cache_data.clear()      # each page cold: neither reuses what the other computed
            cold_s, warm_s = render(app, small, args.repeats, page)
            demo_pool = app.session_state["pool"]
            cold_b, warm_b = render(app, big, args.repeats, page)
            assert app.session_state["pool"] == "big", app.session_state["pool"]
            for key, value in (("demo cold", [cold_s]), ("demo warm", warm_s), ("1M cold", [cold_b]),
                               ("1M warm", warm_b)):
                times[name][key] += value
    med = {name: {k: statistics.median(v) for k, v in t.items()} for name, t in times.items()}
    for name, m in med.items():
        print(f"{name} page, demo database (pool {demo_pool}): cold {m['demo cold']:.2f} s, "
              f"warm {m['demo warm']:.2f} s (medians)")
        print(f"{name} page, 1M candidates x 5 formats: cold {m['1M cold']:.2f} s "
              f"({', '.join(f'{x:.2f}' for x in times[name]['1M cold'])}), warm {m['1M warm']:.2f} s (medians)")
        print(f"{name} page, ratio 1M / demo: cold {m['1M cold'] / m['demo cold']:.1f}x, "
              f"warm {m['1M warm'] / m['demo warm']:.1f}x")
    print(f"Overview / Formats, cold on 1M candidates (medians): "
          f"{med['Overview']['1M cold'] / med['Formats']['1M cold']:.2f}x")

    # a new AppTest whose first run is the big database (it opens on the Overview, the landing
    # page), with every cache emptied; this includes the ~0.3 s of component discovery each
    # AppTest repeats, and the sidebar's pool list
    fresh = []
    for _ in range(args.rounds):
        st.cache_data.clear()
        st.cache_resource.clear()
        fresh.append(start(big)[1])
    print(f"new AppTest, first run on the 1M database (the Overview), caches emptied: median "
          f"{statistics.median(fresh):.2f} s ({', '.join(f'{x:.2f}' for x in fresh)}); that over the Formats "
          f"page's cold render: {statistics.median(fresh) / med['Formats']['1M cold']:.2f}x")


if __name__ == "__main__":
    main()
