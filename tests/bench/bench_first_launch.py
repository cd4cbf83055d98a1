"""A first launch on a fresh clone: `make app`'s install (a new .venv, what pip gets from its index or
wheel cache on this machine) and then the dashboard's start, until headless chromium shows the
Overview of the bundled demo drawn (its script finished, with its charts). Prints the seconds of
each part and their sum: what `make app` costs a newcomer before the first page.

    .venv/bin/python tests/bench/bench_first_launch.py [--commit HEAD] [--workdir DIR]

(`make app` itself serves on port 8501; here the same install target is made, then `judgeaudit app`
on a free port, so that a dashboard already on 8501 does not stand in the way.)
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.bench_pages_browser import ARGS, CHROMIUM, drawn  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--commit", default="HEAD")
    ap.add_argument("--workdir", type=Path)
    ap.add_argument("--install-target", default=".venv/.app-stamp", help="the Makefile target `make app` installs by")
    args = ap.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="first-launch-"))
    clone = work / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "--quiet", args.commit], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    t0 = time.perf_counter()
    subprocess.run(["make", args.install_target], cwd=clone, env=env, check=True)
    install = time.perf_counter() - t0
    print(f"make {args.install_target}: {install:.0f} s", flush=True)

    from playwright.sync_api import sync_playwright

    from tests.conftest import free_port, wait_http
    port = free_port()
    t1 = time.perf_counter()
    proc = subprocess.Popen([str(clone / ".venv" / "bin" / "judgeaudit"), "app", "--port", str(port), "--address",
                             "127.0.0.1"], cwd=clone, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}"
        if not wait_http(url + "/_stcore/health", seconds=600):
            raise RuntimeError("the dashboard did not start within 600 s")
        serving = time.perf_counter() - t1
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            t2 = time.perf_counter()
            page.goto(url)
            drawn(page, t2, 900)
            page.wait_for_selector(".vega-embed", timeout=600_000)
            overview = time.perf_counter() - t2
            browser.close()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=60)
    print(f"install {install:.0f} s + dashboard serving {serving:.0f} s + Overview drawn {overview:.0f} s = "
          f"{install + serving + overview:.0f} s ({(install + serving + overview) / 60:.1f} min) from `make app` to the "
          f"Overview (commit {args.commit}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
