"""The dashboard's only caching layer: st.cache_data wrappers around audit functions, keyed by
the database file's path and modification time, so a new import or scoring run (from the CLI too)
shows up without a restart. No DuckDB connection outlives a call."""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl
import streamlit as st

import audit


def db_file() -> Path:
    return Path(os.environ.get("JUDGEAUDIT_DB") or "judgeaudit.duckdb").resolve()


def db_state() -> tuple[str, float]:
    """(path, mtime): the cache key that changes whenever the database is written."""
    p = db_file()
    wal = p.with_name(p.name + ".wal")
    mtimes = [f.stat().st_mtime for f in (p, wal) if f.exists()]
    return str(p), max(mtimes, default=0.0)


@st.cache_resource(show_spinner="Seeding the bundled demo...")
def ensure_demo(path: str) -> list[str]:
    """Seed an empty database with the bundled demo, once per process."""
    from ingest.demo import seed_demo
    return seed_demo(path)


@st.cache_data(show_spinner=False)
def _pools(path: str, mtime: float) -> pl.DataFrame:
    return audit.pools(path)


@st.cache_data(show_spinner="Computing the audit...")
def _cells(path: str, mtime: float, pool: str, seed: int) -> pl.DataFrame:
    return audit.audit_cells(path, pool, seed=seed)


@st.cache_data(show_spinner="Bootstrapping slot bias...")
def _bias(path: str, mtime: float, pool: str, seed: int) -> pl.DataFrame:
    return audit.bias(path, pool, seed=seed)


def pools() -> pl.DataFrame:
    return _pools(*db_state())


def cells(pool: str, seed: int = 0) -> pl.DataFrame:
    return _cells(*db_state(), pool, seed)


def bias(pool: str, seed: int = 0) -> pl.DataFrame:
    return _bias(*db_state(), pool, seed)
