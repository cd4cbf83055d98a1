"""`judgeaudit derive` (DESIGN.md 'Ten million candidates on every page'): store the pool's derived
results now (app/derived.py), so the dashboard's first view after a run reads them."""

from __future__ import annotations

import click

from ._common import current, db_option, emit_json, json_option


@click.command("derive")
@click.option("--pool", required=True)
@db_option
@json_option
def derive_cmd(pool, db, as_json):
    """Compute and store the pool's derived results that are stale or missing (the pages' audit cells,
    slot bias, positions, score levels, ...), e.g. after a score run, an import or an attach."""
    from app.derived import refresh
    from ingest import db_path
    result = refresh(str(db_path(current(db))), pool)
    if as_json:
        emit_json(result)
        return
    for r in result["results"]:
        click.echo(f"{r['name']:14s} {r['status']:10s} {r['seconds']:8.2f} s")
    click.echo(f"pool '{pool}': {result['n_verdicts']:,} verdicts")
