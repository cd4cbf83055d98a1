"""Every page's first visit on the bundled demo, as a new user meets it: each round, a new database and
a fresh `judgeaudit app` on it (which seeds the demo: the server's start is timed apart, to its health
check), then the Overview (the server's first page, with its first script run and imports), then every
other page in the sidebar's order, each in a new headless chromium tab at 1400 px on the demo's
default pool (no ?pool=, as a new user opens it). Two times per page from the navigation: `drawn`,
when its script first ran to its end with a header on the page; `quiet`, when it was drawn and then
neither the script, nor Streamlit's running indicator, nor a progress bar (a derived result being
computed) showed for --quiet seconds: the page a user can read and use. A page that runs itself
again and again (an idle page that polls) is never quiet: '-' past --limit seconds. Medians of
--rounds per page.

    .venv/bin/python tests/bench/bench_first_visit.py [--rounds 3] [--tree DIR] [--out FILE.json]

--tree: the source tree the server runs (default: this one), e.g. a worktree of an earlier commit
(`git worktree add /tmp/old COMMIT`), for before -> after with two invocations.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.bench.bench_idle import serve  # noqa: E402
from tests.bench.bench_pages_browser import _STATE, ARGS, CHROMIUM  # noqa: E402

BUSY = "[data-testid='stStatusWidget'], [data-testid='stProgress']"


def sidebar_pages(tree: Path) -> list[str]:
    """The tree's pages in its sidebar's order (app/main.py's _page("folder", ...) calls), the
    default page (the Overview) first."""
    names = re.findall(r'_page\("(\w+)"', (tree / "app" / "main.py").read_text())
    return sorted(dict.fromkeys(names), key=lambda n: n != "overview")


def drawn_and_quiet(page, t0: float, quiet_s: float, limit_s: float) -> tuple[float | None, float | None]:
    """(drawn, quiet): seconds from t0 until the page's script first ran to its end with a header on
    the page, and until it was drawn and stayed quiet for quiet_s (no script running, no running
    indicator, no progress bar); None for what did not happen within limit_s."""
    drawn, quiet_since = None, None
    while time.perf_counter() - t0 < limit_s:
        state = page.evaluate(_STATE)       # "initial" until its first run, "running", then "notRunning"
        headed = page.query_selector("h1, h2, h3") is not None
        now = time.perf_counter()
        if drawn is None and state == "notRunning" and headed:
            drawn = now - t0
        busy = state != "notRunning" or page.query_selector(BUSY) is not None
        if busy or drawn is None:
            quiet_since = None
        else:
            quiet_since = quiet_since or now
            if now - quiet_since >= quiet_s:
                return drawn, quiet_since - t0
        time.sleep(0.05)
    return drawn, None


def one_round(tree: Path, names: list[str], quiet_s: float, limit_s: float) -> tuple[float, dict]:
    """A new database, a fresh server of `tree`: (its start to health, s; {page: (drawn, quiet), s or None})."""
    from playwright.sync_api import sync_playwright
    with tempfile.TemporaryDirectory(prefix="bench-visit-") as work:
        db, log = Path(work) / "demo.duckdb", Path(work) / "server.log"
        t = time.perf_counter()
        proc, url = serve(db, tree, log)
        start = time.perf_counter() - t
        out = {}
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
                for name in names:
                    tab = browser.new_page(viewport={"width": 1400, "height": 900})
                    t0 = time.perf_counter()
                    tab.goto(f"{url}/{name}")
                    out[name] = drawn_and_quiet(tab, t0, quiet_s, limit_s)
                    tab.close()
                browser.close()
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=60)
    return start, out


def _median(values: list) -> float | None:
    return statistics.median(values) if None not in values else None


def _s(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", type=Path, default=ROOT)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quiet", type=float, default=2.0, help="seconds a page stays quiet to count as ready")
    ap.add_argument("--limit", type=float, default=60.0, help="seconds a page is given to be drawn and quiet")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    tree = args.tree.resolve()
    names = sidebar_pages(tree)
    starts, times, loads = [], {n: {"drawn": [], "quiet": []} for n in names}, []
    for r in range(args.rounds):
        loads.append(os.getloadavg()[0])
        start, got = one_round(tree, names, args.quiet, args.limit)
        starts.append(start)
        for n, (drawn, quiet) in got.items():
            times[n]["drawn"].append(drawn)
            times[n]["quiet"].append(quiet)
        print(f"round {r + 1} (load average {loads[-1]:.1f}): server {start:.1f} s; " +
              ", ".join(f"{n} {_s(d)}/{_s(q)}" for n, (d, q) in got.items()), flush=True)
    medians = {n: {k: _median(v) for k, v in t.items()} for n, t in times.items()}
    print(f"\nfirst visit on the demo, tree {tree}: medians of {args.rounds} rounds, s, drawn / quiet for "
          f"{args.quiet:g} s ('-': not within {args.limit:.0f} s); server start {statistics.median(starts):.1f} s")
    for n in names:
        each = ", ".join(f"{_s(d)}/{_s(q)}" for d, q in zip(times[n]["drawn"], times[n]["quiet"]))
        print(f"  {n:12s} {_s(medians[n]['drawn']):>6s} / {_s(medians[n]['quiet']):>6s}   ({each})")
    if args.out:
        args.out.write_text(json.dumps({"tree": str(tree), "cores": os.cpu_count(), "load_average": loads,
                                        "server_start_s": starts, "times": times, "medians": medians},
                                       indent=1) + "\n")


if __name__ == "__main__":
    main()
