"""`judgeaudit rank`: Bradley-Terry strengths per (judge, comparative format), from both orders
and from the forward order alone; with `--style`, the style-controlled fit over systems
(docs/command-line.md#judgeaudit-rank)."""

from __future__ import annotations

import click
import polars as pl

from ._common import current, db_option, emit_json, emit_table, json_option
from .judges import mark_juries

ITEM_KEYS = ("id", "strength", "lo", "hi", "rank", "games", "wins")
STYLE_FEATURES = ("length", "headers", "lists", "bold")


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


def _interval(row: dict | None) -> dict | None:
    return None if row is None or row["value"] is None else {k: row[k] for k in ("value", "lo", "hi")}


def style_document(frame: pl.DataFrame, pool: str) -> dict:
    """{"pool", "by": "candidate_id", "style": true, "cells": [{judge, format, decoding,
    n_comparisons, converged, n_boot_unconverged, slot: {value, lo, hi}, coefficients: {length,
    headers, lists, bold: {value, lo, hi} or null}, items: [{id, strength_raw, strength, lo, hi,
    rank_raw, rank}] (by rank), human: {n, converged, n_boot_unconverged, coefficients, excess} or
    null, why}]} from audit.style_rank's frame. `converged` false: no finite maximum-likelihood fit
    (a system or feature separates the outcomes), its numbers null and `why` the reasons in words; where
    it converged, `why` names a parameter held at 0 (e.g. the slot of an anchor always in slot B), else null."""
    cells = []
    for (judge, fmt, decoding), part in frame.group_by("judge", "format", "decoding", maintain_order=True):
        rows = {(r["part"], r["name"]): r for r in part.to_dicts()}
        items = part.filter(pl.col("part") == "system").sort("rank", "rank_raw", "name", nulls_last=True).select(
            "name", pl.col("value_raw").alias("strength_raw"), pl.col("value").alias("strength"),
            "lo", "hi", "rank_raw", "rank").rename({"name": "id"}).to_dicts()
        human = None
        if any(p == "human" for p, _ in rows):
            first = next(r for (p, _), r in rows.items() if p == "human")
            human = {"n": first["n"], "converged": first["converged"],
                     "n_boot_unconverged": first["boot_unconverged"],
                     "coefficients": {f: _interval(rows.get(("human", f))) for f in STYLE_FEATURES},
                     "excess": {f: _interval(rows.get(("excess", f))) for f in STYLE_FEATURES}}
        cells.append({"judge": judge, "format": fmt, "decoding": decoding,
                      "n_comparisons": rows[("coefficient", "slot")]["n"],
                      "converged": rows[("coefficient", "slot")]["converged"],
                      "n_boot_unconverged": rows[("coefficient", "slot")]["boot_unconverged"],
                      # why there is no fit, or which parameter the design could not tell apart (held at 0)
                      "why": rows[("coefficient", "slot")].get("why"),
                      "slot": _interval(rows[("coefficient", "slot")]),
                      "coefficients": {f: _interval(rows.get(("coefficient", f))) for f in STYLE_FEATURES},
                      "items": items, "human": human})
    return {"pool": pool, "by": "candidate_id", "style": True, "cells": cells}


@click.command("rank")
@click.option("--pool", required=True)
@click.option("--by", type=click.Choice(["candidate_id", "prompt"]), default="candidate_id", show_default=True,
              help="rank systems across the pool, or the candidates within each prompt")
@click.option("--n-boot", default=1000, show_default=True, help="bootstrap resamples")
@click.option("--seed", default=0, show_default=True, help="seed of the bootstrap")
@click.option("--prior", type=float, default=None,
              help="virtual tie games per met pair (default: 0 where the MLE exists, else 0.5)")
@click.option("--style", is_flag=True,
              help="fit the systems jointly with style features (length, headers, lists, bold): "
                   "coefficients, raw and style-controlled ranks (by candidate_id only)")
@db_option
@json_option
def rank_cmd(pool, by, n_boot, seed, prior, style, db, as_json):
    """Bradley-Terry strengths per (judge, comparative format), from both orders and from one."""
    if style:
        if by != "candidate_id":
            raise click.UsageError("--style ranks systems across the pool: use it with --by candidate_id "
                                   "(the default), not --by prompt")
        if prior is not None:
            raise click.UsageError("--style fits without a prior (no penalty): leave out --prior")
        from audit import style_rank
        frame = style_rank(current(db), pool, n_boot=n_boot, seed=seed)
        if as_json:
            emit_json(mark_juries(db, pool, style_document(frame, pool)))
        else:
            emit_table(frame.filter(pl.col("part") != "system").drop("value_raw", "rank", "rank_raw"),
                       "style coefficients (standardised features; excess = judge - human)")
            emit_table(frame.filter(pl.col("part") == "system")
                       .select("judge", "format", "decoding", pl.col("name").alias("id"), "rank_raw", "rank",
                               (pl.col("rank_raw") - pl.col("rank")).alias("moved_up"),
                               pl.col("value_raw").alias("strength_raw"), pl.col("value").alias("strength"),
                               "lo", "hi"), "systems: raw and style-controlled")
        return
    from audit import rank
    frame = rank(current(db), pool, by=by, n_boot=n_boot, seed=seed, prior=prior)
    if as_json:
        emit_json(mark_juries(db, pool, rank_document(frame, pool, by)))
    else:
        emit_table(frame.drop("n_units"))
