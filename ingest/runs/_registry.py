"""Background runs (score, train, evaluate, probe): one table, written only here.

A run is its own process in its own session, recorded in the `runs` table with its pid, heartbeat,
frozen config, output folder, log and status. The dashboard starts one with `launch()` (stdout and
stderr go to the run's log file, never to a pipe nobody reads); the command doing the work wraps
itself in `running()`, which adopts the launched row (or records a new one when the command was
typed in a terminal), waits its turn in a queue, refuses to share an exclusive key with a live
run, heartbeats, and closes the row as finished, cancelled or failed. Every read reconciles first:
a run whose process is gone, or whose heartbeat went stale, becomes `failed` with the reason, and
a cancelled run that did not stop within CANCEL_GRACE_S has its process group killed.

    run_id = launch(db, "train", [sys.executable, "-m", CLI, "train", "--subset", ...],
                    pool="mt", queue="train", config={"argv": [...]})
    with running(db, "train", queue="train") as run:     # inside the `judgeaudit train` process
        while work and not run.cancelled(): ...; run.progress({...})
"""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
import time
from pathlib import Path

from .._errors import UserError
from .._redact import redact
from ..store import db_path, ensure_current, next_id, reader, transaction, writer
from ._process import alive, kill_group, proc_start, spawn

STATUSES = ("queued", "running", "finished", "failed", "cancelled")
ACTIVE = ("queued", "running")
HEARTBEAT_S = 2.0           # how often a live run writes its heartbeat and progress
CANCEL_GRACE_S = 60.0       # a cancelled run that is still alive after this is killed
RUN_ENV = "JUDGEAUDIT_RUN_ID"
CANCEL_FILE = "cancel.request"   # left in a run's folder by cancel(); the run polls for it
COLUMNS = ("run_id", "kind", "status", "pool", "run_key", "queue", "pid", "pid_start", "host",
           "created_at", "started_at", "finished_at", "heartbeat_at", "cancel_requested_at",
           "config", "out_dir", "log_path", "progress", "error")


def run_key(kind: str, *parts: str) -> str:
    """The exclusive key of a run: no two live runs share one. A scoring (or probe) run holds
    ("score", pool, judge name), an evaluation ("evaluate", study)."""
    return ":".join([kind, *parts])


def stale_after_s() -> float:
    """Seconds without a heartbeat after which a live-looking run counts as hung (read at use)."""
    return float(os.environ.get("JUDGEAUDIT_STALE_S", "300"))


def queue_slots(queue: str) -> int:
    """How many runs of a queue may run at once on this machine (JUDGEAUDIT_<QUEUE>_SLOTS, default 1)."""
    return max(1, int(os.environ.get(f"JUDGEAUDIT_{queue.upper()}_SLOTS", "1")))


def runs_dir(db: str | os.PathLike | None) -> Path:
    """The folder beside the database that holds every run's output folder."""
    p = db_path(db).resolve()
    return p.with_name(p.name + ".runs")


# -- reading ---------------------------------------------------------------------------------------

def _row(values: tuple) -> dict:
    row = dict(zip(COLUMNS, values))
    for key in ("config", "progress"):
        row[key] = json.loads(row[key]) if row[key] else None
    for key in ("created_at", "started_at", "finished_at", "heartbeat_at", "cancel_requested_at"):
        if row[key] is not None:
            row[key] = row[key].isoformat(sep=" ", timespec="seconds")
    return row


def _select(con, where: str = "true", params: dict | None = None) -> list[dict]:
    rows = con.execute(f"SELECT {', '.join(COLUMNS)} FROM runs WHERE {where} ORDER BY run_id",
                       params or {}).fetchall()
    return [_row(r) for r in rows]


def _verdict_of(row: dict, now: float) -> tuple[str, str] | None:
    """(new status, reason) for an active run that is in fact dead, hung or cancelled too long."""
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


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def _now_ts() -> float:
    return time.time()


def _reconcile(con) -> None:
    """Close active runs that are dead (inside an open write connection)."""
    for row in _select(con, "status IN ('queued', 'running')"):
        verdict = _verdict_of(row, _now_ts())
        if verdict:
            status, reason = verdict
            con.execute("UPDATE runs SET status = $s, error = coalesce(error, $e), finished_at = "
                        "$now WHERE run_id = $id AND status IN ('queued', 'running')",
                        {"s": status, "e": reason if status == "failed" or "killed" in reason else None,
                         "id": row["run_id"], "now": _utcnow()})
            con.execute("UPDATE cell_runs SET status = 'failed', finished_at = current_timestamp "
                        "WHERE run_id = $id AND status = 'running'", {"id": row["run_id"]})


def _needs_reconcile(con) -> bool:
    now = _now_ts()
    return any(_verdict_of(r, now) for r in _select(con, "status IN ('queued', 'running')"))


def list_runs(db: str | os.PathLike | None, kind: str | None = None,
              pool: str | None = None) -> list[dict]:
    """Every background run (optionally of one kind or pool), oldest first, after reconciling."""
    path = db_path(db)
    if not path.exists():
        return []
    ensure_current(path)
    with reader(path) as con:
        dirty = _needs_reconcile(con)
    if dirty:
        with writer(path) as con, transaction(con):
            _reconcile(con)
    with reader(path) as con:
        rows = _select(con, "($k IS NULL OR kind = $k) AND ($p IS NULL OR pool = $p)",
                       {"k": kind, "p": pool})
    return rows


def get_run(db: str | os.PathLike | None, run_id: int) -> dict | None:
    return next((r for r in list_runs(db) if r["run_id"] == run_id), None)


def active(db: str | os.PathLike | None, key: str) -> dict | None:
    """The live run holding an exclusive key, if any (the dashboard asks before launching)."""
    return next((r for r in list_runs(db) if r["run_key"] == key and r["status"] in ACTIVE), None)


def log_tail(db: str | os.PathLike | None, run_id: int, n_chars: int = 4000) -> str:
    row = get_run(db, run_id)
    if not row or not row["log_path"] or not Path(row["log_path"]).exists():
        return ""
    with open(row["log_path"], "rb") as fh:
        fh.seek(0, os.SEEK_END)
        fh.seek(max(0, fh.tell() - n_chars))
        return fh.read().decode("utf-8", errors="replace")


# -- writing ---------------------------------------------------------------------------------------

def _holder(con, key: str, exclude: int | None) -> dict | None:
    for row in _select(con, "run_key = $k AND status IN ('queued', 'running')", {"k": key}):
        if row["run_id"] != exclude:
            return row
    return None


def _refusal(key: str, holder: dict) -> UserError:
    return UserError(
        f"another {holder['kind']} run is already working on this ({key}): run {holder['run_id']}, "
        f"process {holder['pid']} on {holder['host'] or 'this machine'}, status {holder['status']} "
        f"since {holder['started_at'] or holder['created_at']}. Wait for it to finish, or stop it "
        f"with `judgeaudit cancel {holder['run_id']}`")


def _frozen(config: dict | None) -> str:
    """A run's config as stored: JSON with credentials in URLs and key-like strings redacted (a
    command line may carry openai:MODEL@https://user:password@host/v1?api_key=...)."""
    def clean(value):
        if isinstance(value, str):
            return redact(value)
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [clean(v) for v in value]
        return value
    return json.dumps(clean(config or {}))


def _create(con, kind: str, status: str, pool: str | None, config: dict | None, key: str | None,
            queue: str | None, db: Path) -> dict:
    rid = next_id(con, "runs", "run_id")
    out = runs_dir(db) / f"{rid}-{kind}"
    con.execute("INSERT INTO runs (run_id, kind, status, pool, run_key, queue, host, config, out_dir, "
                "log_path, created_at) VALUES ($id, $kind, $status, $pool, $key, $queue, $host, $config, "
                "$out, $log, $now)",
                {"id": rid, "kind": kind, "status": status, "pool": pool, "key": key, "queue": queue,
                 "host": socket.gethostname(), "config": _frozen(config), "out": str(out),
                 "log": str(out / "run.log"), "now": _utcnow()})
    return {"run_id": rid, "out_dir": out}


def launch(db: str | os.PathLike | None, kind: str, command: list[str], *, pool: str | None = None,
           config: dict | None = None, key: str | None = None, queue: str | None = None,
           env: dict | None = None) -> int:
    """Record a run and start `command` (the caller's whole command line) for it, detached in its
    own session, its output going to the run's log file. Refused (UserError) while a live run holds
    the same key."""
    db = db_path(db).resolve()
    with writer(db) as con, transaction(con):
        _reconcile(con)
        if key and (holder := _holder(con, key, None)):
            raise _refusal(key, holder)
        made = _create(con, kind, "queued", pool, config, key, queue, db)
    out = made["out_dir"]
    out.mkdir(parents=True, exist_ok=True)
    child_env = {**os.environ, **(env or {}), RUN_ENV: str(made["run_id"]), "JUDGEAUDIT_DB": str(db),
                 "PYTHONUNBUFFERED": "1"}
    pid = spawn(command, out / "run.log", child_env)
    with writer(db) as con, transaction(con):
        con.execute("UPDATE runs SET pid = coalesce(pid, $pid), pid_start = coalesce(pid_start, $ps) "
                    "WHERE run_id = $id", {"pid": pid, "ps": proc_start(pid), "id": made["run_id"]})
    return made["run_id"]


def cancel(db: str | os.PathLike | None, run_id: int, wait_s: float = 0.0) -> dict:
    """Ask a run to stop (a training run saves its adapter first). A queued run that has no live
    process is cancelled at once. With wait_s, wait that long for it to stop, then kill it."""
    db = db_path(db).resolve()
    with writer(db) as con, transaction(con):
        rows = _select(con, "run_id = $id", {"id": run_id})
        if not rows:
            raise UserError(f"no run {run_id} (see `judgeaudit runs`)")
        row = rows[0]
        if row["status"] not in ACTIVE:
            return row
        con.execute("UPDATE runs SET cancel_requested_at = coalesce(cancel_requested_at, $now) "
                    "WHERE run_id = $id", {"id": run_id, "now": _utcnow()})
        if row["out_dir"]:
            Path(row["out_dir"]).mkdir(parents=True, exist_ok=True)
            (Path(row["out_dir"]) / CANCEL_FILE).touch()
        if not alive(row["pid"], row["pid_start"]) and row["status"] == "queued":
            con.execute("UPDATE runs SET status = 'cancelled', finished_at = $now "
                        "WHERE run_id = $id", {"id": run_id, "now": _utcnow()})
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
            with writer(db) as con, transaction(con):
                con.execute("UPDATE runs SET status = 'cancelled', finished_at = $now, "
                            "error = $e WHERE run_id = $id AND status IN ('queued', 'running')",
                            {"id": run_id, "e": f"killed: it did not stop within {wait_s:.0f} s", "now": _utcnow()})
    return get_run(db, run_id)


