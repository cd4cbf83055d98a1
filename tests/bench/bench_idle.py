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


def during_run(url: str, db: Path, tree: Path, log: Path, calls_latency: tuple[int, int], pool: str) -> dict:
    """The Score page open while `judgeaudit score` runs a simulated judge: the waiting lines of the
    server and the run, the page's reruns, the run's wall time."""
    from playwright.sync_api import sync_playwright
    _, latency = calls_latency
    exe = str(Path(sys.executable).with_name("judgeaudit"))
    env = {**os.environ, "JUDGEAUDIT_DB": str(db), "PYTHONPATH": str(tree)}
    before = log.read_text().count(WAITING)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        tab = browser.new_page(viewport={"width": 1400, "height": 900})
        frames = Frames(tab)
        t0 = time.perf_counter()
        tab.goto(f"{url}/score?pool={pool}")
        drawn(tab, t0, 600)
        # a scoring run from the command line (as the page's Launch starts one: a process of its own);
        # the page is reloaded once it is alive, so that it shows the run
        run_log = log.with_name("run.log")
        spec = f"fake:bench?latency_ms={latency}"
        t0 = time.perf_counter()
        run = subprocess.Popen([exe, "score", "--pool", pool, "--judge", spec, "--formats", "likert5,tournament",
                                "--schedule", "listing", "--concurrency", "1", "--judge-name", f"bench{int(t0)}", "--json"],
                               env=env, cwd=tree, stdout=subprocess.PIPE, stderr=open(run_log, "w"), text=True)
        tab.wait_for_timeout(3000)
        tab.reload()
        sent0 = frames.sent
        out, _ = run.communicate()
        wall = time.perf_counter() - t0
        reruns = frames.sent - sent0
        browser.close()
    made = json.loads(out).get("made") if out.strip().startswith("{") else out[-300:]
    return {"rc": run.returncode, "calls": made, "wall_s": wall, "server_waits": log.read_text().count(WAITING) - before,
            "run_waits": run_log.read_text().count(WAITING), "reruns": reruns}


def seed_runs(db: Path, tree: Path, n: int, pool: str) -> None:
    """n finished scoring runs of a simulated judge, launched as the Score page launches them (a row,
    a log, a process of the tree's code), so that the pages' run panels have cards to draw."""
    from app.cli import command_line, request_for
    from ingest import runs
    for k in range(n):
        request = request_for("score", pool=pool, judge_spec=f"fake:seeded{k}", formats=["likert5", "binary"])
        run_id = runs.launch(db, "score", [sys.executable, "-m", "app.cli", *command_line(request)],
                             request=request, pool=pool, key=runs.run_key("score", pool, f"seeded{k}"),
                             env={"PYTHONPATH": str(tree)})
        while runs.get_run(db, run_id)["status"] in runs.ACTIVE:
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
                r = during_run(url, db, args.tree.resolve(), log, (60, args.latency_ms), args.pool)
                print(f"\nrun of 60 calls (simulated judge, {args.latency_ms} ms a call) with Score open: {r}")
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=60)


if __name__ == "__main__":
    main()
