"""What every `judgeaudit` command shares: the `--db` and `--json` options, the upgrade of an older
database before a read, and the two ways of printing (one JSON document, or a table). It imports no
command module, so each command module imports on its own."""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path

import click
import polars as pl

from ingest import settings
from ingest.runs import RunRequest, asked
from ingest.store.database import Database

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


def refresh_derived(db, pool: str | None) -> None:
    """What a command that brings verdicts ends with: the pool's derived results brought up to date
    (every pool's when the command names none), so a page's first view computes nothing; a line per
    pool on stderr, so stdout stays what the command prints. Skipped when the settings say so
    (JUDGEAUDIT_NO_DERIVE=1; `judgeaudit derive --pool P` does it later)."""
    if not settings.refresh_after_commands():
        return
    from audit.derived import refresh_after          # loaded only when a command refreshes (a fast start)
    from train.derived_results import DERIVED_RESULTS
    current(db)
    refresh_after(db, pool, DERIVED_RESULTS, say=lambda line: click.echo(line, err=True))


def db_option(f):
    """--db: the command gets the database's handle (ingest.store.Database), made here once."""
    return click.option("--db", "db", type=click.Path(dir_okay=True, path_type=Path), default=None,
                        callback=lambda ctx, param, value: Database(value), help=DB_HELP)(f)


def json_option(f):
    return click.option("--json", "as_json", is_flag=True, help="print one JSON document")(f)


class CommaList(click.ParamType):
    """A comma-separated list (`--formats binary,likert5`): parsed into its stripped, non-empty items;
    a run's request keeps the list, and its command line joins it again (app/cli/_request.py)."""
    name = "list"

    def convert(self, value, param, ctx):
        if isinstance(value, (list, tuple)):
            return [str(v).strip() for v in value if str(v).strip()]
        return [part.strip() for part in str(value).split(",") if part.strip()]


def plain(value):
    """A parsed parameter as plain JSON: a path as its text, a tuple as a list."""
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


REQUEST_LEAVES_OUT = ("db",)     # the run's database travels in its environment (JUDGEAUDIT_DB)


def request_of(command: click.Command, params: dict):
    """The run's request (ingest.runs.RunRequest) of a command's parsed parameters: every parameter
    but --db, its value as plain JSON."""
    return RunRequest(command.name, {p.name: plain(params.get(p.name)) for p in command.params
                                     if p.name not in REQUEST_LEAVES_OUT})


def run_command(f):
    """For a command that does its work as a background run: its request, from click's parsed
    parameters, is the run's config (ingest.runs.asked), as the dashboard's launch records it."""
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        ctx = click.get_current_context()
        with asked(request_of(ctx.command, ctx.params)):
            return f(*args, **kwargs)
    return wrapper
