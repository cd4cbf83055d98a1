"""What every `judgeaudit` command shares: the `--db` and `--json` options, the upgrade of an older
database before a read, and the two ways of printing (one JSON document, or a table). It imports no
command module, so each command module imports on its own."""

from __future__ import annotations

import json
import math
from pathlib import Path

import click
import polars as pl

DB_HELP = "DuckDB file (default: $JUDGEAUDIT_DB or ./judgeaudit.duckdb)"


def jsonable(value):
    """value with NaN as null and infinities as "inf" / "-inf", inside dicts, lists and tuples too
    (strict JSON has neither)."""
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value


def emit_json(document: dict) -> None:
    click.echo(json.dumps(jsonable(document), allow_nan=False, ensure_ascii=False))


def emit_table(frame: pl.DataFrame, title: str | None = None) -> None:
    if title:
        click.echo(title)
    with pl.Config(tbl_cols=-1, tbl_rows=-1, tbl_width_chars=250, float_precision=4,
                   tbl_hide_dataframe_shape=True, tbl_hide_column_data_types=True):
        click.echo(str(frame))


def current(db):
    """Upgrade an older database's schema before reading it; returns db."""
    from ingest.store import ensure_current
    ensure_current(db)
    return db


def db_option(f):
    return click.option("--db", "db", type=click.Path(dir_okay=True, path_type=Path), default=None,
                        help=DB_HELP)(f)


def json_option(f):
    return click.option("--json", "as_json", is_flag=True, help="print one JSON document")(f)
