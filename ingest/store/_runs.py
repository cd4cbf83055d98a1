"""Background runs in the store (the `runs` table): every read and write of it, each write one
transaction, with its SQL in `sql/runs_*.sql`.

The rules stay with `ingest.runs` and come in as functions: which live run is dead (`verdict_of`,
row -> (status, reason) or None), whether a queued run may start (`may_start`, row and the live runs
of its queue -> bool), what a refusal says. Here they run inside the transaction that acts on them,
so a check and the write it allows are one unit that no other process can split:

    made, holder = create_run(db, kind="score", config={...}, run_key="score:p:j", ...)
    if holder: ...refused...      # nothing was written
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import Callable

from . import _sql
from ._database import ensure_current, next_id, reader, transaction, writer
from .database import Database

COLUMNS = ("run_id", "kind", "status", "pool", "run_key", "queue", "pid", "pid_start", "host",
           "created_at", "started_at", "finished_at", "heartbeat_at", "cancel_requested_at",
           "config", "out_dir", "log_path", "progress", "error")
_TIMES = ("created_at", "started_at", "finished_at", "heartbeat_at", "cancel_requested_at")

Verdict = Callable[[dict], "tuple[str, str] | None"]


def _utcnow() -> dt.datetime:
    """Stored times are UTC, naive in the database."""
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def _row(values: tuple) -> dict:
    row = dict(zip(COLUMNS, values))
    for key in ("config", "progress"):
        row[key] = json.loads(row[key]) if row[key] else None
    for key in _TIMES:
        if row[key] is not None:
            row[key] = row[key].isoformat(sep=" ", timespec="seconds")
    return row


def _select(con, run_id: int | None = None, kind: str | None = None, pool: str | None = None,
            run_key: str | None = None, queue: str | None = None, live: bool = False) -> list[dict]:
    found = _sql.rows(con, "runs_list", run_id=run_id, kind=kind, pool=pool, run_key=run_key, queue=queue,
                      live=live)
    return [_row(r) for r in found]


def _key_holder(con, run_key: str | None, exclude: int | None) -> dict | None:
    """The live run holding an exclusive key, other than `exclude`."""
    if not run_key:
        return None
    return next((r for r in _select(con, run_key=run_key, live=True) if r["run_id"] != exclude), None)


def _end_dead(con, verdict_of: Verdict) -> int:
    """End every live run that verdict_of finds dead, and fail the cell runs it left running."""
    ended = 0
    for row in _select(con, live=True):
        verdict = verdict_of(row)
        if verdict:
            status, reason = verdict
            _sql.execute(con, "runs_end_live", run_id=row["run_id"], status=status, now=_utcnow(),
                         error=reason if status == "failed" or "killed" in reason else None)
            _sql.execute(con, "runs_fail_cell_runs", run_id=row["run_id"])
            ended += 1
    return ended


def _insert(con, kind: str, config: dict, pool: str | None, run_key: str | None, queue: str | None,
            host: str, runs_dir: Path, with_log: bool) -> dict:
    run_id = next_id(con, "runs")
    out = runs_dir / f"{run_id}-{kind}"
    _sql.execute(con, "runs_insert", run_id=run_id, kind=kind, pool=pool, run_key=run_key, queue=queue, host=host,
                 config=json.dumps(config), out_dir=str(out), log_path=str(out / "run.log") if with_log else None,
                 now=_utcnow())
    return _select(con, run_id=run_id)[0]


def _claim(con, run_id: int, queue: str | None, may_start: Callable[[dict, list[dict]], bool]) -> str:
    (row,) = _select(con, run_id=run_id)
    if row["status"] == "queued" and (not queue or may_start(row, _select(con, queue=queue, live=True))):
        _sql.execute(con, "runs_start", run_id=run_id, now=_utcnow())
        return "running"
    return row["status"]


# -- reading ---------------------------------------------------------------------------------------

def run_rows(db: str | os.PathLike | None, *, run_id: int | None = None, kind: str | None = None,
             pool: str | None = None, run_key: str | None = None, live: bool = False) -> list[dict]:
    """The runs matching every filter given, oldest first, as dicts of COLUMNS (config and progress
    decoded, times as 'YYYY-MM-DD HH:MM:SS' UTC); [] when there is no database yet."""
    path = Database.of(db).path
    if not path.exists():
        return []
    ensure_current(path)
    with reader(path) as con:
        return _select(con, run_id=run_id, kind=kind, pool=pool, run_key=run_key, live=live)


# -- writing: each verb one transaction ------------------------------------------------------------

def close_dead_runs(db: str | os.PathLike | None, verdict_of: Verdict) -> int:
    """End the live runs that verdict_of finds dead, hung or cancelled too long (their running cell
    runs fail with them); how many."""
    with writer(db) as con, transaction(con):
        return _end_dead(con, verdict_of)


def create_run(db: str | os.PathLike | None, *, kind: str, config: dict, pool: str | None, run_key: str | None,
               queue: str | None, host: str, runs_dir: Path, verdict_of: Verdict) -> tuple[dict | None, dict | None]:
    """(the new queued run, None), or (None, the live run holding run_key) with nothing written: the
    dead runs are ended, the key checked and the run recorded in one transaction."""
    with writer(db) as con, transaction(con):
        _end_dead(con, verdict_of)
        holder = _key_holder(con, run_key, None)
        if holder:
            return None, holder
        return _insert(con, kind, config, pool, run_key, queue, host, runs_dir, with_log=True), None


def record_process(db: str | os.PathLike | None, run_id: int, pid: int, pid_start: int | None) -> None:
    """The process a launch started for the run (kept if the process recorded itself first)."""
    with writer(db) as con, transaction(con):
        _sql.execute(con, "runs_record_process", run_id=run_id, pid=pid, pid_start=pid_start)


def begin_run(db: str | os.PathLike | None, *, kind: str, launched: int | None, pool: str | None,
              run_key: str | None, queue: str | None, host: str, pid: int, pid_start: int | None,
              runs_dir: Path, config_of: Callable[[dict | None], dict], verdict_of: Verdict,
              refusal: Callable[[dict], str], may_start: Callable[[dict, list[dict]], bool]
              ) -> tuple[dict, dict | None, str]:
    """The start of a run's process, in one transaction: end the dead runs; adopt the launched run
    (queued, of this kind) or record a new one; refuse while another live run holds run_key (a
    launched run then fails with refusal(holder)); record this process and the config
    (config_of(the launched run's config, or None)); start the run if its queue lets it.

    Returns (the run, the holder or None, its status now: 'running', or 'queued' to wait its turn)."""
    with writer(db) as con, transaction(con):
        _end_dead(con, verdict_of)
        row = None
        if launched is not None:
            found = _select(con, run_id=launched, kind=kind)
            row = found[0] if found and found[0]["status"] == "queued" else None
        holder = _key_holder(con, run_key, row["run_id"] if row else None)
        if holder:
            if row:
                _sql.execute(con, "runs_end_live", run_id=row["run_id"], status="failed", error=refusal(holder),
                             now=_utcnow())
            return row, holder, "failed"
        if row is None:
            row = _insert(con, kind, {}, pool, run_key, queue, host, runs_dir, with_log=False)
            config = config_of(None)
        else:
            config = config_of(row["config"])
        _sql.execute(con, "runs_adopt", run_id=row["run_id"], pid=pid, pid_start=pid_start, host=host, pool=pool,
                     config=json.dumps(config))
        status = _claim(con, row["run_id"], queue, may_start)
        return _select(con, run_id=row["run_id"])[0], None, status


def claim_run(db: str | os.PathLike | None, run_id: int, queue: str | None, verdict_of: Verdict,
              may_start: Callable[[dict, list[dict]], bool]) -> str:
    """A queued run's next try at its turn, in one transaction: end the dead runs, then start it if
    may_start allows. Its status after: 'running', 'queued' (wait on), or how it was closed meanwhile."""
    with writer(db) as con, transaction(con):
        _end_dead(con, verdict_of)
        return _claim(con, run_id, queue, may_start)


def request_cancel(db: str | os.PathLike | None, run_id: int, stop_now: Callable[[dict], bool]) -> dict | None:
    """Ask a live run to stop (the time of the first request is kept); a run for which stop_now(row)
    holds (queued with no live process) is cancelled at once. The run as it was before; None if
    there is no such run."""
    with writer(db) as con, transaction(con):
        found = _select(con, run_id=run_id)
        if not found:
            return None
        row = found[0]
        if row["status"] in ("queued", "running"):
            now = _utcnow()
            _sql.execute(con, "runs_request_cancel", run_id=run_id, now=now)
            if stop_now(row):
                _sql.execute(con, "runs_end_live", run_id=run_id, status="cancelled", error=None, now=now)
        return row


def end_run(db: str | os.PathLike | None, run_id: int, status: str, error: str | None) -> bool:
    """End a live run from outside its process (e.g. cancelled, its process killed); False if it
    was closed already."""
    with writer(db) as con, transaction(con):
        return _changed(_sql.execute(con, "runs_end_live", run_id=run_id, status=status, error=error, now=_utcnow()))


def beat_run(db: str | os.PathLike | None, run_id: int, progress: dict | None) -> bool:
    """A live run's heartbeat with its latest progress (None keeps the last); False, and nothing
    written, once the run is closed."""
    with writer(db) as con, transaction(con):
        return _changed(_sql.execute(con, "runs_beat", run_id=run_id, now=_utcnow(),
                                     progress=json.dumps(progress) if progress is not None else None))


def close_run(db: str | os.PathLike | None, run_id: int, status: str, error: str | None,
              progress: dict | None) -> bool:
    """Close a live run, finally: False, and nothing written, when it was closed already."""
    with writer(db) as con, transaction(con):
        return _changed(_sql.execute(con, "runs_close", run_id=run_id, status=status, error=error, now=_utcnow(),
                                     progress=json.dumps(progress) if progress is not None else None))


def _changed(cursor) -> bool:
    """Whether an UPDATE changed a row (DuckDB returns the count as its one row)."""
    found = cursor.fetchall()
    return bool(found and found[0][0])
