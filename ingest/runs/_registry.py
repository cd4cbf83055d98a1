"""Background runs (score, train, evaluate, probe): their rules, with every read and write of the
`runs` table done by the store (ingest.store: run_rows, create_run, begin_run, ...).

A run is its own process in its own session, recorded in the `runs` table with its pid, heartbeat,
request (its config), output folder, log and status. The dashboard starts one with `launch()`
(stdout and stderr go to the run's log file, never to a pipe nobody reads); the command doing the
work wraps itself in `running()`, which adopts the launched row (or records a new one when the
command was typed in a terminal), waits its turn in a queue, refuses to share an exclusive key with
a live run, heartbeats, and closes the row as finished, cancelled or failed. Every read reconciles
first: a run whose process is gone, or whose heartbeat went stale, becomes `failed` with the
reason, and a cancelled run that did not stop within CANCEL_GRACE_S has its process group killed.

    request = RunRequest("train", {"pool": "mt", ...})
    run_id = launch(db, "train", [sys.executable, "-m", CLI, *command_line(request)], request=request,
                    pool="mt", queue="train")
    with running(db, "train", queue="train") as run:     # inside the `judgeaudit train` process
        while work and not run.cancelled(): ...; run.progress({...})
"""

from __future__ import annotations

import datetime as dt
import os
import socket
import time
from pathlib import Path

from .. import store
from .._errors import UserError
from .._redact import redact
from ..store import Database
from ._live import write_row
from ._process import alive, kill_group, proc_start, spawn
from ._request import RunRequest
from .. import settings

STATUSES = ("queued", "running", "finished", "failed", "cancelled")
ACTIVE = ("queued", "running")
HEARTBEAT_S = 2.0           # how often a live run writes its heartbeat and progress
CANCEL_GRACE_S = 60.0       # a cancelled run that is still alive after this is killed
RUN_ENV = settings.RUN_ID
CANCEL_FILE = "cancel.request"   # left in a run's folder by cancel(); the run polls for it


def run_key(kind: str, *parts: str) -> str:
    """The exclusive key of a run: no two live runs share one. A scoring (or probe) run holds
    ("score", pool, judge name), an evaluation ("evaluate", study)."""
    return ":".join([kind, *parts])


stale_after_s, queue_slots = settings.stale_after_s, settings.queue_slots


def runs_dir(db: str | os.PathLike | None) -> Path:
    """The folder beside the database that holds every run's output folder."""
    p = Database.of(db).path
    return p.with_name(p.name + ".runs")


# -- the rules the store applies inside its transactions -------------------------------------------

def _verdict_of(row: dict) -> tuple[str, str] | None:
    """(new status, reason) for an active run that is in fact dead, hung or cancelled too long."""
    now = time.time()
    if row["host"] and row["host"] != socket.gethostname():
        return None                       # another machine's process: only its heartbeat can tell
    age = now - _ts(row["created_at"])
    if row["pid"] is None:
        if age > 60:
            return "failed", "its process never started"
        return None
    if not alive(row["pid"], row["pid_start"]):
        if row["cancel_requested_at"]:
            return "cancelled", "stopped on request"
        return "failed", f"its process (pid {row['pid']}) is gone without closing the run"
    if row["cancel_requested_at"] and now - _ts(row["cancel_requested_at"]) > CANCEL_GRACE_S:
        kill_group(row["pid"])
        return "cancelled", f"killed: it did not stop within {CANCEL_GRACE_S:.0f} s of the cancel request"
    beat = row["heartbeat_at"] or row["started_at"]
    if beat and now - _ts(beat) > stale_after_s():
        return "failed", f"no heartbeat for {now - _ts(beat):.0f} s (process {row['pid']} seems hung)"
    return None


def _ts(text: str) -> float:
    """Stored times are UTC (naive in the database)."""
    return dt.datetime.fromisoformat(text).replace(tzinfo=dt.timezone.utc).timestamp()


def _refusal(key: str, holder: dict) -> UserError:
    return UserError(
        f"another {holder['kind']} run is already working on this ({key}): run {holder['run_id']}, "
        f"process {holder['pid']} on {holder['host'] or 'this machine'}, status {holder['status']} "
        f"since {holder['started_at'] or holder['created_at']}. Wait for it to finish, or stop it "
        f"with `judgeaudit cancel {holder['run_id']}`")


def _frozen(config: dict | None) -> dict:
    """A run's config as stored: credentials in URLs and key-like strings redacted (a judge SPEC
    may carry openai:MODEL@https://user:password@host/v1?api_key=...)."""
    def clean(value):
        if isinstance(value, str):
            return redact(value)
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [clean(v) for v in value]
        return value
    return clean(config or {})


# -- reading ---------------------------------------------------------------------------------------

def list_runs(db: str | os.PathLike | None, kind: str | None = None,
              pool: str | None = None) -> list[dict]:
    """Every background run (optionally of one kind or pool), oldest first, after reconciling."""
    rows = store.run_rows(db)
    if any(r["status"] in ACTIVE and _verdict_of(r) for r in rows):
        store.close_dead_runs(db, _verdict_of)
        rows = store.run_rows(db)
    return [r for r in rows if kind in (None, r["kind"]) and pool in (None, r["pool"])]


def get_run(db: str | os.PathLike | None, run_id: int) -> dict | None:
    return next((r for r in list_runs(db) if r["run_id"] == run_id), None)


def active(db: str | os.PathLike | None, key: str) -> dict | None:
    """The live run holding an exclusive key, if any (the dashboard asks before launching)."""
    return next((r for r in list_runs(db) if r["run_key"] == key and r["status"] in ACTIVE), None)


def log_tail(db: str | os.PathLike | None, run_id: int, n_chars: int = 4000, row: dict | None = None) -> str:
    """The last n_chars of the run's log; given the run's row (read already), no database is read."""
    row = row if row is not None else get_run(db, run_id)
    if not row or not row["log_path"] or not Path(row["log_path"]).exists():
        return ""
    with open(row["log_path"], "rb") as fh:
        fh.seek(0, os.SEEK_END)
        fh.seek(max(0, fh.tell() - n_chars))
        return fh.read().decode("utf-8", errors="replace")


# -- writing ---------------------------------------------------------------------------------------

def launch(db: str | os.PathLike | None, kind: str, command: list[str], *, request: RunRequest | None = None,
           pool: str | None = None, key: str | None = None, queue: str | None = None,
           env: dict | None = None) -> int:
    """Record a run with its request as config, and start `command` (the command line derived from
    the request, whole) for it, detached in its own session, its output going to the run's log
    file. Refused (UserError) while a live run holds the same key: the check and the record are
    one transaction."""
    db = Database.of(db).path
    made, holder = store.create_run(db, kind=kind, config=_frozen(request.to_config() if request else None),
                                    pool=pool, run_key=key, queue=queue, host=socket.gethostname(),
                                    runs_dir=runs_dir(db), verdict_of=_verdict_of)
    if holder:
        raise _refusal(key, holder)
    out = Path(made["out_dir"])
    out.mkdir(parents=True, exist_ok=True)
    child_env = settings.child_environment(**(env or {}), **{RUN_ENV: str(made["run_id"]), settings.DB: str(db),
                                                              "PYTHONUNBUFFERED": "1"})
    pid = spawn(command, out / "run.log", child_env)
    started = proc_start(pid)
    store.record_process(db, made["run_id"], pid, started)
    write_row(out, {**made, "pid": pid, "pid_start": started})     # a page reads it there, not in the database
    return made["run_id"]


def cancel(db: str | os.PathLike | None, run_id: int, wait_s: float = 0.0) -> dict:
    """Ask a run to stop (a training run saves its adapter first). A queued run that has no live
    process is cancelled at once. With wait_s, wait that long for it to stop, then kill it."""
    db = Database.of(db).path
    row = store.request_cancel(db, run_id, lambda r: r["status"] == "queued" and not alive(r["pid"], r["pid_start"]))
    if row is None:
        raise UserError(f"no run {run_id} (see `judgeaudit runs`)")
    if row["status"] not in ACTIVE:
        return row
    if row["out_dir"]:
        Path(row["out_dir"]).mkdir(parents=True, exist_ok=True)
        (Path(row["out_dir"]) / CANCEL_FILE).touch()
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        row = get_run(db, run_id)
        if row["status"] not in ACTIVE:
            return row
        time.sleep(0.5)
    if wait_s > 0:
        row = get_run(db, run_id)
        if row["status"] in ACTIVE and row["pid"]:
            kill_group(row["pid"])
            store.end_run(db, run_id, "cancelled", f"killed: it did not stop within {wait_s:.0f} s")
    return get_run(db, run_id)
