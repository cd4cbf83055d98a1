"""`judgeaudit derive`: store the pool's derived results now (audit.derived.refresh), so the
dashboard's first view after a run reads them."""

from __future__ import annotations

import click

from ._common import current, db_option, emit_json, json_option


@click.command("derive")
@click.option("--pool", required=True)
@db_option
@json_option
def derive_cmd(pool, db, as_json):
    """Compute and store the pool's derived results that are stale or missing (the pages' audit cells,
    slot bias, positions, score levels, ...), e.g. after a score run, an import or an attach. A result
    stored in parts (one per judging: a judge with a format) computes only the parts whose verdicts moved."""
    from audit.derived import refresh              # loaded only by this command (a fast start)
    from train.derived_results import DERIVED_RESULTS
    result = refresh(current(db), pool, DERIVED_RESULTS)
    if as_json:
        emit_json(result)
        return
    for r in result["results"]:
        parts = f"{r['computed']} of {r['parts']} parts" if r["parts"] > 1 else ""
        click.echo(f"{r['name']:16s} {r['status']:10s} {r['seconds']:8.2f} s  {parts}".rstrip())
    click.echo(f"pool '{pool}': {result['n_verdicts'] or 0:,} verdicts")
