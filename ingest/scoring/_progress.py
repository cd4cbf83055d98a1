"""Progress of a scoring run: a terminal bar on stderr and a record that the run stores with its
heartbeat in the `runs` table (ingest.runs), where the dashboard reads it.
"""

from __future__ import annotations

import os
import sys
import time


class Progress:
    line_open = False     # a terminal bar was drawn without its newline (a message must start below it)

    def __init__(self, pool: str, judge: str, total: int, cell_run_ids: list[int], show_bar: bool = True):
        self.record = {"pool": pool, "judge": judge, "cell_run_ids": cell_run_ids, "total": total, "done": 0,
                       "failed": 0, "unparsed": 0, "tokens_in": 0, "tokens_out": 0,
                       "started_at": time.time(), "updated_at": time.time(), "status": "running",
                       "rate": 0.0, "eta_s": None, "pid": os.getpid(), "failures": []}
        self.show_bar = show_bar
        self._tty = sys.stderr.isatty()
        self._last_line = 0.0
        self._expected_per_call: float | None = None

    def loading(self, what: str, since: float, expected_s: float | None, runs: int) -> None:
        """The judge is loading (phase "loading", since the process started at epoch `since`), expected
        to take expected_s seconds as measured here over `runs` runs (0: a first guess)."""
        self.record.update(phase="loading", what=what, since=since, expected_load_s=expected_s, expected_runs=runs)

    def calls_begin(self, expected_per_call_s: float | None = None) -> None:
        """The judge is ready: the rate and the ETA count from now (loading is not a slow call); until
        the first call ends, the ETA is the expected seconds per call x the calls left."""
        self.record.update(phase=None, started_at=time.time())
        self._expected_per_call = expected_per_call_s

    def count(self, status: str, error: str | None, tokens_in: int | None, tokens_out: int | None) -> None:
        r = self.record
        r["done"] += 1
        if status == "failed":
            r["failed"] += 1
            if len(r["failures"]) < 20:
                r["failures"].append(error)
        elif status != "ok":
            r["unparsed"] += 1
        r["tokens_in"] += tokens_in or 0
        r["tokens_out"] += tokens_out or 0

    def update(self, status: str = "running") -> None:
        r = self.record
        now = time.time()
        elapsed = max(now - r["started_at"], 1e-9)
        r.update(status=status, updated_at=now, rate=r["done"] / elapsed)
        left = r["total"] - r["done"]
        r["eta_s"] = left / r["rate"] if r["rate"] > 0 else (
            left * self._expected_per_call if self._expected_per_call else None)
        if self.show_bar:
            self._bar(final=status != "running")

    def _bar(self, final: bool) -> None:
        r = self.record
        total = max(r["total"], 1)
        filled = int(30 * r["done"] / total)
        eta = f"{r['eta_s']:.0f}s" if r["eta_s"] is not None else "?"
        line = (f"[{'#' * filled}{'.' * (30 - filled)}] {r['done']}/{r['total']} "
                f"{r['rate']:.1f}/s ETA {eta} failed {r['failed']} unparsed {r['unparsed']}")
        now = time.time()
        if self._tty:
            print("\r" + line, end="\n" if final else "", file=sys.stderr, flush=True)
            Progress.line_open = not final
        elif final or now - self._last_line >= 5:
            print(line, file=sys.stderr, flush=True)
            self._last_line = now


def end_open_line() -> None:
    """End a terminal progress bar's line, so that a message printed next starts on its own line."""
    if Progress.line_open:
        print(file=sys.stderr, flush=True)
        Progress.line_open = False
