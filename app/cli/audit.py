"""`judgeaudit audit`, `bias`, `levels`, `stability`, `positions`, `variance` and `report`: the
audit's diagnostics per (judge, format), read from the database (docs/command-line.md#the-audit)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ._common import current, db_option, emit_json, emit_table, json_option, jsonable
from .judges import mark_juries
from ingest import UserError


@click.command("audit")
@click.option("--pool", required=True)
@click.option("--seed", default=0, show_default=True, help="seed of the top-1 tie-break")
@db_option
@json_option
def audit_cmd(pool, seed, db, as_json):
    """Diagnostics per (judge, format): levels, ties, agreement with the reference."""
    from audit import audit_cells, intransitivity
    frame = audit_cells(current(db), pool, seed=seed)
    if as_json:
        emit_json(with_intransitivity({"pool": pool, "cells": frame.to_dicts()}, intransitivity(db, pool, seed=seed)))
    else:
        emit_table(frame)


def with_intransitivity(doc: dict, found) -> dict:
    """`audit --json` with each tournament cell's intransitive triads (intransitive_share, _lo, _hi,
    _triads, _cycles, _prompts, _random; audit.intransitivity), on every row of the cell."""
    by_cell = {(r["judge"], r["format"], r["decoding"]): r for r in found.to_dicts()}
    for cell in doc["cells"]:
        r = by_cell.get((cell["judge"], cell["format"], cell["decoding"]))
        if r is not None:
            cell.update({k: v for k, v in r.items() if k.startswith("intransitive_")})
    return doc


@click.command("bias")
@click.option("--pool", required=True)
@click.option("--seed", default=0, show_default=True, help="seed of the bootstrap")
@click.option("--n-boot", default=2000, show_default=True, help="bootstrap resamples")
@db_option
@json_option
def bias_cmd(pool, seed, n_boot, db, as_json):
    """Slot-bias decomposition per (judge, comparative format)."""
    from audit import bias
    frame = bias(current(db), pool, seed=seed, n_boot=n_boot)
    if as_json:
        emit_json(mark_juries(db, pool, {"pool": pool, "cells": frame.to_dicts()}))
    else:
        emit_table(frame)


@click.command("levels")
@click.option("--pool", required=True)
@click.option("--alpha", "alphas", multiple=True, type=float,
              help="orders of D_alpha (repeatable; default 0, 0.5, 1, 2, inf)")
@db_option
@json_option
def levels_cmd(pool, alphas, db, as_json):
    """Effective number of levels D_alpha per (judge, format)."""
    from audit import effective_levels
    frame = effective_levels(current(db), pool, tuple(alphas) or (0, 0.5, 1, 2, float("inf")))
    emit_json({"pool": pool, "rows": frame.to_dicts()}) if as_json else emit_table(frame)


@click.command("stability")
@click.option("--pool", required=True)
@click.option("--n-boot", default=200, show_default=True, help="subsamples per cell")
@click.option("--fraction", default=1 / 3, show_default=True, help="subsample size / pool size")
@click.option("--seed", default=0, show_default=True)
@db_option
@json_option
def stability_cmd(pool, n_boot, fraction, seed, db, as_json):
    """Subsampling stability of distinct, D1 and D2 per (judge, format)."""
    from audit import stability
    frame = stability(current(db), pool, n_boot=n_boot, fraction=fraction, seed=seed)
    emit_json({"pool": pool, "rows": frame.to_dicts()}) if as_json else emit_table(frame)


@click.command("positions")
@click.option("--pool", required=True)
@click.option("--seed", default=0, show_default=True)
@db_option
@json_option
def positions_cmd(pool, seed, db, as_json):
    """Tournament selections of first- / last-listed candidates against 1/k."""
    from audit import position_selection
    frame = position_selection(current(db), pool, seed=seed)
    emit_json({"pool": pool, "cells": frame.to_dicts()}) if as_json else emit_table(frame)


@click.command("variance")
@click.option("--pool", required=True)
@db_option
@json_option
def variance_cmd(pool, db, as_json):
    """Format / judge / residual shares of each diagnostic, with leave-one-judge-out."""
    from audit import variance
    frame = variance(current(db), pool)
    emit_json({"pool": pool, "rows": frame.to_dicts()}) if as_json else emit_table(frame)


@click.command("report")
@click.option("--pool", required=True)
@click.option("--out", "out", required=True, type=click.Path(path_type=Path),
              help="FILE.md (Markdown) or FILE.json (the checklist document)")
@click.option("--seed", default=0, show_default=True)
@click.option("--half-width", "half_width", type=float, default=0.05, show_default=True,
              help="the decision per cell: the labels still needed, and their price, for an interval of ±H "
                   "(as `plan --half-width`)")
@click.option("--epsilon", type=float, default=0.2, show_default=True,
              help="the decision per cell: the alternative annotator test's ε, the judge's advantage for its "
                   "lower cost (as `alt-test --epsilon`)")
@db_option
@json_option
def report_cmd(pool, out, seed, half_width, epsilon, db, as_json):
    """Export the reporting checklist (Markdown or JSON), from the database alone, with the decision per
    cell at ±H and ε."""
    from audit import checklist, checklist_markdown, decisions
    from ingest.endpoints import label_price, prices
    if out.suffix.lower() not in (".md", ".json"):
        raise UserError(f"--out {out}: use a .md or .json file name")
    doc = checklist(current(db), pool, seed=seed)
    doc["decisions"] = decisions(db, pool, half_width=half_width, epsilon=epsilon, prices=prices(db),
                                 label_price=label_price(db)).to_dicts()
    text = json.dumps(jsonable(doc), indent=2, allow_nan=False) if out.suffix.lower() == ".json" \
        else checklist_markdown(doc)
    out.write_text(text, encoding="utf-8")
    if as_json:
        emit_json({"out": str(out), "cells": len(doc["cells"])})
    else:
        click.echo(f"wrote {out} ({len(doc['cells'])} judge x format cells)")
