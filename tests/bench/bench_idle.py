"""What an open page costs the server while nothing runs, and what a run costs the pages: a fresh
`judgeaudit app` on the bundled demo, each page opened in headless chromium and left alone.

For each page, once drawn (its script finished, held 0.5 s): the server's CPU over --seconds (its
process and children, user + system, as a share of one core), and the reruns the browser asked
for (websocket frames it sent: a fragment's timed rerun is one) per 10 s. With --run, the Score
page is open while a scoring run of a simulated judge (--calls calls) runs from the command line:
the "waiting" lines the server and the run printed, and the run's reruns of the page.

    .venv/bin/python tests/bench/bench_idle.py [--tree DIR] [--pages score,curate] [--seconds 30] [--run]

--tree: the source tree the server runs (default: this one), e.g. an export of an earlier commit,
to print before and after side by side with two invocations.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.bench_pages_browser import ARGS, CHROMIUM, drawn, pages  # noqa: E402

WAITING = "is in use by another process; waiting"


def serve(db: Path, tree: Path, log: Path):
    """`judgeaudit app` of `tree` on `db`, its stderr in `log`; (process, url)."""
    from tests.conftest import free_port, wait_http
    port = free_port()
    env = {**os.environ, "JUDGEAUDIT_DB": str(db), "PYTHONPATH": str(tree)}
    exe = str(Path(sys.executable).with_name("judgeaudit"))
    proc = subprocess.Popen([exe, "app", "--port", str(port), "--address", "127.0.0.1"], env=env, cwd=tree,
                            stdout=subprocess.DEVNULL, stderr=open(log, "w"), start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    if not wait_http(url + "/_stcore/health"):
        proc.kill()
        raise RuntimeError("the dashboard did not start within 120 s")
    return proc, url


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of the process and its children so far."""
    import psutil
    procs = [psutil.Process(pid)]
    procs += procs[0].children(recursive=True)
    total = 0.0
    for p in procs:
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.NoSuchProcess:
            pass
    return total


class Frames:
    """Counts the websocket frames a page sends (its rerun requests)."""

    def __init__(self, page):
        self.sent = 0
        page.on("websocket", lambda ws: ws.on("framesent", self._count))

    def _count(self, _payload) -> None:
        self.sent += 1


def idle(url: str, pid: int, names: list[str], seconds: float, pool: str) -> dict:
    """{page: (CPU share of one core, reruns per 10 s)} with each page open alone and idle."""
    from playwright.sync_api import sync_playwright
    out = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        for name in names:
            tab = browser.new_page(viewport={"width": 1400, "height": 900})
            frames = Frames(tab)
            t0 = time.perf_counter()
            tab.goto(f"{url}/{name}?pool={pool}")
            drawn(tab, t0, 600)
            tab.wait_for_timeout(2000)        # what the first view started (a chart's second run) settles
            sent0, cpu0, w0 = frames.sent, cpu_seconds(pid), time.perf_counter()
            tab.wait_for_timeout(seconds * 1000)
            wall = time.perf_counter() - w0
            out[name] = ((cpu_seconds(pid) - cpu0) / wall, (frames.sent - sent0) * 10 / wall)
            print(f"{name:12s} CPU {100 * out[name][0]:5.1f}% of a core, {out[name][1]:4.1f} reruns / 10 s", flush=True)
            tab.close()
        browser.close()
    return out


def process_of(word: str) -> int:
    """The pid of the process whose command line holds `word`."""
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and word in (entry / "cmdline").read_bytes().decode(errors="replace"):
                return int(entry.name)
        except OSError:
            continue
    raise LookupError(word)


def during_run(url: str, db: Path, tree: Path, log: Path, latency: int, pool: str) -> dict:
    """The Score page open while a scoring run of a simulated judge makes 60 calls (likert5 and
    tournament in listing order on the five-format demo), launched as the page's Launch launches one (a
    row, then a process of the tree's code) and the page run again at once (as a click reruns it):
    the waiting lines of the server and of the run from the launch until the run's process has ended
    (its derived results stored), the page's reruns meanwhile, the run's wall time."""
    from playwright.sync_api import sync_playwright

    from app.cli import command_line, request_for
    from ingest import runs
    before = log.read_text().count(WAITING)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        tab = browser.new_page(viewport={"width": 1400, "height": 900})
        frames = Frames(tab)
        t0 = time.perf_counter()
        tab.goto(f"{url}/score?pool={pool}")
        drawn(tab, t0, 600)
        name = f"bench{int(t0)}"
        request = request_for("score", pool=pool, judge_spec=f"fake:{name}?latency_ms={latency}",
                              formats=["likert5", "tournament"], schedule="listing", concurrency=1)
        t0, sent0 = time.perf_counter(), frames.sent
        run_id = runs.launch(db, "score", [sys.executable, "-m", "app.cli", *command_line(request)], request=request,
                             pool=pool, key=runs.run_key("score", pool, name), env={"PYTHONPATH": str(tree)})
        tab.reload()
        out = runs.runs_dir(db) / f"{run_id}-score"
        pid = process_of(f"fake:{name}")             # found by its command line: no database read meanwhile
        while runs.alive(pid, None):
            tab.wait_for_timeout(500)
        wall = time.perf_counter() - t0
        reruns = frames.sent - sent0
        browser.close()
    row = runs.get_run(db, run_id)
    return {"status": row["status"], "calls": (row["progress"] or {}).get("done"), "wall_s": round(wall, 1),
            "server_waits": log.read_text().count(WAITING) - before,
            "run_waits": (out / "run.log").read_text().count(WAITING), "page_reruns": reruns}


def seed_runs(db: Path, tree: Path, n: int, pool: str) -> None:
    """n finished scoring runs of a simulated judge, launched as the Score page launches them (a row,
    a log, a process of the tree's code), so that the pages' run panels have cards to draw."""
    from app.cli import command_line, request_for
    from ingest import runs
    for k in range(n):
        request = request_for("score", pool=pool, judge_spec=f"fake:seeded{k}", formats=["likert5", "binary"])
        runs.launch(db, "score", [sys.executable, "-m", "app.cli", *command_line(request)], request=request,
                    pool=pool, key=runs.run_key("score", pool, f"seeded{k}"), env={"PYTHONPATH": str(tree)})
        pid = process_of(f"fake:seeded{k}")
        while runs.alive(pid, None):          # its process ended: the run and its derived results stored
            time.sleep(1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", type=Path, default=ROOT)
    ap.add_argument("--pages", default="")
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--pool", default="mtbench-formats")
    ap.add_argument("--run", action="store_true", help="also measure a scoring run with the Score page open")
    ap.add_argument("--latency-ms", type=int, default=500)
    ap.add_argument("--seed-runs", type=int, default=0, help="finished scoring runs to launch before measuring")
    args = ap.parse_args()
    names = [n for n in args.pages.split(",") if n] or pages()
    with tempfile.TemporaryDirectory(prefix="bench-idle-") as work:
        db, log = Path(work) / "demo.duckdb", Path(work) / "server.log"
        proc, url = serve(db, args.tree.resolve(), log)
        try:
            seed_runs(db, args.tree.resolve(), args.seed_runs, args.pool)
            if names != ["none"]:
                got = idle(url, proc.pid, names, args.seconds, args.pool)
                print(f"\nidle, {args.seconds:.0f} s a page (tree {args.tree}, {args.seed_runs} finished runs):")
                for n, (cpu, reruns) in got.items():
                    print(f"  {n:12s} {100 * cpu:5.1f}% of a core   {reruns:4.1f} reruns / 10 s")
                print(f"  waiting lines in the server's log: {log.read_text().count(WAITING)}")
            if args.run:
                r = during_run(url, db, args.tree.resolve(), log, args.latency_ms, args.pool)
                print(f"\nrun of 60 calls (simulated judge, {args.latency_ms} ms a call) with Score open: {r}")
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=60)


if __name__ == "__main__":
    main()
