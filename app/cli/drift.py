"""`judgeaudit drift`: verdicts changed between two versions of a judge on the same calls
(docs/command-line.md#judgeaudit-drift, docs/metrics.md#drift)."""

from __future__ import annotations

import json

import click

from ._common import current, db_option, emit_table, json_option, jsonable


@click.command("drift")
@click.option("--pool", required=True)
@click.option("--judge", required=True, help="the judge whose latest version is compared")
@click.option("--against", default=None,
              help="another judge name holding the earlier version (e.g. a re-run under --judge-name)")
@click.option("--baseline-version", type=int, default=None,
              help="the judge's own stored version of each format to compare with (default: the one "
                   "before the latest); without --against this needs two versions on the same calls")
@db_option
@json_option
def drift_cmd(pool, judge, against, baseline_version, db, as_json):
    """Verdicts changed between two versions of a judge on the same calls, and by how much."""
    if not as_json:
        from audit import drift, drift_items
        cells = drift(current(db), pool, judge, against=against, baseline_version=baseline_version)
        moved = drift_items(current(db), pool, judge, against=against, baseline_version=baseline_version, limit=50)
        emit_table(cells, title=f"{judge} (latest version) against {against or 'its earlier version'}")
        emit_table(moved, title=f"moved calls ({int(cells['n_moved'].sum())}; first 50)")
        return
    _write_report(current(db), pool, judge, against, baseline_version)


def _write_report(db, pool: str, judge: str, against: str | None, baseline_version: int | None) -> None:
    """The JSON document out of core, as the Drift page reads it (DuckDB a format at a time), written as
    it is read, the moved calls a batch at a time (the document emit_json wrote, the moved calls written
    by polars)."""
    from audit import drift_report
    with drift_report(db, pool, judge, against, baseline_version) as (head, cells):
        doc = {"pool": pool, "judge": judge, "against": against, "current_version": head["current_version"],
               "baseline_version": head["baseline_version"], "versions": head["versions"].to_dicts(), "cells": []}
        out = click.get_text_stream("stdout")
        out.write(_dumps(doc)[:-2])                       # up to "cells": [
        for i, (cell, moved) in enumerate(cells):
            out.write((", " if i else "") + _dumps({**cell, "moved": []})[:-2])     # up to "moved": [
            first = True
            for frame in moved:               # polars' lines: JSON objects, without json.dumps' spaces
                lines = frame.write_ndjson().rstrip("\n")
                if lines:
                    out.write(("" if first else ", ") + lines.replace("\n", ", "))
                    first = False
            out.write("]}")
        out.write("]}\n")
        out.flush()


def _dumps(value) -> str:
    return json.dumps(jsonable(value), allow_nan=False, ensure_ascii=False)
