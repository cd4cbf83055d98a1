"""A Parquet verdict file imported where it lies (issue 29: files of any size from the command line at
1M rows/s or more): DuckDB reads the file, places each row in the pool and appends it in one statement,
instead of the file passing through Python a batch at a time. The steps run in the caller's unit of work
(ingest.scoring._file_import says when this path is taken and what it leaves to the batch path); each is a
file of sql/, over the temp views import_file_rows.sql makes on the connection."""

from __future__ import annotations

import contextlib
from typing import Iterator

import polars as pl

from . import _sql


@contextlib.contextmanager
def _registered(con, **tables: pl.DataFrame) -> Iterator[None]:
    """Each frame registered under its name for the statements inside."""
    for name, frame in tables.items():
        con.register(name, frame.to_arrow())
    try:
        yield
    finally:
        for name in tables:
            con.unregister(name)


class OpenFile:
    """The verbs over one open Parquet verdict file (Writing.open_verdict_file)."""

    def __init__(self, con, pool: int):
        self._con, self.pool = con, pool

    def check(self) -> dict:
        """n_rows, n_bad, n_probs, n_repeated (sql/import_file_check.sql)."""
        return dict(zip(("n_rows", "n_bad", "n_probs", "n_repeated"), _sql.first(self._con, "import_file_check")))

    def answers(self) -> pl.DataFrame:
        """format, raw: each distinct answer of the file."""
        return _sql.frame(self._con, "import_file_answers")

    def cells(self) -> pl.DataFrame:
        """judge, format, endpoint: each distinct one of the file."""
        return _sql.frame(self._con, "import_file_cells")

    def new_calls(self, cells: pl.DataFrame) -> dict[tuple[str, str], int]:
        """{(judge, format): rows whose call the pool does not hold yet}; `cells`: judge, format, judge_id,
        format_id, held (whether the cell held verdicts: only those are looked up)."""
        with _registered(self._con, import_cells=cells):
            return {(j, f): n for j, f, n in _sql.rows(self._con, "import_file_new_calls")}

    def insert(self, cells: pl.DataFrame, parsed: pl.DataFrame, endpoints: pl.DataFrame,
               anchors: pl.DataFrame) -> int:
        """Append the file's new calls (sql/insert_import_file.sql); how many rows. `cells` as for
        new_calls with each cell's cell_run_id (null: no new row), `parsed` (format, raw, label, value,
        status), `endpoints` (endpoint, public), `anchors` (prompt_idx, anchor_idx from references)."""
        with _registered(self._con, import_cells=cells, import_answers=parsed, import_endpoints=endpoints,
                         import_reference_anchors=anchors):
            return _sql.first(self._con, "insert_import_file")[0]

    def anchor_votes(self, anchors: pl.DataFrame) -> pl.DataFrame:
        """prompt_idx, b_idx, len: slot B of the anchored calls of prompts without a reference anchor."""
        with _registered(self._con, import_reference_anchors=anchors):
            return _sql.frame(self._con, "import_file_anchor_votes")

    def status_counts(self, cell_run_ids: list[int]) -> dict[str, int]:
        """{status: verdicts} the cell runs hold."""
        return dict(_sql.rows(self._con, "import_file_statuses", pool_id=self.pool, cell_run_ids=cell_run_ids))


@contextlib.contextmanager
def open_verdict_file(con, path: str, pool: int, formats: pl.DataFrame, pairs: bool) -> Iterator[OpenFile]:
    """The file's views (import_rows, import_placed) for `pool` while inside; `formats` (format, kind,
    pairing) the formats it may name, `pairs` whether it holds comparative formats (slot B looked up)."""
    with _registered(con, import_formats=formats):
        _sql.script(con, "import_file_rows", path=path, pool_id=pool, pairs=pairs)
        try:
            yield OpenFile(con, pool)
        finally:
            _sql.script(con, "import_file_close")
