"""Every page's first view in chromium (issue 29: "every page at 10M"), run by `bench_app.py --browser`:
a pool of N prompts x 4 candidates scored in 10 cells (two judges x the five built-in formats) against
a 3-prompt pool built and scored the same way, each in its own database whose derived results the run
that brought the verdicts stored (audit.derived.refresh, what `judgeaudit import-verdicts` and the
others do; its time is printed). Each round starts a fresh `judgeaudit app` server per database (it
has computed nothing), warms it on a 2-prompt pool of its own (Streamlit's imports and first script
run, paid once by any server), then opens every page on the pool in a new headless chromium tab, in
turn, and times it from navigation until the page's script has finished (Streamlit's
`data-test-script-state` back to not running, held 0.5 s) with its header drawn. Medians of --rounds
per page and database, and their ratio.

    .venv/bin/python tests/bench/bench_app.py --browser --prompts 250000 --rounds 3 [--workdir DIR [--skip-build]]

(--prompts 2500000: the issue's 10M candidates x 10 cells.)
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--no-first-run", "--disable-sync", "--disable-quic"]
CHROMIUM = "/usr/bin/chromium"
# the page's script state: Streamlit writes it on the app's root element
_STATE = "() => { const a = document.querySelector('.stApp'); return a ? a.getAttribute('data-test-script-state') : null; }"


def pages() -> list[str]:
    """Every page's address (its folder under app/views), Curate & Train included."""
    return sorted(p.parent.name for p in (ROOT / "app" / "views").glob("*/page.py"))


def prepare(db: Path, n_prompts: int, fresh: bool) -> float:
    """The database: pool 'big' (bench_app.build, two judges), pool 'warm' (2 prompts, to start a
    server on), the derived results of both stored as a command that brings verdicts leaves them;
    the seconds the refresh of 'big' took."""
    from audit.derived import refresh as refresh_results
    from train.derived_results import DERIVED_RESULTS

    def refresh(db, pool):
        return refresh_results(db, pool, DERIVED_RESULTS)
    from ingest.store import import_pool
    from tests.bench.bench_app import build
    from tests.fixtures import synthetic_pool, write_jsonl
    if fresh or not db.exists():
        db.unlink(missing_ok=True)
        build(db, n_prompts, n_judges=2)
        import_pool(db, write_jsonl(db.with_suffix(".warm.jsonl"), synthetic_pool(2, seed=1)), "warm")
    refresh(str(db), "warm")
    t = time.perf_counter()
    refresh(str(db), "big")
    return time.perf_counter() - t


def _serve(db: Path):
    from tests.conftest import free_port, wait_http
    port = free_port()
    exe = str(Path(sys.executable).with_name("judgeaudit"))
    env = {**os.environ, "JUDGEAUDIT_DB": str(db), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([exe, "app", "--port", str(port), "--address", "127.0.0.1"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    if not wait_http(url + "/_stcore/health"):
        proc.kill()
        raise RuntimeError("the dashboard did not start within 120 s")
    return proc, url


def drawn(page, t0: float, limit_s: float) -> float:
    """Seconds from t0 until the page's script has run to its end (the state was 'running', then is
    not for 0.5 s) with a header on the page; raises TimeoutError past limit_s."""
    ran, quiet_since = False, None
    while time.perf_counter() - t0 < limit_s:
        state = page.evaluate(_STATE)
        if state == "running":
            ran, quiet_since = True, None
        elif ran and state and page.query_selector("h1, h2, h3"):
            now = time.perf_counter()
            quiet_since = quiet_since or now
            if now - quiet_since >= 0.5:
                return quiet_since - t0
        time.sleep(0.05)
    raise TimeoutError(f"not drawn within {limit_s:.0f} s")


def first_views(db: Path, names: list[str], limit_s: float) -> dict[str, float | None]:
    """Each page's first view on pool 'big' in a fresh server for `db` (None: not drawn in limit_s)."""
    import signal

    from playwright.sync_api import sync_playwright
    proc, url = _serve(db)
    out = {}
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
            warm = browser.new_page(viewport={"width": 1300, "height": 900})
            t0 = time.perf_counter()
            warm.goto(f"{url}/formats?pool=warm")
            drawn(warm, t0, limit_s)
            warm.close()
            for name in names:
                tab = browser.new_page(viewport={"width": 1300, "height": 900})
                t0 = time.perf_counter()
                tab.goto(f"{url}/{name}?pool=big")
                try:
                    out[name] = drawn(tab, t0, limit_s)
                except TimeoutError:
                    out[name] = None
                tab.close()
            browser.close()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=60)
    return out


def run(work: Path, n_prompts: int, rounds: int, skip_build: bool, limit_s: float = 300.0) -> dict:
    """Build (or reuse), then --rounds of first views on both databases, alternating; prints and returns
    {page: (small median, big median, ratio)}."""
    small, big = work / "small.duckdb", work / "big.duckdb"
    t = time.perf_counter()
    prepare(small, 3, fresh=True)
    derive_big = prepare(big, n_prompts, fresh=not skip_build)
    print(f"databases ready in {time.perf_counter() - t:.1f} s; pool 'big': {n_prompts * 4:,} candidates x 10 cells; "
          f"its derived results stored in {derive_big:.1f} s (what the run that brings verdicts adds)", flush=True)
    names = pages()
    times = {n: {"small": [], "big": []} for n in names}
    for r in range(rounds):
        for key, db in (("small", small), ("big", big)):
            got = first_views(db, names, limit_s)
            for n, s in got.items():
                times[n][key].append(s)
            print(f"round {r + 1} {key}: " + ", ".join(f"{n} {'-' if s is None else f'{s:.2f}'}" for n, s in got.items()),
                  flush=True)
    out = {}
    print(f"{'page':14s} {'3 prompts':>10s} {f'{n_prompts * 4:,} cands':>14s} {'ratio':>6s}   "
          f"(chromium first view, medians of {rounds}; None: not drawn in {limit_s:.0f} s)")
    for n in names:
        a, b = ([x for x in times[n][k] if x is not None] for k in ("small", "big"))
        if len(a) < rounds or len(b) < rounds:
            print(f"{n:14s} not drawn in {limit_s:.0f} s in {rounds - len(a)} small, {rounds - len(b)} big rounds")
            out[n] = None
            continue
        ma, mb = statistics.median(a), statistics.median(b)
        out[n] = (ma, mb, mb / ma)
        print(f"{n:14s} {ma:9.2f}s {mb:13.2f}s {mb / ma:5.2f}x")
    return out
