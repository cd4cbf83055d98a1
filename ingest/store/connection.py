"""Finding and opening the DuckDB file: the one path rule, the one lock-waiting rule, the one pool
lookup. The read side of the store, and the only module of `ingest` that `audit` imports
(with the error type it raises).

DuckDB allows one read-write process or many read-only ones. Every connection is short-lived (a
long pass may keep one read-only connection open beside them: `holding`); a
process that finds the file locked waits with exponential backoff and says so on stderr.
"""

from __future__ import annotations

import contextlib
import os
import random
import sys
import threading
import time
from pathlib import Path
from typing import Iterator

import duckdb

from .. import settings
from .._errors import UserError


# One connection of this package open at a time in a process. Threads of one process (a run's
# writer, its heartbeat, the dashboard's sessions) would otherwise share one DuckDB instance, where
# registering a Python table in one thread while another opens or closes a connection fails
# ("Table Function with name python_arrow_scan does not exist"), and a read-only connection cannot
# open beside a read-write one. Connections are short-lived, so waiting here costs little.
IN_PROCESS = threading.RLock()


# The read-only connection a `holding` block keeps open per database file (its path): while it is open,
# every short-lived read-only connection of this process to that file joins its DuckDB instance, so
# the blocks one read brought into the instance's buffer pool are there for the next, not read from
# the file and checksummed again (a refresh reads the same verdicts for many results). A writer of
# this process closes it for its write and opens it again after (`released`).
_HELD: dict[str, duckdb.DuckDBPyConnection] = {}


# Every connection's settings (one set: DuckDB refuses a second connection to an open file with other
# settings). Extensions are never downloaded: the ones the store uses are linked into the library,
# but DuckDB 2 replays a killed writer's log through `core_functions` and, left to itself, tries
# to download it first, which fails offline, so the file would not open after a kill.
CONFIG = {"autoinstall_known_extensions": False}


@contextlib.contextmanager
def holding(path: Path) -> Iterator[None]:
    """While the block runs, keep one read-only connection to the file open in this process (see
    _HELD). Other processes' writers wait meanwhile (the file's shared lock), as they wait for any
    reader; this process's writers do not (`released`). Nested blocks on one file keep the first's."""
    key = str(path)
    with IN_PROCESS:                     # not held while the block runs: other threads read meanwhile
        nested = key in _HELD
        if not nested:
            _HELD[key] = open_with_retry(path, read_only=True)
    if nested:
        yield
        return
    try:
        yield
    finally:
        with IN_PROCESS:
            con = _HELD.pop(key, None)
            if con is not None:
                con.close()


@contextlib.contextmanager
def released(path: Path) -> Iterator[None]:
    """Under IN_PROCESS: the file's held connection (if a `holding` block keeps one) closed for the
    block, so that a read-write connection may open (DuckDB refuses read-only and read-write
    connections to one file side by side in a process), and opened again after it."""
    con = _HELD.pop(str(path), None)
    if con is None:
        yield
        return
    con.close()
    try:
        yield
    finally:
        _HELD[str(path)] = open_with_retry(path, read_only=True)


def missing_database(path: Path) -> str:
    """What a reader says when the file is not there."""
    return f"{path}: no such database (run `judgeaudit demo` for the bundled demo, import a pool first, or pass --db)"


def _is_lock_error(exc: Exception) -> bool:
    """Another process holds the file, or another connection of this process holds it in the other
    mode (DuckDB refuses read-only and read-write connections to one file side by side in a process):
    both pass when that connection closes, and connections here are short-lived."""
    text = str(exc).lower()
    return ("lock" in text and ("conflicting" in text or "could not set" in text)) \
        or "different configuration" in text


def open_with_retry(path: Path, read_only: bool, timeout_s: float | None = None,
                    notify=None) -> duckdb.DuckDBPyConnection:
    """Connect, waiting (exponential backoff with jitter) while another process holds the lock,
    up to timeout_s (default: $JUDGEAUDIT_LOCK_TIMEOUT as it is now)."""
    timeout_s = settings.lock_timeout_s() if timeout_s is None else timeout_s
    notify = notify or (lambda msg: print(msg, file=sys.stderr, flush=True))
    deadline = time.monotonic() + timeout_s
    delay, told = 0.05, False
    while True:
        try:
            con = duckdb.connect(str(path), read_only=read_only, config=CONFIG)
            # DuckDB's own progress bar draws on stdout past 2 s, inside a command's --json output
            con.execute("SET enable_progress_bar = false")
            return con
        except (duckdb.IOException, duckdb.ConnectionException) as exc:
            if not _is_lock_error(exc) or time.monotonic() > deadline:
                raise
            if not told:
                notify(f"judgeaudit: {path} is in use by another process; waiting for it "
                       f"(up to {timeout_s:.0f} s)...")
                told = True
            time.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, 2.0)


@contextlib.contextmanager
def read_only(path: Path, timeout_s: float | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """A short-lived read-only connection to an existing file (callers check that it exists, and
    say so in their own error type)."""
    with IN_PROCESS:
        con = open_with_retry(path, read_only=True, timeout_s=timeout_s)
        try:
            yield con
        finally:
            con.close()


def find_pool(con: duckdb.DuckDBPyConnection, name: str) -> int | None:
    """The pool's id, or None."""
    rows = con.execute("SELECT pool_id FROM pools WHERE name = $name", {"name": name}).fetchall()
    return rows[0][0] if rows else None


def pool_id(con: duckdb.DuckDBPyConnection, name: str, error: type[UserError] = UserError) -> int:
    """The pool's id; when there is no such pool, `error` (a UserError, or the audit's subclass of
    it) naming the known pools."""
    pid = find_pool(con, name)
    if pid is None:
        names = [r[0] for r in con.execute("SELECT name FROM pools ORDER BY name").fetchall()]
        raise error(f"no pool named '{name}' (known: {', '.join(names) or 'none'})")
    return pid


def verdict_source(con: duckdb.DuckDBPyConnection,
                   judgings: tuple[tuple[str, str], ...] | None = None) -> dict[int, str]:
    """Make the temp view `verdict_source` on a read-only connection: one row per judge call, the
    stored verdicts and the rows of every pool's attached Parquet files (attach-verdicts), read
    where they lie; with `judgings` ((judge, format) pairs), only those judgings' calls. Beside it,
    `verdict_values`: the same calls with their ids and what the audit scores them by alone (decoding,
    sample, value, expected): an attached call is then its row of attached_ids, its file not read. A file
    removed or changed since it was attached (size, modification time or row count) is left out,
    and its pool named in the returned {pool_id: message}: the audit refuses that pool until the files are attached again or detached."""
    from . import _sql   # on first use: `import audit` loads this module alone of the store
    broken = _all_verdicts(con)
    scope = list(judgings or [])
    _sql.execute(con, "scope_judgings", judges=[j for j, _ in scope], formats=[f for _, f in scope])
    _sql.script(con, "verdict_source_scoped" if judgings is not None else "verdict_source_whole")
    _sql.script(con, "decoding_codes")   # the decoding as a small code and back, for the audit's grouped reads
    return broken


def _all_verdicts(con: duckdb.DuckDBPyConnection) -> dict[int, str]:
    """The temp views `verdict_source_all` and `verdict_values_all` (every judge's calls, stored and attached); the pools whose
    attached files changed, with what to say (verdict_source)."""
    from . import _sql
    try:
        files = _sql.rows(con, "attached_file_list")
    except duckdb.CatalogException:      # a database before migration 016 (a reader never migrates)
        files = []
    if not files:
        _sql.script(con, "verdict_source_stored")
        return {}
    broken: dict[int, str] = {}
    for pid, pool, path, size, mtime_ns, *_ in files:
        try:
            st = os.stat(path)
        except OSError:
            broken.setdefault(pid, _changed(path, pool, "is gone"))
            continue
        if (st.st_size, st.st_mtime_ns) != (size, mtime_ns):
            broken.setdefault(pid, _changed(path, pool, "has changed (size or modification time)"))
    intact = [f for f in files if f[0] not in broken]
    if intact:
        try:
            counts = dict(_sql.rows(con, "parquet_row_counts", files=[f[2] for f in intact]))
        except duckdb.Error:
            counts = {}
        for pid, pool, path, _, _, n_rows, *_ in intact:
            if counts.get(path) != n_rows:
                broken.setdefault(pid, _changed(path, pool, "has changed (its row count)"))
        intact = [f for f in intact if f[0] not in broken]
    for pid, pool in sorted({(f[0], f[1]) for f in intact if f[5]}):   # pools with attached rows
        if not _mapped(con, pid):
            broken.setdefault(pid, f"pool '{pool}': its files were attached before attach-verdicts kept their rows' "
                                   f"ids and values; run `judgeaudit attach-verdicts --pool {pool} ...` again, or "
                                   f"`judgeaudit detach-verdicts --pool {pool}`")
    intact = [f for f in intact if f[0] not in broken]
    if not intact:
        _sql.script(con, "verdict_source_stored")
        return broken
    attached_views(con, [(f[0], f[2], f[6], f[7]) for f in intact])
    return broken


def _mapped(con: duckdb.DuckDBPyConnection, pool_id: int) -> bool:
    """Whether the pool's attached rows were mapped to its ids, their values kept, when attached (schema/026, 030)."""
    from . import _sql
    try:
        return bool(_sql.first(con, "attached_mapped", pool_id=pool_id)[0])
    except (duckdb.CatalogException, duckdb.BinderException):   # a database before migration 026 or 030
        return False                                            # (a reader never migrates)


def attached_views(con, files: list[tuple]) -> None:
    """The temp views over attached files on a connection (attached_rows, attached_raw, attached_judgings,
    attached_file_judgings, verdict_source_all, verdict_values_all, verdict_source, verdict_values), from (pool_id, path, hive judge, hive format)
    of each file: one entry per (pool, file), in (pool, path) order, each file numbered by its place among
    its pool's files (file_no, as attached_ids keys its rows)."""
    from . import _sql
    files = sorted(files, key=lambda f: (f[0], f[1]))
    seen: dict[int, int] = {}
    file_nos = []
    for f in files:
        file_nos.append(seen.get(f[0], 0))
        seen[f[0]] = file_nos[-1] + 1
    paths = sorted({f[1] for f in files})
    union = bool(paths) and _sql.first(con, "attached_schemas", files=paths)[0] > 1
    _sql.script(con, "set_attached_files", files=[f[1] for f in files], pools=[f[0] for f in files],
                file_nos=file_nos, judges=[f[2] for f in files], formats=[f[3] for f in files], union=union)
    _sql.script(con, "attached_raw")
    _sql.script(con, "attached_judgings")
    _sql.script(con, "verdict_source_attached")
    _sql.script(con, "verdict_source_whole")


def _changed(path: str, pool: str, what: str) -> str:
    return (f"{path}: attached to pool '{pool}', {what} since; run `judgeaudit attach-verdicts --pool {pool} ...` "
            f"again, or `judgeaudit detach-verdicts --pool {pool}`")
