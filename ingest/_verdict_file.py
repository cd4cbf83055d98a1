"""Reading and validating a verdict file (DESIGN.md 'Verdict file'): judge calls made elsewhere."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from ._errors import UserError
from ._files import Table, first_row, read_table, text_column

REQUIRED = ("judge", "format", "prompt_id", "raw")


def read_verdicts(path: str | Path) -> tuple[Table, pl.DataFrame]:
    """Rows as (_row, judge, format, prompt_id, candidate_id, a_id, b_id, raw, error, sample)."""
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
    return t, df.with_row_index("_row")
