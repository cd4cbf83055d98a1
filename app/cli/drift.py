"""`judgeaudit drift`: verdicts changed between two versions of a judge on the same calls
(docs/command-line.md#judgeaudit-drift, docs/metrics.md#drift)."""

from __future__ import annotations

import click
import polars as pl

from ._common import current, db_option, emit_json, emit_table, json_option


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
    from audit import compare_verdicts, drift_sides
    sides = drift_sides(current(db), pool, judge, against=against, baseline_version=baseline_version)
    cells, moved = compare_verdicts(sides["baseline"], sides["current"])
    if as_json:
        doc = {"pool": pool, "judge": judge, "against": against,
               "current_version": sides["current_version"], "baseline_version": sides["baseline_version"],
               "versions": sides["versions"].to_dicts(), "cells": []}
        for cell in cells.to_dicts():
            items = moved.filter((pl.col("format") == cell["format"]) & (pl.col("decoding") == cell["decoding"]))
            doc["cells"].append({**cell, "moved": items.drop("format", "decoding").to_dicts()})
        emit_json(doc)
    else:
        emit_table(cells, title=f"{judge} (latest version) against {against or 'its earlier version'}")
        emit_table(moved.head(50), title=f"moved calls ({moved.height}; first 50)")
