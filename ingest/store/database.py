"""One handle to a database, as datasette's `Database`: made once from a path (the path rule applied
here, once), owning the lock rule, offering the store's verbs and one read verb for named SQL files
with bound parameters. The command line and the dashboard make a `Database` and pass it; the audit
reads through it (the one module of `ingest` it imports), and nothing outside the store holds a
connection, runs SQL text or registers a frame.

    db = Database("judgeaudit.duckdb")
    db.import_pool("pool.jsonl", "mine")               # a store verb (ingest.store's face)
    with db.reading(queries="audit") as read:          # one short-lived read-only connection
        pid = read.pool_id("mine")
        cells = read.frame("cells", pool_id=pid)       # audit/sql/cells.sql, $pool_id bound

A handle may be scoped to some judgings (`db.scoped([("j1", "likert5")])`, a judge with a format): its
readings' `verdict_source` then holds only their calls, so any audit function given it computes only
their cells (the derived results' parts, one per judging). A handle may also hold the fingerprints a
refresh took at its start (`db.at(now)`), which a result computed from others' stored parts reads
them under (audit.derived's leaderboard), so that it takes none again.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import threading
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Iterator

from .. import settings
from .._errors import UserError
from . import connection

if TYPE_CHECKING:
    import polars as pl


class Database:
    """A database file: `path` is absolute, resolved once from the path given (else $JUDGEAUDIT_DB,
    else ./judgeaudit.duckdb). A `Database` is path-like, so it goes wherever a path went."""

    def __init__(self, path: str | os.PathLike | None = None,
                 judgings: tuple[tuple[str, str], ...] | None = None, shared: "SharedReads | None" = None,
                 marks_now=None):
        if isinstance(path, Database):
            path = path.path
        self.path = settings.database_path(path).resolve()
        self.judgings = None if judgings is None else tuple(sorted((str(j), str(f)) for j, f in judgings))
        self.shared = shared
        self.marks_now = marks_now

    def scoped(self, judgings) -> "Database":
        """The same database with every reading scoped to these judgings' calls ((judge, format)
        pairs): what an audit function reads through it computes those judgings' cells alone. It
        shares the reads this handle shares (`sharing`)."""
        return Database(self.path, tuple(judgings), self.shared, self.marks_now)

    def sharing(self, names, budget_bytes: int) -> "Database":
        """The same database (and scope) whose readings keep the rows of the named queries (a set of
        (package, query name)) for every handle made from it (`scoped` too): a query read again with
        the same parameters and scope returns the rows read the first time, until `budget_bytes` of
        rows are kept (later ones are read as before). For one pass over a database that does not move
        meanwhile, or whose results are dropped when it did (a refresh: what it computed is stored only
        under the fingerprints taken at its start), where several results read the same rows."""
        return Database(self.path, self.judgings, SharedReads(names, budget_bytes), self.marks_now)

    def at(self, marks_now) -> "Database":
        """The same database (scope and shared reads) whose derived results are read under the
        fingerprints `marks_now` (ingest.store.derived_marks_now: a refresh's, taken at its start)
        rather than taken again: what a result computed from others' stored parts reads them under
        (`marks_now`; None: taken when read)."""
        return Database(self.path, self.judgings, self.shared, marks_now)

    @classmethod
    def of(cls, db: "Database | str | os.PathLike | None") -> "Database":
        """`db` itself when it is a handle, else the handle of that path (None: the path rule's)."""
        return db if isinstance(db, Database) else cls(db)

    def __fspath__(self) -> str:
        return str(self.path)

    def __str__(self) -> str:
        return str(self.path)

    def __repr__(self) -> str:
        scope = "" if self.judgings is None else f", judgings={self.judgings!r}"
        return f"Database({str(self.path)!r}{scope})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Database) and (other.path, other.judgings) == (self.path, self.judgings)

    def __hash__(self) -> int:
        return hash((self.path, self.judgings))

    def exists(self) -> bool:
        return self.path.is_file()

    def state(self) -> tuple[str, float]:
        """(path, mtime): a key that changes whenever the database is written (its write-ahead log
        included), so a cache keyed by it sees a write from any process."""
        wal = self.path.with_name(self.path.name + ".wal")
        mtimes = [f.stat().st_mtime for f in (self.path, wal) if f.exists()]
        return str(self.path), max(mtimes, default=0.0)

    def holding(self):
        """A block during which this process keeps one read-only connection to the file open, so
        that its readings' connections share one DuckDB instance and the blocks it read (a long pass
        over the same verdicts: a refresh) stay in memory between them; this process's writers close
        it for their write (connection.holding)."""
        return connection.holding(self.path)

    @contextlib.contextmanager
    def reading(self, queries: str = "ingest.store", error: type[UserError] = UserError,
                timeout_s: float | None = None) -> Iterator["Reading"]:
        """A read-only session (one short-lived connection, waiting while a writer holds the file up
        to the lock timeout) whose reads run the package `queries`' sql/NAME.sql files; a missing
        file is `error`. A scoped handle's `verdict_source` holds only its judgings' calls."""
        if not self.exists():
            raise error(connection.missing_database(self.path))
        with connection.read_only(self.path, timeout_s) as con:
            changed = connection.verdict_source(con, self.judgings)
            yield Reading(con, queries, error, changed, self.shared, self.judgings)

    def __getattr__(self, name: str):
        """The store's verbs, bound to this database: `db.import_pool(path, pool)` is
        `ingest.store.import_pool(db, path, pool)`."""
        if name.startswith("_"):
            raise AttributeError(name)
        store = importlib.import_module("ingest.store")
        if name not in store.VERBS:
            raise AttributeError(f"{type(self).__name__!r} has no attribute {name!r} (no such store verb)")
        verb = getattr(store, name)
        return lambda *args, **kwargs: verb(self, *args, **kwargs)


@cache
def query_text(queries: str, name: str) -> str:
    """The text of the package `queries`' sql/NAME.sql."""
    return (resources.files(queries) / "sql" / f"{name}.sql").read_text(encoding="utf-8")


class SharedReads:
    """The rows of some named queries, kept for the handles of one pass (Database.sharing): per
    (package, query, scope, parameters), the first read's rows; a second reader of the same key waits
    for the first. Kept until `budget_bytes` are held; numpy arrays are kept read-only (a reader that
    would change them in place fails rather than change another reader's rows)."""

    def __init__(self, names, budget_bytes: int):
        self.names = frozenset(names)
        self.budget_bytes, self.held_bytes = budget_bytes, 0
        self._rows: dict = {}
        self._locks: dict = {}
        self._guard = threading.Lock()

    def get(self, key: tuple, read, size) -> object:
        """The rows under `key`: those kept, else read() (kept when `size(rows)` bytes fit the budget)."""
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:                          # one reader of a key at a time: the others find its rows
            if key in self._rows:
                return self._rows[key]
            rows = read()
            n = size(rows)
            with self._guard:
                if self.held_bytes + n <= self.budget_bytes:
                    self._rows[key] = rows
                    self.held_bytes += n
            return rows


def _read_only(arrays: dict) -> dict:
    """The arrays, each made read-only (numpy's flag; fetchnumpy's arrays are the reader's own)."""
    for a in arrays.values():
        a.flags.writeable = False
    return arrays


class Reading:
    """Named reads on one read-only connection: each runs sql/NAME.sql of the reading's package with
    its `$parameters` bound (never pasted in). With `shared` (Database.sharing), the queries it names
    are read once per scope and parameters, their rows kept for the pass."""

    def __init__(self, con, queries: str, error: type[UserError], changed: dict[int, str],
                 shared: SharedReads | None = None, scope: tuple | None = None):
        self._con, self._queries, self._error, self._changed = con, queries, error, changed
        self._shared, self._scope = shared, scope

    def _run(self, name: str, params: dict):
        return self._con.sql(query_text(self._queries, name), params=params)

    def _kept(self, kind: str, name: str, params: dict, read, size, keeping=lambda rows: rows):
        """read(), or, where the query is one the pass shares, the rows kept for it (read once, made
        ready to be kept by `keeping`)."""
        if self._shared is None or (self._queries, name) not in self._shared.names:
            return read()
        key = (kind, self._queries, name, self._scope, tuple(sorted((k, repr(v)) for k, v in params.items())))
        return self._shared.get(key, lambda: keeping(read()), size)

    def frame(self, name: str, /, **params) -> pl.DataFrame:
        """The query's rows as a polars frame."""
        return self._kept("frame", name, params, lambda: self._run(name, params).pl(), lambda f: f.estimated_size())

    def numpy(self, name: str, /, **params) -> dict:
        """One numpy array per column (for large results headed to numpy; the SQL replaces NULLs,
        which would otherwise arrive as masked arrays). Rows kept for a pass (`shared`) are read-only
        arrays, and each reader gets its own dict of them."""
        arrays = self._kept("numpy", name, params, lambda: self._run(name, params).fetchnumpy(),
                            lambda a: sum(v.nbytes for v in a.values()), _read_only)
        return dict(arrays)

    def rows(self, name: str, /, **params) -> list[tuple]:
        return self._con.execute(query_text(self._queries, name), params).fetchall()

    def batches(self, name: str, rows: int, /, **params):
        """The query's rows as an Arrow record batch reader of up to `rows` rows a batch, streamed
        while the reading is open."""
        return self._run(name, params).fetch_record_batch(rows)

    def pool_id(self, pool: str) -> int:
        """The pool's id; the reading's error naming the known pools when there is none, or naming
        the file when one of the pool's attached files changed or went since it was attached."""
        pid = connection.pool_id(self._con, pool, self._error)
        if self._changed.get(pid):
            raise self._error(self._changed[pid])
        return pid

    @contextlib.contextmanager
    def frames(self, **frames: pl.DataFrame) -> Iterator["Reading"]:
        """The reading with these frames readable by name in its queries (`FROM wanted`), for the
        length of the block."""
        for name, frame in frames.items():
            self._con.register(name, frame.to_arrow())
        try:
            yield self
        finally:
            for name in frames:
                self._con.unregister(name)

