"""A Parquet verdict file imported where it lies (files of any size from the command line at
1M rows/s or more): DuckDB reads the file, places each row in the pool and appends it in one statement,
instead of the file passing through Python a batch at a time. The steps run in the caller's unit of work
(ingest.scoring._file_import says when this path is taken and what it leaves to the batch path); each is a
file of sql/, over the temp views import_file_rows.sql makes on the connection."""

from __future__ import annotations

import contextlib
from typing import Iterator

import duckdb
import polars as pl

from . import _sql


@contextlib.contextmanager
def _registered(con, **tables: pl.DataFrame) -> Iterator[None]:
    """Each frame registered under its name for the statements inside (left registered when a statement
    has aborted the transaction: DuckDB then refuses even that, and the unit closes the connection)."""
    for name, frame in tables.items():
        con.register(name, frame.to_arrow())
    try:
        yield
    finally:
        with contextlib.suppress(duckdb.TransactionException):
            for name in tables:
                con.unregister(name)


class NotInPlace(Exception):
    """The file is for the batch path: a row is no verdict of the pool (sql/insert_import_file.sql's
    NOT NULL constraints), or DuckDB could not read it as the batch path does. The unit of work rolls
    back and the importer reads the file the batch way, which names the row or stores it."""


@contextlib.contextmanager
def _or_batch_way() -> Iterator[None]:
    """Any DuckDB error inside as NotInPlace (the unit rolls back the transaction it aborted)."""
    try:
        yield
    except duckdb.Error as exc:
        raise NotInPlace(str(exc)) from None


class OpenFile:
    """The verbs over one open Parquet verdict file (Writing.open_verdict_file)."""

    def __init__(self, con, pool: int):
        self._con, self.pool = con, pool

    def repeats(self) -> int:
        """How many calls more than one row of the file holds (sql/import_file_repeats.sql)."""
        return _sql.first(self._con, "import_file_repeats")[0]

    def answers(self) -> pl.DataFrame:
        """format, raw: each distinct answer of the file."""
        return _sql.frame(self._con, "import_file_answers")

    def judgings(self) -> pl.DataFrame:
        """judge, format, endpoint: each distinct one of the file (its judgings, with their endpoints)."""
        return _sql.frame(self._con, "import_file_cells")

    def insert(self, judgings: pl.DataFrame, parsed: pl.DataFrame, endpoints: pl.DataFrame,
               anchors: pl.DataFrame) -> int:
        """Append the file's new calls (sql/insert_import_file.sql); how many rows. `judgings`: judge, format,
        judge_id, format_id, held (whether the judging held verdicts: only those are looked up in `verdicts`),
        cell_run_id; `parsed` (format, raw, label, value, status), `endpoints` (endpoint, public), `anchors`
        (prompt_idx, anchor_idx from references). NotInPlace when a row is no verdict of the pool."""
        with _registered(self._con, import_judgings=judgings, import_answers=parsed, import_endpoints=endpoints,
                         import_reference_anchors=anchors):
            return _sql.first(self._con, "insert_import_file")[0]

    def anchor_votes(self, anchors: pl.DataFrame) -> pl.DataFrame:
        """prompt_idx, b_idx, len: slot B of the anchored calls of prompts without a reference anchor."""
        with _registered(self._con, import_reference_anchors=anchors):
            return _sql.frame(self._con, "import_file_anchor_votes")

    def status_counts(self, cell_run_ids: list[int]) -> dict[int, dict[str, int]]:
        """{cell run: {status: verdicts}} of the cell runs that hold any."""
        out: dict[int, dict[str, int]] = {}
        for cell_run_id, status, n in _sql.rows(self._con, "import_file_statuses", pool_id=self.pool,
                                                first=min(cell_run_ids), cell_run_ids=cell_run_ids):
            out.setdefault(cell_run_id, {})[status] = n
        return out


@contextlib.contextmanager
def open_verdict_file(con, path: str, pool: int, formats: pl.DataFrame, pairs: bool) -> Iterator[OpenFile]:
    """The file's views (import_rows, import_placed) for `pool` while inside; `formats` (format, kind,
    pairing) the formats it may name, `pairs` whether it holds comparative formats (slot B looked up).
    A DuckDB error inside, the file's or a step's, leaves as NotInPlace."""
    with _registered(con, import_formats=formats), _or_batch_way():
        _sql.script(con, "import_file_rows", path=path, pool_id=pool, pairs=pairs)
        try:
            yield OpenFile(con, pool)
        finally:
            with contextlib.suppress(duckdb.TransactionException):     # an aborted transaction: as above
                _sql.script(con, "import_file_close")
