"""`judgeaudit rank`: Bradley-Terry strengths per (judge, comparative format), from both orders
and from the forward order alone (DESIGN.md 'Command line')."""

from __future__ import annotations

import click
import polars as pl

from ._common import current, db_option, emit_json, emit_table, json_option

ITEM_KEYS = ("id", "strength", "lo", "hi", "rank", "games", "wins")


def rank_document(frame: pl.DataFrame, pool: str, by: str) -> dict:
    """{"pool", "by", "cells": [{judge, format, decoding, order: "both", n_calls, n_units, prior, items,
    single_order: {n_calls, n_units, prior, items}, rank_changes}]}: one cell per (judge, format,
    decoding);
    `items` rank from every call (both orders), `single_order` from the forward calls alone."""
    keys = ITEM_KEYS + (("prompt_id",) if by == "prompt" else ())
    cells = []
    for (judge, fmt, decoding), part in frame.group_by("judge", "format", "decoding", maintain_order=True):
        doc = {"judge": judge, "format": fmt, "decoding": decoding}
        for order in ("both", "single"):
            rows = part.filter(pl.col("order") == order).sort("prompt_id", "rank", "id", nulls_last=True)
            if rows.height == 0:
                block = {"n_calls": 0, "n_units": 0, "prior": None, "items": []}
            else:
                per = rows.unique("prompt_id")                   # one row per prompt (by='prompt')
                block = {"n_calls": int(per["n_calls"].sum()), "n_units": int(per["n_units"].sum()),
                         "prior": float(rows["prior"].max()), "items": rows.select(keys).to_dicts()}
            if order == "both":
                doc.update(order="both", **block)
            else:
                doc["single_order"] = block
        single = {(r.get("prompt_id"), r["id"]): r["rank"] for r in doc["single_order"]["items"]}
        doc["rank_changes"] = sum(1 for r in doc["items"]
                                  if (r.get("prompt_id"), r["id"]) in single
                                  and single[(r.get("prompt_id"), r["id"])] != r["rank"])
        cells.append(doc)
    return {"pool": pool, "by": by, "cells": cells}


@click.command("rank")
@click.option("--pool", required=True)
@click.option("--by", type=click.Choice(["candidate_id", "prompt"]), default="candidate_id", show_default=True,
              help="rank systems across the pool, or the candidates within each prompt")
@click.option("--n-boot", default=1000, show_default=True, help="bootstrap resamples")
@click.option("--seed", default=0, show_default=True, help="seed of the bootstrap")
@click.option("--prior", type=float, default=None,
              help="virtual tie games per met pair (default: 0 where the MLE exists, else 0.5)")
@db_option
@json_option
def rank_cmd(pool, by, n_boot, seed, prior, db, as_json):
    """Bradley-Terry strengths per (judge, comparative format), from both orders and from one."""
    from audit import rank
    frame = rank(current(db), pool, by=by, n_boot=n_boot, seed=seed, prior=prior)
    if as_json:
        emit_json(rank_document(frame, pool, by))
    else:
        emit_table(frame.drop("n_units"))
