"""Can the judge be trusted? `rank`, `import-labels`, `calibrate` and `drift` (DESIGN.md 'Command
line' and 'Calibration, probes and drift'). Thin: parse flags, call ingest or audit, print."""

from __future__ import annotations

from pathlib import Path

import click
import polars as pl

from .cli import current, db_option, emit_json, emit_table, json_option

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


@click.command("import-labels")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--pool", required=True, help="the pool the labelled pairs belong to")
@click.option("--source", type=click.Choice(["jsonl", "mtbench", "llmfao"]), default="jsonl", show_default=True,
              help="jsonl: prompt_id, a_id, b_id, label (A|B|tie) [, annotator]; mtbench: MT-Bench expert "
                   "votes; llmfao: LLMFAO crowd votes")
@click.option("--replace", is_flag=True, help="drop the pool's stored labels first")
@db_option
@json_option
def import_labels_cmd(file, pool, source, replace, db, as_json):
    """Import human labels of candidate pairs (whole file or nothing)."""
    from ingest.store import import_labels
    result = import_labels(current(db), file, pool, source=source, replace=replace)
    if as_json:
        emit_json(result)
    else:
        skipped = ", ".join(f"{k} {v}" for k, v in result["skipped"].items()) or "none"
        click.echo(f"imported {result['imported']} labels into pool '{pool}' ({result['already_stored']} already "
                   f"stored; {result['n_pairs']} pairs, {result['n_annotators']} annotators); skipped: {skipped}")


def confusion_dict(flat: list[int]) -> dict:
    """9 counts (rows humans A, B, tie; columns judge) -> {"A": {"A": n, "B": n, "tie": n}, ...}."""
    cats = ("A", "B", "tie")
    return {h: {j: flat[3 * r + c] for c, j in enumerate(cats)} for r, h in enumerate(cats)}


@click.command("calibrate")
@click.option("--pool", required=True)
@click.option("--labels", "labels_file", type=click.Path(path_type=Path), default=None,
              help="labels file (default: the labels imported for the pool)")
@click.option("--source", type=click.Choice(["jsonl", "mtbench", "llmfao"]), default="jsonl", show_default=True,
              help="layout of --labels")
@click.option("--threshold", type=float, default=None,
              help="acceptance threshold on kappa, saved before the run (default: the pool's last declared one)")
@click.option("--target-width", type=float, default=0.2, show_default=True,
              help="kappa interval width to plan the number of labelled pairs for")
@click.option("--n-boot", default=2000, show_default=True, help="bootstrap resamples")
@click.option("--seed", default=0, show_default=True, help="seed of the bootstrap")
@db_option
@json_option
def calibrate_cmd(pool, labels_file, source, threshold, target_width, n_boot, seed, db, as_json):
    """Agreement with human labels per (judge, comparative format): raw, Cohen's kappa, ceiling."""
    from audit import calibrate, human_ceiling, stored_labels
    from ingest import UserError
    from ingest.store import declare_calibration, declared_threshold, finish_calibration, labels_description, labels_from_file
    from .cli import _jsonable
    db = current(db)
    if labels_file is not None:
        labels, _ = labels_from_file(db, labels_file, pool, source)
    else:
        labels = stored_labels(db, pool)
        if labels.height == 0:
            raise UserError(f"pool '{pool}' has no labels: pass --labels FILE, or import them with "
                            "`judgeaudit import-labels`")
    if threshold is None:
        threshold = declared_threshold(db, pool)
    cid = declare_calibration(db, pool, threshold, target_width, labels_description(labels_file))
    cells = calibrate(db, pool, labels=labels, n_boot=n_boot, seed=seed, threshold=threshold,
                      target_width=target_width)
    humans = human_ceiling(db, pool, labels=labels, n_boot=n_boot, seed=seed).to_dicts()[0]
    doc = _jsonable({"pool": pool, "calibration_id": cid, "labels": "stored" if labels_file is None else str(labels_file),
                     "threshold": threshold, "target_width": target_width, "humans": humans,
                     "cells": [{**c, "confusion": confusion_dict(c["confusion"])} for c in cells.to_dicts()]})
    finish_calibration(db, cid, doc)
    if as_json:
        emit_json(doc)
    else:
        emit_table(cells.drop("confusion", "target_width"))
        click.echo(f"humans (pairs with several annotators): {humans}")


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
