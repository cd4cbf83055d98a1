"""`judgeaudit import-pool`, `pools` and `import-verdicts`: candidate pools, and verdicts produced
elsewhere, into the database (docs/command-line.md#pools-and-verdict-files)."""

from __future__ import annotations

from pathlib import Path

import click

from ._common import current, db_option, emit_json, emit_table, json_option, refresh_derived


@click.command("import-pool")
@click.argument("file", type=click.Path(path_type=Path, exists=False))
@click.option("--pool", required=True, help="name to store the pool under")
@click.option("--replace", is_flag=True, help="overwrite an existing pool of that name")
@db_option
@json_option
def import_pool_cmd(file, pool, replace, db, as_json):
    """Import a candidate pool (.jsonl, .csv, .parquet; also the UltraFeedback layout)."""
    from ingest.store import import_pool
    result = import_pool(db, file, pool, replace=replace, capped=False)   # any size: the caps are for uploads
    refresh_derived(db, pool)
    if as_json:
        emit_json(result)
    else:
        click.echo(f"imported pool '{pool}' ({result['layout']} layout): {result['n_prompts']} prompts, "
                   f"{result['n_candidates']} candidates ({result['k_min']}-{result['k_max']} per prompt)"
                   + (f"; replaced {result['replaced_verdicts']} verdicts" if replace else ""))


@click.command("pools")
@db_option
@json_option
def pools_cmd(db, as_json):
    """List the pools in the database."""
    from audit import pools
    frame = pools(current(db))
    if as_json:
        emit_json({"pools": frame.to_dicts()})
    else:
        emit_table(frame)


@click.command("import-verdicts")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--pool", required=True, help="the pool the verdicts are about")
@click.option("--format-spec", "format_specs", type=click.Path(path_type=Path), multiple=True,
              help="TOML file defining a format the verdicts use (repeatable)")
@db_option
@json_option
def import_verdicts_cmd(file, pool, format_specs, db, as_json):
    """Import verdicts produced elsewhere (JSONL or Parquet, the same columns; parsed with the format's
    parser). The whole file lands or nothing; calls already stored are skipped."""
    from ingest.scoring import import_verdicts
    result = import_verdicts(db, file, pool, format_specs=list(format_specs), capped=False)
    refresh_derived(db, pool)
    if as_json:
        emit_json(result)
    else:
        statuses = ", ".join(f"{k} {v}" for k, v in result["status_counts"].items()) or "none new"
        click.echo(f"imported {result['imported']} verdicts into pool '{pool}' "
                   f"({result['skipped_existing']} already present); parse status: {statuses}")
