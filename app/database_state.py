"""The database file the dashboard reads and its state: (path, modification time), the key every
cached read is made under, so a write from any process (the CLI too) shows without a restart."""

from __future__ import annotations

from pathlib import Path

from ingest import Database


def db_file() -> Path:
    return Database().path


def db_state() -> tuple[str, float]:
    """(path, mtime): the cache key that changes whenever the database is written."""
    p = db_file()
    wal = p.with_name(p.name + ".wal")
    mtimes = [f.stat().st_mtime for f in (p, wal) if f.exists()]
    return str(p), max(mtimes, default=0.0)
