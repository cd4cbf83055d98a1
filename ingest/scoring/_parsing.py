"""What an import of verdicts made elsewhere shares, whichever way it reads the file (the batch path,
_imported; in place, _file_import; attached, _attached): the formats a file may name, and each distinct
answer parsed once by its format's parser."""

from __future__ import annotations

import polars as pl

from .._errors import UserError
from .formats import BUILTIN, Format, stored_formats


def parse_distinct(pairs: pl.DataFrame, formats: dict[str, Format]) -> pl.DataFrame:
    """Parse each distinct (format, raw) of `pairs` once: judges repeat themselves, so this is fast."""
    parsed = [formats[f].parse(raw) if raw is not None else None for f, raw in pairs.iter_rows()]
    return pairs.with_columns(
        pl.Series("value", [p.value if p else None for p in parsed], pl.Float64),
        pl.Series("answer", [p.answer if p else None for p in parsed], pl.String),
        pl.Series("status", [p.status if p else "empty" for p in parsed], pl.String))


def known_formats(unit, extra: dict) -> dict:
    """The formats a verdict file may name: the stored ones, the built-in ones and those of its
    --format-spec files ({spec path: Format}); a spec that redefines a stored format is refused."""
    formats = {**stored_formats(unit.format_rows()), **BUILTIN}
    for spec_path, fmt in extra.items():
        if fmt.name in formats and formats[fmt.name].spec_hash != fmt.spec_hash:
            raise UserError(f"{spec_path}: format '{fmt.name}' is already stored with a "
                            "different definition; give this one another name")
        formats[fmt.name] = fmt
    return formats
