"""`judgeaudit consistency`: how often a judge asked the same call again answers differently, per
(judge, format, decoding) cell (docs/metrics.md#repeat-consistency)."""

from __future__ import annotations

import click

from ._common import current, db_option, emit_json, emit_table, json_option
from .judges import mark_juries


@click.command("consistency")
@click.option("--pool", required=True)
@click.option("--seed", default=0, show_default=True, help="seed of the bootstrap over calls")
@click.option("--n-boot", default=2000, show_default=True, type=click.IntRange(min=1), help="bootstrap resamples")
@db_option
@json_option
def consistency_cmd(pool, seed, n_boot, db, as_json):
    """Repeat consistency per (judge, format, decoding): flip rate, pairwise agreement, Krippendorff's
    alpha across samples with a bootstrap interval, the samples a mean needs for alpha 0.8."""
    from audit import consistency
    frame = consistency(current(db), pool, seed=seed, n_boot=n_boot)
    if as_json:
        emit_json(mark_juries(db, pool, {"pool": pool, "cells": frame.to_dicts()}))
    else:
        emit_table(frame)
        if frame.height and not (frame["n_items"] > 0).any():
            click.echo("No call has two parsed samples: score with --samples N (and a temperature) or "
                       "import verdicts with a `sample` field to measure repeat consistency.")
