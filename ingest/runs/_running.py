"""Doing a run's work: `running()` adopts the launched row (or records one for a command typed in a
terminal), waits its turn in the queue, heartbeats with the latest progress, and closes the row.
Each step is one store verb, so a check and the write it allows are one transaction."""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from .. import store
from .._errors import UserError
from .._redact import redact
from ..store import Database
from ._live import write_live, write_row
from ._process import proc_start
from ._registry import (CANCEL_FILE, HEARTBEAT_S, RUN_ENV, _frozen, _refusal, _verdict_of, queue_slots,
                        runs_dir)
from ._request import REQUEST_KEYS, RunRequest, current_request
from .. import settings


LIVE_EVERY_S = 0.5        # the live file is rewritten at most this often by progress()


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
    _live_at: float = 0.0
    _stop: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def cancelled(self) -> bool:
        """True once a cancel was requested. `cancel()` leaves a file in the run's folder, so this
        costs a stat, not a database connection (which would clash with the run's own writer)."""
        if not self._cancel_seen:
            self._cancel_seen = (self.out_dir / CANCEL_FILE).exists()
        return self._cancel_seen

    def progress(self, record: dict) -> None:
        """The latest progress: in the run's live file at once (at most twice a second; a page
        following the run reads it there), in the database with the next heartbeat (every
        HEARTBEAT_S)."""
        with self._lock:
            self._progress = dict(record)
            now = time.monotonic()
            if now - self._live_at >= LIVE_EVERY_S:
                self._live_at = now
                write_live(self.out_dir, "running", self._progress)

    def _beat(self) -> bool:
        """One heartbeat; it changes nothing once the run is closed (a beat that waited for the
        database while the run closed lands on a closed row, and is dropped there)."""
        with self._lock:
            progress = self._progress
        return store.beat_run(self.db, self.id, progress)

    def _heartbeat_loop(self) -> None:
        while not self._stop.wait(HEARTBEAT_S):
            with self._lock:
                write_live(self.out_dir, "running", self._progress)    # the file says the run is alive
            with contextlib.suppress(Exception):   # a busy database delays a beat, never the work
                self._beat()


def _may_start(row: dict, live: list[dict]) -> bool:
    """A queued run starts when it is at the head of its queue and a slot is free."""
    others = [r for r in live if r["run_id"] != row["run_id"]]
    running_now = sum(r["status"] == "running" for r in others)
    older_waiting = sum(r["status"] == "queued" and r["run_id"] < row["run_id"] for r in others)
    return running_now + older_waiting < queue_slots(row["queue"])


def _config_of(request: RunRequest | None, config: dict | None):
    """The stored config, given the launched run's (None for a run typed in a terminal): the
    launched request stays the request; else this process's own. What the command resolved
    (`config`) goes beside it, under its own keys."""
    extra = dict(config or {})
    if set(extra) & set(REQUEST_KEYS):
        raise ValueError(f"running(config=...): {', '.join(REQUEST_KEYS)} are the request's own keys")

    def merged(launched: dict | None) -> dict:
        mine = request.to_config() if request else {}
        base = launched if launched and RunRequest.from_config(launched) else {**(launched or {}), **mine}
        return _frozen({**base, **extra})
    return merged


@contextlib.contextmanager
def running(db: str | os.PathLike | None, kind: str, *, pool: str | None = None,
            request: RunRequest | None = None, config: dict | None = None, key: str | None = None,
            queue: str | None = None, poll_s: float = 2.0) -> Iterator[Run]:
    """Do the work of a run: adopt the launched row ($JUDGEAUDIT_RUN_ID) or record a new one, wait
    while queued, then yield a Run. The config records `request` (default: the one the command line
    declared, ingest.runs.asked) with `config`, what the command resolved, beside it. A normal exit
    closes the run `finished` (or `cancelled` when a cancel was requested); an exception closes it
    `failed` with the error, and propagates. Refused (UserError) while another live run holds `key`:
    the check and the record are one transaction."""
    db = Database.of(db).path
    launched = settings.launched_run_id()
    row, holder, status = store.begin_run(
        db, kind=kind, launched=launched, pool=pool, run_key=key, queue=queue,
        host=socket.gethostname(), pid=os.getpid(), pid_start=proc_start(os.getpid()), runs_dir=runs_dir(db),
        config_of=_config_of(request or current_request(), config), verdict_of=_verdict_of,
        refusal=lambda h: str(_refusal(key, h)), may_start=_may_start)
    if holder:
        raise _refusal(key, holder)
    run_id = row["run_id"]
    out_dir = Path(row["out_dir"])
    out_dir.mkdir(parents=True, exist_ok=True)
    write_row(out_dir, row)          # for the pages: the run as recorded or adopted, without the database
    run = Run(run_id, db, out_dir, Path(row["log_path"]) if row["log_path"] else None)
    try:
        told = False
        while status == "queued":                # our turn in the queue
            if not told:
                print(f"judgeaudit: run {run_id} is queued behind other {queue} runs", file=sys.stderr, flush=True)
                told = True
            time.sleep(poll_s)
            if run.cancelled():
                raise Cancelled(f"run {run_id} was cancelled while it waited in the {queue} queue")
            status = store.claim_run(db, run_id, queue, _verdict_of, _may_start)
        if status != "running":
            raise UserError(f"run {run_id} was closed ({status}) while it waited in the {queue} queue")
        write_live(out_dir, "running", None)
        beat = threading.Thread(target=run._heartbeat_loop, name=f"run-{run_id}-heartbeat", daemon=True)
        beat.start()
        try:
            yield run
        finally:
            run._stop.set()
            beat.join(timeout=5)
    except BaseException as exc:
        reason = "cancelled" if isinstance(exc, (KeyboardInterrupt, Cancelled)) else None
        _close(db, run, "cancelled" if reason else "failed",
               None if reason else f"{type(exc).__name__}: {exc}" if not isinstance(exc, UserError) else str(exc))
        raise
    _close(db, run, "cancelled" if run.cancelled() else "finished", None)


def _close(db: Path, run: Run, status: str, error: str | None) -> None:
    """Close the run, finally: a run already closed (found dead by a read) stays as it was. The live
    file says it ended once the database does, so that a page reading it then finds the end there."""
    store.close_run(db, run.id, status, redact(error), run._progress)   # an exception's text may quote a server's reply
    write_live(run.out_dir, status, run._progress)
