"""Reading tabular input files (JSONL, CSV, Parquet) into polars, with locatable errors.

The happy path is vectorised (polars readers). When a reader fails, a slower scan runs only to
find the line at fault and say what is wrong with it. Every error names the file, the line (or the
Parquet row) and the field.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from .. import settings
from .._errors import UserError, where

EXTENSIONS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".parquet": "parquet"}


def limits() -> tuple[int, int]:
    """(rows, bytes): the most a table file may hold, decompressed (a small Parquet upload can hold
    gigabytes); a server's admin sets them (ingest.settings.upload_limits)."""
    return settings.upload_limits()


def check_limits(p: Path, rows: int | None = None, nbytes: int | None = None, capped: bool = True) -> None:
    """A UserError when a file holds more rows or (decompressed) bytes than limits() allows; nothing
    when not `capped` (the command line reads files of any size: the limits are for uploads)."""
    if not capped:
        return
    max_rows, max_bytes = limits()
    if nbytes is not None and nbytes > max_bytes:
        raise UserError(f"{p}: more than {max_bytes / 2**20:,.1f} MiB of data once decompressed, over the "
                        f"limit ({settings.MAX_BYTES}); split the file")
    if rows is not None and rows > max_rows:
        raise UserError(f"{p}: {rows:,} rows is over the limit of {max_rows:,} rows ({settings.MAX_ROWS}); "
                        "split the file")


@dataclass
class Table:
    """A file read into a frame, plus the 1-based line (or row) number of each frame row."""
    path: Path
    kind: str                  # 'jsonl' | 'csv' | 'parquet'
    frame: pl.DataFrame
    lines: np.ndarray          # lines[i] = line number of frame row i
    raw: bytes | None = None
    fields: dict[str, str] = field(default_factory=dict)   # frame column -> the file's own name, where they differ

    def line_of(self, row: int) -> int:
        return int(self.lines[row])

    def at(self, row: int, fld: str | None = None) -> str:
        """'FILE, line N, field F' for frame row `row` (Parquet: 'row N'); F as the file names it."""
        fld = self.fields.get(fld, fld)
        if self.kind == "parquet":
            text = f"{self.path}, row {self.line_of(row)}"
            return text + (f", field '{fld}'" if fld else "")
        return where(self.path, self.line_of(row), fld)


def check_path(path: str | Path, allowed: dict[str, str] = EXTENSIONS) -> tuple[Path, str]:
    p = Path(path)
    if not p.exists():
        raise UserError(f"{p}: no such file")
    if p.is_dir():
        raise UserError(f"{p}: is a directory, not a file")
    kind = allowed.get(p.suffix.lower())
    if kind is None:
        raise UserError(f"{p}: unsupported file type '{p.suffix or '(none)'}' "
                        f"(use {', '.join(sorted(allowed))})")
    return p, kind


def _text_bytes(p: Path, empty: str, capped: bool = True) -> bytes:
    """The bytes of a text file (JSONL, CSV) within the size limit (when `capped`), valid UTF-8 and
    not blank; a blank one is refused with `empty`."""
    check_limits(p, nbytes=p.stat().st_size, capped=capped)
    data = p.read_bytes()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise UserError(f"{where(p, line)}: not valid UTF-8 (byte 0x{data[exc.start]:02x} "
                        f"at offset {exc.start})") from None
    if not data.strip():
        raise UserError(f"{p}: {empty}")
    return data


def _nonblank_lines(data: bytes) -> np.ndarray:
    """1-based numbers of the lines that hold something other than whitespace (vectorised).

    Only lines that are empty or start with whitespace (rare in JSONL) are looked at one by one.
    """
    buf = np.frombuffer(data, dtype=np.uint8)
    ends = np.flatnonzero(buf == ord("\n"))
    if len(buf) and buf[-1] != ord("\n"):
        ends = np.append(ends, len(buf))
    starts = np.concatenate(([0], ends[:-1] + 1)).astype(np.int64)
    filled = ends > starts
    first = buf[np.minimum(starts, len(buf) - 1)]
    doubtful = np.flatnonzero(filled & np.isin(first, np.frombuffer(b" \t\r\f\v", np.uint8)))
    for i in doubtful:
        filled[i] = bool(data[starts[i]:ends[i]].strip())
    return np.flatnonzero(filled) + 1


def json_problem(exc: json.JSONDecodeError) -> str:
    """'Expecting value at column 3', 'Unterminated string starting at column 9': json's own
    message with the column, without doubling the 'at' that some of its messages end with."""
    msg = exc.msg[:-3] if exc.msg.endswith(" at") else exc.msg
    return f"{msg} at column {exc.colno}"


def _locate_jsonl_problem(p: Path, data: bytes, shift: int = 0) -> str | None:
    """Slow path, only after the fast reader failed: the first line that is not a JSON object
    (`data` starts at line shift + 1 of the file)."""
    for number, line in enumerate(data.decode("utf-8").split("\n"), start=shift + 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            return f"{where(p, number)}: not valid JSON ({json_problem(exc)})"
        if not isinstance(row, dict):
            return f"{where(p, number)}: a row must be a JSON object, not {type(row).__name__}"
        for key, value in row.items():
            if isinstance(value, float) and not math.isfinite(value):
                return f"{where(p, number, key)}: not a finite number: {value}"
    return None


def read_jsonl(p: Path, capped: bool = True) -> Table:
    data = _text_bytes(p, "empty file (no rows)", capped)
    try:
        frame = pl.read_ndjson(io.BytesIO(data), infer_schema_length=None)
    except Exception as exc:
        problem = _locate_jsonl_problem(p, data)
        raise UserError(problem or f"{p}: could not read as JSON lines ({exc})") from None
    lines = _nonblank_lines(data)
    check_limits(p, rows=frame.height, capped=capped)
    if len(lines) != frame.height:  # a reader that skips differently from us: find the culprit
        problem = _locate_jsonl_problem(p, data)
        raise UserError(problem or f"{p}: could not map rows to lines")
    return Table(p, "jsonl", frame, lines, data)


def _csv_record_lines(data: bytes) -> np.ndarray:
    """Line on which each CSV record starts (records may span lines inside quotes)."""
    reader = csv.reader(io.StringIO(data.decode("utf-8"), newline=""))
    starts, line = [], 1
    for _ in reader:
        starts.append(line)
        line = reader.line_num + 1
    return np.asarray(starts[1:], dtype=np.int64)  # drop the header


def read_csv(p: Path, capped: bool = True) -> Table:
    data = _text_bytes(p, "empty file (no header, no rows)", capped)
    try:
        frame = pl.read_csv(io.BytesIO(data), infer_schema=False)
    except Exception as exc:
        raise UserError(f"{p}: could not read as CSV ({str(exc).splitlines()[0]})") from None
    if frame.height == 0:
        raise UserError(f"{where(p, 1)}: empty file (a header but no rows)")
    check_limits(p, rows=frame.height, capped=capped)
    # Records usually sit one per line; only multi-line quoted fields need the exact scan.
    if data.count(b"\n") - (1 if data.endswith(b"\n") else 0) == frame.height:
        lines = np.arange(2, frame.height + 2)
    else:
        lines = _csv_record_lines(data)
    return Table(p, "csv", frame, lines, data)


def read_parquet(p: Path, capped: bool = True) -> Table:
    # A small Parquet file can unpack to gigabytes (dictionary pages, compression): check the row
    # count in the footer first, then add up the decoded batches and stop at the size limit.
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
        source = pq.ParquetFile(p)
        check_limits(p, rows=source.metadata.num_rows, capped=capped)
        if capped:
            batches, size = [], 0
            for batch in source.iter_batches(batch_size=65_536):
                size += batch.nbytes
                check_limits(p, nbytes=size)
                batches.append(batch)
            frame = pl.from_arrow(pa.Table.from_batches(batches, schema=source.schema_arrow))
        else:   # no size to watch: polars' own reader, in parallel
            frame = pl.read_parquet(p)
    except UserError:
        raise
    except Exception as exc:
        raise UserError(f"{p}: could not read as Parquet ({str(exc).splitlines()[0]})") from None
    if frame.height == 0:
        raise UserError(f"{p}: empty file (no rows)")
    return Table(p, "parquet", frame, np.arange(1, frame.height + 1))


def read_table(path: str | Path, allowed: dict[str, str] = EXTENSIONS, capped: bool = True) -> Table:
    """A table file read whole; within limits() when `capped` (uploads), of any size when not (the
    command line)."""
    p, kind = check_path(path, allowed)
    return {"jsonl": read_jsonl, "csv": read_csv, "parquet": read_parquet}[kind](p, capped)


def jsonl_objects(path: Path):
    """(line number, object) for each non-blank line of a small JSONL file, refusing a line that is
    not a JSON object with its file and line (the large tables go through read_jsonl instead)."""
    with open(path, encoding="utf-8") as fh:
        for n, text in enumerate(fh, 1):
            if not text.strip():
                continue
            try:
                row = json.loads(text)
            except json.JSONDecodeError as exc:
                raise UserError(f"{where(path, n)}: not valid JSON ({json_problem(exc)})") from None
            if not isinstance(row, dict):
                raise UserError(f"{where(path, n)}: expected a JSON object")
            yield n, row


def first_row(mask: pl.Series) -> int | None:
    """Index of the first True in a boolean series, or None."""
    idx = mask.arg_true()
    return int(idx[0]) if len(idx) else None


def text_column(t: Table, name: str) -> pl.Series:
    """Column `name` as text (all null where the file lacks it); lists and objects are refused."""
    if name not in t.frame.columns:
        return pl.repeat(None, t.frame.height, dtype=pl.String, eager=True).alias(name)
    col = t.frame[name]
    if isinstance(col.dtype, (pl.List, pl.Struct, pl.Array)):
        raise UserError(f"{t.at(first_row(col.is_not_null()) or 0, name)}: must be text, not {col.dtype}")
    return col.cast(pl.String)


def first_repeat(frame: pl.DataFrame, key: list[str]) -> tuple[int, int] | None:
    """(row, first): the first row of `frame` whose `key` an earlier row already had, and that
    earlier row; None when every key is unique. `frame` needs a _row column of row positions.
    One hash per key first: when the hashes are all different, so are the keys."""
    if frame.select(pl.struct(key).hash()).to_series().n_unique() == frame.height:
        return None
    dup = frame.select("_row", pl.col("_row").min().over(key).alias("_first")) \
        .filter(pl.col("_row") != pl.col("_first"))
    return (int(dup["_row"][0]), int(dup["_first"][0])) if dup.height else None


def file_sha256(path: str | os.PathLike) -> str:
    """The SHA-256 of a file's bytes (hex), read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
