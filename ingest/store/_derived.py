"""Derived results (migration 017): the audit's per-cell results as the dashboard reads them, stored
once computed under a fingerprint of what they were computed from, so that a new session or a
restarted server reads the stored frame instead of every verdict (DESIGN.md 'Ten million candidates
on every page; verdicts where they lie').

The fingerprint of a pool (`sql/derived_mark.sql`) moves with anything a result is computed from: a
cell run started, finished or failed (a score run, an import, an attach, a jury refresh), a verdict
written or parsed, an attached file attached, detached or changed on disk, a migration. The store
keeps the frames; computing them is the audit's (the caller computes, then saves here under the
writer's lock). A result is Parquet bytes, so any polars frame round-trips with its types.
"""

from __future__ import annotations

import io
import json
import os
from dataclasses import dataclass

import duckdb
import polars as pl

from . import _sql
from ._database import reader, transaction, writer
from .connection import find_pool


@dataclass(frozen=True)
class Mark:
    """A pool's fingerprint now: its id, the fingerprint, how many verdicts it stores, and its attached
    files with their size and modification time on disk when it was taken."""
    pool_id: int
    fingerprint: str
    n_verdicts: int
    attached: tuple[str, ...] = ()
    disk: str = ""
    basis: str = "verdicts"   # what the fingerprint covers: BASES

    def files_unchanged(self) -> bool:
        """Whether the attached files are on disk as when the mark was taken (no database read: a
        file rewritten in place changes no byte of the database)."""
        return _disk(self.attached) == self.disk


def params_json(params) -> str:
    """The canonical JSON of a result's arguments after the pool (tuples as lists)."""
    return json.dumps(list(params), sort_keys=True, default=str)


def _on_disk(path: str) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return "gone"
    return f"{st.st_size}:{st.st_mtime_ns}"


def _disk(paths) -> str:
    return ";".join(_on_disk(p) for p in paths)


# what a result is computed from: 'verdicts' (its cell runs, verdicts and attached files: derived_mark.sql),
# 'labels' (those and its human labels: derived_labels_mark.sql), 'pool' (its candidates alone:
# derived_pool_mark.sql; an import of verdicts leaves them current)
BASES = ("verdicts", "labels", "pool")


def _fingerprint(con, pool: int, basis: str = "verdicts") -> tuple[str, int, tuple[str, ...], str]:
    if basis == "pool":
        mark, n = _sql.first(con, "derived_pool_mark", pool_id=pool)
        return mark, int(n), (), ""
    mark, n = _sql.first(con, "derived_mark", pool_id=pool)
    paths = tuple(p for (p,) in _sql.rows(con, "attached_paths", pool_id=pool))
    disk = _disk(paths)
    if basis == "labels":         # a result computed from the human labels too moves with them
        mark = f"{mark}|labels {_sql.first(con, 'derived_labels_mark', pool_id=pool)[0]}"
    return f"{mark}|{disk}", int(n), paths, disk


def derived_mark(db: str | os.PathLike | None, pool: str, basis: str = "verdicts") -> Mark | None:
    """The pool's fingerprint now over what `basis` names (BASES); None when there is no such pool or
    the database predates migration 017 (the caller computes without storing, and the audit names
    the problem). Its n_verdicts counts the pool's candidates for basis 'pool'."""
    if basis not in BASES:
        raise ValueError(f"basis: one of {BASES}, not {basis!r}")
    with reader(db) as con:
        pid = find_pool(con, pool)
        if pid is None:
            return None
        try:
            fingerprint, n, paths, disk = _fingerprint(con, pid, basis)
            _sql.first(con, "derived_timing", pool_id=pid, name="")
        except duckdb.CatalogException:
            return None
    return Mark(pid, fingerprint, n, paths, disk, basis)


def derived_result(db: str | os.PathLike | None, mark: Mark, name: str, params=()
                   ) -> tuple[pl.DataFrame | None, tuple[float, int] | None]:
    """(frame, timing): the pool's stored result `name` for `params` when it was computed under
    `mark`'s fingerprint (else None), and the latest computation of `name` for the pool, any
    parameters, as (seconds, n_verdicts) (None before any): the next one's estimate."""
    with reader(db) as con:
        row = _sql.first(con, "derived_result", pool_id=mark.pool_id, name=name, params_json=params_json(params))
        timing = _sql.first(con, "derived_timing", pool_id=mark.pool_id, name=name)
    frame = pl.read_parquet(io.BytesIO(row[1])) if row is not None and row[0] == mark.fingerprint else None
    return frame, (float(timing[0]), int(timing[1])) if timing else None


def save_derived(db: str | os.PathLike | None, state: Mark, name: str, params, frame: pl.DataFrame,
                 seconds: float) -> bool:
    """Store `frame` as the pool's result `name` for `params`, computed from what `state` (derived_mark) fingerprinted,
    in one transaction under the writer's lock; whether it was stored. It is not when the pool's
    fingerprint moved meanwhile (a write landed while it was computed: the next reader computes it
    anew), the pool was deleted, or the database cannot be written (the result is shown all the same)."""
    buf = io.BytesIO()
    frame.write_parquet(buf, compression="zstd")
    try:
        with writer(db) as con, transaction(con):
            if _sql.first(con, "pool_instance", pool_id=state.pool_id) is None:
                return False
            if _fingerprint(con, state.pool_id, state.basis)[0] != state.fingerprint:
                return False
            _sql.script(con, "save_derived", pool_id=state.pool_id, name=name, params_json=params_json(params),
                        fingerprint=state.fingerprint, seconds=float(seconds), n_verdicts=state.n_verdicts,
                        payload=buf.getvalue())
    except (duckdb.IOException, duckdb.ConnectionException, OSError):
        return False        # a database the server may read but not write (or held past the lock timeout)
    return True

