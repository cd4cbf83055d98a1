"""A live run's state outside the database: the run's process keeps `live.json` in its folder (its
status, latest progress and the time it last wrote it), so that a page following the run reads a
small file and never opens the database: the page's look never waits for the run's writes, nor the
run's writes for the page (docs/command-line.md#background-runs).

The database stays the record: the file only says what changed since the page last read the runs
table. A run whose process is gone (an ended run's too: its command may store more after the run,
its derived results), or whose file went stale, is read again from the database by its page (which
reconciles a dead run there).

A run started elsewhere (a terminal, another tab) shows as a new folder beside the database
(`newest_run_id`: one listing, no database), holding its row as recorded (`row.json`, written as
the run is launched and again as its process adopts it: `started_since`), so that an idle page can
show and follow it without reading the runs table while the run writes there.
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

from ._process import alive

LIVE_FILE = "live.json"
ROW_FILE = "row.json"
ENDED = ("finished", "failed", "cancelled")


def _replace(out_dir: Path, name: str, content: dict) -> None:
    """Replace a file of the run's folder at once (a reader sees the old content or the new, never half)."""
    out_dir = Path(out_dir)
    tmp = out_dir / f".{name}.{os.getpid()}"
    try:
        tmp.write_text(json.dumps(content, default=str), encoding="utf-8")
        os.replace(tmp, out_dir / name)
    except OSError:          # a folder removed under a run: the database still has the state
        tmp.unlink(missing_ok=True)


def write_live(out_dir: Path, status: str, progress: dict | None) -> None:
    """Replace the run's live file: its status and latest progress, now, and its process."""
    _replace(out_dir, LIVE_FILE, {"status": status, "progress": progress, "written_at": time.time(),
                                  "pid": os.getpid()})


def write_row(out_dir: Path, row: dict) -> None:
    """Keep the run's row as the database has it (as launched, as its process adopted it) in its folder."""
    _replace(out_dir, ROW_FILE, row)


def live_state(row: dict, stale_s: float, now: float | None = None, settle_s: float = 10.0) -> dict:
    """A run's row (read from the database) as its live file has it now: `status` and `progress`
    from the file when it is there, and `recheck`: True when the database should be read again: the
    run's process on this machine is gone (after the run ended, once the command has also stored what
    it brings after the run, its derived results: a page reading then waits for nothing), or the run
    ended settle_s ago (a process that goes on after its run), or on another machine, or the file is
    older than stale_s. A row that is not alive is returned as it is."""
    if row.get("status") not in ("queued", "running"):
        return {**row, "recheck": False}
    now = time.time() if now is None else now
    folder = row.get("out_dir")
    try:
        state = json.loads((Path(folder) / LIVE_FILE).read_text(encoding="utf-8")) if folder else None
    except (OSError, ValueError):
        state = None
    here = not row.get("host") or row["host"] == socket.gethostname()
    pid, start = (row["pid"], row.get("pid_start")) if row.get("pid") else ((state or {}).get("pid"), None)
    gone = here and pid is not None and not alive(pid, start)
    if state is None:
        return {**row, "recheck": gone}
    ended = state.get("status") in ENDED
    age = now - float(state.get("written_at") or 0)      # an ended run's file is not written again
    return {**row, "status": state.get("status") or row["status"],
            "progress": state.get("progress") if state.get("progress") is not None else row.get("progress"),
            "recheck": gone or age > stale_s or (ended and (not here or age > settle_s))}


def _run_folders(runs_folder: Path, kind: str) -> dict[int, str]:
    """The folders of runs of `kind` in `runs_folder` (`<run id>-<kind>`, each made as its run is
    recorded): {run id: name}; none where there is no such folder yet."""
    found = {}
    try:
        with os.scandir(runs_folder) as entries:
            for entry in entries:
                head, sep, tail = entry.name.partition("-")
                if sep and tail == kind and head.isdigit():
                    found[int(head)] = entry.name
    except OSError:         # no folder yet: no run was ever recorded beside this database
        return {}
    return found


def newest_run_id(runs_folder: Path, kind: str) -> int:
    """The highest run id among the folders of runs of `kind` in `runs_folder`; 0 when there is
    none. One directory listing: what an idle page notes to notice a run started after it."""
    return max(_run_folders(runs_folder, kind), default=0)


def started_since(runs_folder: Path, kind: str, after: int, pool: str | None = None) -> list[dict]:
    """The rows of the runs of `kind` (of `pool`, when given) recorded after run `after`, newest first,
    as their folders keep them (ROW_FILE), without the database: a folder whose row is not written yet
    is left for the next look."""
    rows = []
    for run_id, name in sorted(_run_folders(runs_folder, kind).items(), reverse=True):
        if run_id <= after:
            break
        try:
            row = json.loads((Path(runs_folder) / name / ROW_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if pool is None or row.get("pool") == pool:
            rows.append(row)
    return rows
