"""Doing a run's work: `running()` adopts the launched row (or records one for a command typed in a
terminal), waits its turn in the queue, heartbeats with the latest progress, and closes the row."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from .._errors import UserError
from .._redact import redact
from ..store import db_path, transaction, writer
from ._process import proc_start
from ._registry import (CANCEL_FILE, HEARTBEAT_S, RUN_ENV, _create, _frozen, _holder, _reconcile, _refusal,
                        _select, _utcnow, queue_slots)


class Cancelled(UserError):
    """A queued run was cancelled before its turn came: it ends `cancelled`, having done nothing."""


@dataclass
class Run:
    """The run a process is doing: poll cancelled() between steps, report progress()."""
    id: int
    db: Path
    out_dir: Path
    log_path: Path | None
    _progress: dict | None = None
    _cancel_seen: bool = False
    _stop: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def cancelled(self) -> bool:
        """True once a cancel was requested. `cancel()` leaves a file in the run's folder, so this
        costs a stat, not a database connection (which would clash with the run's own writer)."""
        if not self._cancel_seen:
            self._cancel_seen = (self.out_dir / CANCEL_FILE).exists()
        return self._cancel_seen

    def progress(self, record: dict) -> None:
        """The latest progress, written with the next heartbeat (every HEARTBEAT_S)."""
        with self._lock:
            self._progress = dict(record)

    def _beat(self) -> None:
        with self._lock:
            progress = json.dumps(self._progress) if self._progress is not None else None
        with writer(self.db) as con, transaction(con):
            con.execute("UPDATE runs SET heartbeat_at = $now, progress = coalesce($p, progress) "
                        "WHERE run_id = $id", {"p": progress, "id": self.id, "now": _utcnow()})

    def _heartbeat_loop(self) -> None:
        while not self._stop.wait(HEARTBEAT_S):
            with contextlib.suppress(Exception):   # a busy database delays a beat, never the work
                self._beat()


def _claim(con, run_id: int, queue: str | None) -> bool:
    """Start a queued run when it is at the head of its queue and a slot is free."""
    if queue:
        ahead = _select(con, "queue = $q AND status IN ('queued', 'running') AND run_id <> $id",
                        {"q": queue, "id": run_id})
        running_now = sum(r["status"] == "running" for r in ahead)
        older_waiting = sum(r["status"] == "queued" and r["run_id"] < run_id for r in ahead)
        if running_now + older_waiting >= queue_slots(queue):
            return False
    con.execute("UPDATE runs SET status = 'running', started_at = $now, "
                "heartbeat_at = $now WHERE run_id = $id", {"id": run_id, "now": _utcnow()})
    return True


@contextlib.contextmanager
def running(db: str | os.PathLike | None, kind: str, *, pool: str | None = None,
            config: dict | None = None, key: str | None = None, queue: str | None = None,
            poll_s: float = 2.0) -> Iterator[Run]:
    """Do the work of a run: adopt the launched row ($JUDGEAUDIT_RUN_ID) or record a new one, wait
    while queued, then yield a Run. A normal exit closes it `finished` (or `cancelled` when a cancel
    was requested); an exception closes it `failed` with the error, and propagates."""
    db = db_path(db).resolve()
    me, me_start, host = os.getpid(), proc_start(os.getpid()), socket.gethostname()
    launched = os.environ.get(RUN_ENV)
    with writer(db) as con, transaction(con):
        _reconcile(con)
        row = None
        if launched:
            rows = _select(con, "run_id = $id AND kind = $kind", {"id": int(launched), "kind": kind})
            row = rows[0] if rows and rows[0]["status"] == "queued" else None
        holder = _holder(con, key, row["run_id"] if row else None) if key else None
        if holder and row:
            con.execute("UPDATE runs SET status = 'failed', finished_at = $now, error = $e "
                        "WHERE run_id = $id", {"e": str(_refusal(key, holder)), "id": row["run_id"], "now": _utcnow()})
    if holder:
        raise _refusal(key, holder)
    with writer(db) as con, transaction(con):
        if row is None:
            made = _create(con, kind, "queued", pool, config, key, queue, db)
            run_id, out_dir, log_path = made["run_id"], made["out_dir"], None
            con.execute("UPDATE runs SET log_path = NULL WHERE run_id = $id", {"id": run_id})
        else:
            run_id, out_dir, log_path = row["run_id"], Path(row["out_dir"]), Path(row["log_path"])
            if config:
                merged = {**(row["config"] or {}), **config}
                con.execute("UPDATE runs SET config = $c WHERE run_id = $id",
                            {"c": _frozen(merged), "id": run_id})
        con.execute("UPDATE runs SET pid = $pid, pid_start = $ps, host = $host, pool = coalesce(pool, $pool) "
                    "WHERE run_id = $id", {"pid": me, "ps": me_start, "host": host, "pool": pool, "id": run_id})
        started = _claim(con, run_id, queue)
    out_dir.mkdir(parents=True, exist_ok=True)
    run = Run(run_id, db, out_dir, log_path)
    try:
        told = False
        while not started:                      # our turn in the queue
            if not told:
                print(f"judgeaudit: run {run_id} is queued behind other {queue} runs", file=sys.stderr, flush=True)
                told = True
            time.sleep(poll_s)
            if run.cancelled():
                raise Cancelled(f"run {run_id} was cancelled while it waited in the {queue} queue")
            with writer(db) as con, transaction(con):
                _reconcile(con)
                started = _claim(con, run_id, queue)
        beat = threading.Thread(target=run._heartbeat_loop, name=f"run-{run_id}-heartbeat", daemon=True)
        beat.start()
        try:
            yield run
        finally:
            run._stop.set()
            beat.join(timeout=5)
    except BaseException as exc:
        reason = "cancelled" if isinstance(exc, (KeyboardInterrupt, Cancelled)) else None
        _close(db, run_id, "cancelled" if reason else "failed",
               None if reason else f"{type(exc).__name__}: {exc}" if not isinstance(exc, UserError) else str(exc),
               run._progress)
        raise
    _close(db, run_id, "cancelled" if run.cancelled() else "finished", None, run._progress)


def _close(db: Path, run_id: int, status: str, error: str | None, progress: dict | None = None) -> None:
    error = redact(error)      # an exception's text may quote a server's reply
    with writer(db) as con, transaction(con):
        con.execute("UPDATE runs SET status = $s, error = $e, finished_at = $now, "
                    "heartbeat_at = $now, progress = coalesce($p, progress) WHERE run_id = $id",
                    {"s": status, "e": error, "p": json.dumps(progress) if progress is not None else None,
                     "id": run_id, "now": _utcnow()})
