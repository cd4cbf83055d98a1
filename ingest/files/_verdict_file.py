"""Reading and validating a verdict file (DESIGN.md 'Verdict file'): judge calls made elsewhere.

Beyond the design's fields a row may carry `decoding` (`greedy`, the default, or `constrained`:
the verdict was restricted to the format's labels) and `label_probs` (an object label -> probability,
or the same as a JSON string: the judge's distribution over the labels, where it gave one)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl

from .._errors import UserError
from ._tables import Table, first_row, read_table, text_column

REQUIRED = ("judge", "format", "prompt_id", "raw")
DECODINGS = ("greedy", "constrained")


def _probs(t: Table) -> pl.Series:
    """`label_probs` as canonical JSON text (null where absent); a clear error for a bad one."""
    if "label_probs" not in t.frame.columns:
        return pl.Series("label_probs", [None] * t.frame.height, pl.String)
    col = t.frame["label_probs"]
    out = []
    for row, value in enumerate(col.to_list()):
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                raise UserError(f"{t.at(row, 'label_probs')}: not a JSON object of label -> probability") from None
        if isinstance(value, dict):   # a JSONL object is read as a struct of every row's keys
            value = {k: v for k, v in value.items() if v is not None}
        if value is None or value == {}:
            out.append(None)
            continue
        if not isinstance(value, dict) or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and 0 <= v <= 1
                for v in value.values()):
            raise UserError(f"{t.at(row, 'label_probs')}: must map labels to probabilities in [0, 1], "
                            f"not {str(value)[:80]!r}")
        out.append(json.dumps(value, sort_keys=True))
    return pl.Series("label_probs", out, pl.String)


def read_verdicts(path: str | Path) -> tuple[Table, pl.DataFrame]:
    """Rows as (_row, judge, format, prompt_id, candidate_id, a_id, b_id, raw, error, sample,
    decoding, label_probs)."""
    t = read_table(path, {".jsonl": "jsonl", ".ndjson": "jsonl"})
    cols = set(t.frame.columns)
    missing = [c for c in REQUIRED if c not in cols]
    if missing:
        raise UserError(f"{t.path}: missing required field(s) {', '.join(repr(m) for m in missing)} "
                        f"(found: {', '.join(sorted(cols))})")
    if "candidate_id" not in cols and not {"a_id", "b_id"} <= cols:
        raise UserError(f"{t.path}: each row needs 'candidate_id' (pointwise) or 'a_id' and 'b_id' "
                        "(comparative)")
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
    df = df.with_columns(decoding.alias("decoding"), _probs(t))
    return t, df.with_row_index("_row")
