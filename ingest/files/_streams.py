"""Reading a table file in batches (files of any size from the command line): JSONL and
Parquet stream, a batch of about `rows` rows at a time, so a file is never whole in memory; CSV
(records may span lines) is read whole, as one batch.

Each batch is a Table whose `lines` are the file's own line (or Parquet row) numbers, so an error
in the millionth row names that row. The limits (files._tables.limits) hold for the file as a
whole when `capped`: the byte size and the Parquet row count up front, the rows and decoded bytes
as the batches come.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Iterator

import numpy as np
import polars as pl

from .. import settings
from .._errors import UserError, where
from ._tables import (EXTENSIONS, Table, _locate_jsonl_problem, _nonblank_lines, check_limits, check_path,
                      read_table)

JSONL_BYTES_PER_ROW = 256                # a JSONL batch is read as rows x this many bytes, cut at a line's end


def batch_rows(rows: int | None = None) -> int:
    """The rows a batch holds: `rows`, else the setting (ingest.settings.import_batch_rows)."""
    return max(1, int(rows or settings.import_batch_rows()))


def _jsonl_blocks(p: Path, rows: int) -> Iterator[tuple[bytes, int, int]]:
    """(block, number of its first line, its offset in the file): the file cut into blocks of about
    `rows` lines, each ending at a line's end; the first block is read as rows x JSONL_BYTES_PER_ROW
    bytes, the others by the mean length of the lines read so far."""
    line, offset, size = 1, 0, rows * JSONL_BYTES_PER_ROW
    with open(p, "rb") as fh:
        rest = b""
        while True:
            data = fh.read(size - len(rest) if size > len(rest) else size)
            if not data:
                break
            data = rest + data
            cut = data.rfind(b"\n") + 1
            if cut == 0:        # no line end yet: read on
                rest = data
                continue
            block, rest = data[:cut], data[cut:]
            yield block, line, offset
            line, offset = line + block.count(b"\n"), offset + len(block)
            size = max(1, round(rows * offset / (line - 1)))
        if rest:
            yield rest, line, offset


def _jsonl_batch(p: Path, block: bytes, first_line: int, offset: int) -> Table | None:
    """One block of a JSONL file read as a Table (None when it holds only blank lines)."""
    try:
        block.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = first_line + block.count(b"\n", 0, exc.start)
        raise UserError(f"{where(p, line)}: not valid UTF-8 (byte 0x{block[exc.start]:02x} "
                        f"at offset {offset + exc.start})") from None
    if not block.strip():
        return None
    shift = first_line - 1
    try:
        frame = pl.read_ndjson(io.BytesIO(block), infer_schema_length=None)
    except Exception as exc:
        problem = _locate_jsonl_problem(p, block, shift)
        raise UserError(problem or f"{where(p, first_line)}: could not read as JSON lines ({exc})") from None
    lines = _nonblank_lines(block) + shift
    if len(lines) != frame.height:
        problem = _locate_jsonl_problem(p, block, shift)
        raise UserError(problem or f"{where(p, first_line)}: could not map rows to lines")
    return Table(p, "jsonl", frame, lines)


def _jsonl_batches(p: Path, rows: int, capped: bool) -> Iterator[Table]:
    check_limits(p, nbytes=p.stat().st_size, capped=capped)
    seen = 0
    for block, first_line, offset in _jsonl_blocks(p, rows):
        t = _jsonl_batch(p, block, first_line, offset)
        if t is None:
            continue
        seen += t.frame.height
        check_limits(p, rows=seen, capped=capped)
        yield t
    if seen == 0:
        raise UserError(f"{p}: empty file (no rows)")


def _parquet_batches(p: Path, rows: int, capped: bool) -> Iterator[Table]:
    import pyarrow.parquet as pq
    try:
        source = pq.ParquetFile(p)
        total = source.metadata.num_rows
    except Exception as exc:
        raise UserError(f"{p}: could not read as Parquet ({str(exc).splitlines()[0]})") from None
    check_limits(p, rows=total, capped=capped)
    if total == 0:
        raise UserError(f"{p}: empty file (no rows)")
    start, size = 0, 0
    batches = source.iter_batches(batch_size=rows)
    while True:
        try:
            batch = next(batches, None)
        except Exception as exc:
            raise UserError(f"{p}: could not read as Parquet ({str(exc).splitlines()[0]})") from None
        if batch is None:
            return
        size += batch.nbytes
        check_limits(p, nbytes=size, capped=capped)
        frame = pl.from_arrow(batch)
        yield Table(p, "parquet", frame, np.arange(start + 1, start + frame.height + 1))
        start += frame.height


def table_batches(path: str | Path, allowed: dict[str, str] = EXTENSIONS, capped: bool = True,
                  rows: int | None = None) -> Iterator[Table]:
    """The file as Tables of about `rows` rows each (batch_rows()), in order; a CSV file whole.
    The path is checked at once; each batch's problems are raised as the batch is read."""
    p, kind = check_path(path, allowed)
    rows = batch_rows(rows)
    if kind == "jsonl":
        return _jsonl_batches(p, rows, capped)
    if kind == "parquet":
        return _parquet_batches(p, rows, capped)
    return iter([read_table(p, allowed, capped)])
