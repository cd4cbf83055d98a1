"""Reading and validating a verdict file (docs/files.md#verdict-file): judge calls made elsewhere,
as JSONL or as Parquet with the same columns.

Beyond the required fields a row may carry `decoding` (`greedy`, the default; `sampled`, the free answer at a
temperature above 0; or `constrained`:
the verdict was restricted to the format's labels) and `label_probs` (an object label -> probability,
or the same as a JSON string: the judge's distribution over the labels, where it gave one). A file
written by `judgeaudit export-verdicts` reads back as it is: its `candidate_a` and `candidate_b`
stand for `candidate_id` (pointwise) or `a_id` and `b_id` (comparative), and its other columns
(the stored label, value and status) are left aside: `raw` is parsed again. Such a file's
`tokens_in`, `tokens_out`, `latency_ms` and `endpoint` are kept, as any verdict file's may be."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Iterator

import polars as pl

from .._errors import UserError
from ._streams import table_batches
from ._tables import Table, first_row, read_table, text_column

REQUIRED = ("judge", "format", "prompt_id", "raw")
DECODINGS = ("greedy", "sampled", "constrained")


def _probs(t: Table) -> pl.Series:
    """`label_probs` as canonical JSON text (null where absent); a clear error for a bad one."""
    if "label_probs" not in t.frame.columns or t.frame["label_probs"].null_count() == t.frame.height:
        return pl.repeat(None, t.frame.height, dtype=pl.String, eager=True).alias("label_probs")
    col = t.frame["label_probs"]
    out = []
    for row, value in enumerate(col.to_list()):
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                raise UserError(f"{t.at(row, 'label_probs')}: not a JSON object of answer -> probability") from None
        if isinstance(value, dict):   # a JSONL object is read as a struct of every row's keys
            value = {k: v for k, v in value.items() if v is not None}
        if value is None or value == {}:
            out.append(None)
            continue
        if not isinstance(value, dict) or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and 0 <= v <= 1
                for v in value.values()):
            raise UserError(f"{t.at(row, 'label_probs')}: must map answers to probabilities in [0, 1], "
                            f"not {str(value)[:80]!r}")
        out.append(json.dumps(value, sort_keys=True))
    return pl.Series("label_probs", out, pl.String)


TEXT = ("judge", "format", "prompt_id", "candidate_id", "a_id", "b_id", "raw", "error", "decoding", "endpoint")
MEASURES = {"tokens_in": pl.Int64, "tokens_out": pl.Int64, "latency_ms": pl.Float64}   # optional, >= 0
EXPORTED = {"candidate_id": "candidate_a", "a_id": "candidate_a", "b_id": "candidate_b"}


def _check_types(t: Table) -> None:
    """A Parquet column has one type: a text field must be text, `sample` an integer, `label_probs`
    JSON text or a struct. (JSONL is read as it comes, value by value.)"""
    for name, dtype in t.frame.schema.items():
        if name in TEXT:
            want, ok = "text", dtype in (pl.String, pl.Null) or isinstance(dtype, (pl.Categorical, pl.Enum))
        elif name == "sample":
            want, ok = "an integer", dtype.is_integer() or dtype == pl.Null
        elif name in MEASURES:
            want, ok = "a number", dtype.is_numeric() or dtype == pl.Null
        elif name == "label_probs":
            want, ok = "JSON text or a struct of label -> probability", dtype in (pl.String, pl.Null) or \
                isinstance(dtype, pl.Struct)
        else:
            continue
        if not ok:
            row = first_row(t.frame[name].is_not_null()) or 0
            raise UserError(f"{t.at(row, name)}: must be {want}, not a column of type {dtype} "
                            f"(e.g. {t.frame[name][row]!r})")


def _exported(t: Table) -> Table:
    """A file written by export-verdicts: candidate_a / candidate_b read as candidate_id, a_id, b_id
    (which one a row needs follows from its format's kind), and errors name the file's own columns."""
    cols = t.frame.columns
    if "candidate_a" not in cols or any(c in cols for c in EXPORTED):
        return t
    t.frame = t.frame.with_columns(pl.col(src).alias(dst) for dst, src in EXPORTED.items() if src in cols)
    t.fields = {dst: src for dst, src in EXPORTED.items()}
    return t


VERDICT_FILES = {".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet"}


def read_verdicts(path: str | Path, capped: bool = True) -> tuple[Table, pl.DataFrame]:
    """Rows as (_row, judge, format, prompt_id, candidate_id, a_id, b_id, raw, error, sample,
    decoding, label_probs, endpoint, tokens_in, tokens_out, latency_ms), from JSONL or Parquet,
    the file read whole."""
    return _verdict_rows(read_table(path, VERDICT_FILES, capped))


def verdict_batches(path: str | Path, capped: bool = True,
                    rows: int | None = None) -> Iterator[tuple[Table, pl.DataFrame]]:
    """The file's rows as read_verdicts gives them, a batch of about `rows` rows at a time
    (files.batch_rows); each batch's `_row` counts from 0 within it and its Table names the file's
    own lines. The path is checked at once, each batch as it is read."""
    tables = table_batches(path, VERDICT_FILES, capped, rows)

    def batches():
        for t in tables:
            yield _verdict_rows(t)
    return batches()


def _verdict_rows(t: Table) -> tuple[Table, pl.DataFrame]:
    t = _exported(t)
    cols = set(t.frame.columns)
    missing = [c for c in REQUIRED if c not in cols]
    if missing:
        raise UserError(f"{t.path}: missing required field(s) {', '.join(repr(m) for m in missing)} "
                        f"(found: {', '.join(sorted(cols))})")
    if "candidate_id" not in cols and not {"a_id", "b_id"} <= cols:
        raise UserError(f"{t.path}: each row needs 'candidate_id' (pointwise) or 'a_id' and 'b_id' "
                        "(comparative)")
    if t.kind == "parquet":
        _check_types(t)
    df = pl.DataFrame({name: text_column(t, name) for name in
                       ("judge", "format", "prompt_id", "candidate_id", "a_id", "b_id", "raw", "error")})
    for name in ("judge", "format", "prompt_id"):
        bad = first_row(df[name].is_null() | (df[name].str.strip_chars() == ""))
        if bad is not None:
            raise UserError(f"{t.at(bad, name)}: missing or empty")
    if "sample" in cols:
        sample = t.frame["sample"]
        cast = sample.cast(pl.Int64, strict=False)
        bad = first_row((sample.is_not_null() & cast.is_null()) | (cast < 0))
        if bad is not None:
            raise UserError(f"{t.at(bad, 'sample')}: must be a non-negative integer, not {sample[bad]!r}")
        df = df.with_columns(cast.fill_null(0).alias("sample"))
    else:
        df = df.with_columns(pl.lit(0, pl.Int64).alias("sample"))
    decoding = text_column(t, "decoding").fill_null("greedy")
    bad = first_row(~decoding.is_in(DECODINGS))
    if bad is not None:
        raise UserError(f"{t.at(bad, 'decoding')}: one of {', '.join(DECODINGS)}, not {decoding[bad]!r}")
    df = df.with_columns(decoding.alias("decoding"), _probs(t), text_column(t, "endpoint"),
                         *(_measure(t, name, dtype) for name, dtype in MEASURES.items()))
    return t, df.with_row_index("_row")


def _measure(t: Table, name: str, dtype) -> pl.Series:
    """An optional column of non-negative numbers (token counts, latency); null where absent."""
    if name not in t.frame.columns:
        return pl.repeat(None, t.frame.height, dtype=dtype, eager=True).alias(name)
    col = t.frame[name]
    cast = col.cast(dtype, strict=False)
    bad = first_row((col.is_not_null() & cast.is_null()) | (cast < 0) | cast.cast(pl.Float64).is_infinite())
    if bad is not None:
        raise UserError(f"{t.at(bad, name)}: must be a non-negative number, not {col[bad]!r}")
    return cast
