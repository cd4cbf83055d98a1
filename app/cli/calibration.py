"""`judgeaudit import-labels` and `calibrate`: human labels of candidate pairs, and the judge's
agreement with them (docs/command-line.md#judgeaudit-calibrate,
docs/metrics.md#agreement-with-humans-calibrate)."""

from __future__ import annotations

from pathlib import Path

import click

from ._common import current, db_option, emit_json, emit_table, json_option, jsonable, refresh_derived
from .judges import mark_juries
from ingest import UserError


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
    refresh_derived(db, pool)
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
    from audit import calibrate, human_ceiling, human_scale, stored_labels
    from ingest.store import declare_calibration, declared_threshold, finish_calibration, labels_description, labels_from_file
    db = current(db)
    if labels_file is not None:
        labels, _ = labels_from_file(db, labels_file, pool, source)
    else:
        labels = stored_labels(db, pool)
    scale = human_scale(db, pool, seed)
    if labels.height == 0 and scale.height == 0:
        raise UserError(f"pool '{pool}' has no labels: pass --labels FILE, or import them with "
                        "`judgeaudit import-labels`")
    if threshold is None:
        threshold = declared_threshold(db, pool)
    cid = declare_calibration(db, pool, threshold, target_width, labels_description(labels_file))
    cells = calibrate(db, pool, labels=labels, n_boot=n_boot, seed=seed, threshold=threshold,
                      target_width=target_width)
    humans = human_ceiling(db, pool, labels=labels, n_boot=n_boot, seed=seed).to_dicts()[0]
    doc = jsonable({"pool": pool, "calibration_id": cid, "labels": "stored" if labels_file is None else str(labels_file),
                     "threshold": threshold, "target_width": target_width, "humans": humans,
                     "cells": [cell_document(c) for c in cells.to_dicts()],
                     "human_scale": [scale_document(r) for r in scale.to_dicts()]})
    finish_calibration(db, cid, doc)
    if as_json:
        emit_json(mark_juries(db, pool, doc))
    else:
        emit_table(cells.drop("confusion", "target_width", *CONFIDENCE_KEYS))
        click.echo(f"humans (pairs with several annotators): {humans}")
        for c in cells.to_dicts():
            click.echo(confidence_line(c))
        for r in doc["human_scale"]:
            click.echo(scale_line(r))


CONFIDENCE_KEYS = ("n_prob", "probability_source", "ece", "brier", "ece_isotonic", "reliability")


def cell_document(cell: dict) -> dict:
    """A cell as `calibrate --json` prints it: the confusion table as a dict; the confidence keys
    only where the cell has label probabilities (docs/metrics.md#agreement-with-humans-calibrate)."""
    out = {**cell, "confusion": confusion_dict(cell["confusion"])}
    if cell.get("probability_source") is None:
        out = {k: v for k, v in out.items() if k not in CONFIDENCE_KEYS}
    return out


def confidence_line(cell: dict) -> str:
    """One line per cell on the judge's confidence against the labels, or how to get it."""
    name = f"{cell['judge']} / {cell['format']} / {cell['decoding']}"
    if cell.get("probability_source") is None:
        return (f"{name}: no label probabilities (score with --decoding constrained and logprobs, or ask each "
                f"call several times with --samples N --temperature T)")
    if not cell["n_prob"]:
        return f"{name}: probabilities from {cell['probability_source']}, but none on a pair the humans did not tie"
    iso = "n/a (one prompt)" if cell["ece_isotonic"] is None else f"{cell['ece_isotonic']:.3f}"
    return (f"{name}: {cell['n_prob']} judgements with p from {cell['probability_source']}: ECE "
            f"{cell['ece']:.3f}, Brier {cell['brier']:.3f}, ECE after isotonic recalibration {iso}")


def scale_document(row: dict) -> dict:
    """A cell's map to the human scale as `calibrate --json` prints it under `human_scale`
    (docs/metrics.md#scores-on-the-human-scale): the map as points {score, p}."""
    out = {k: v for k, v in row.items() if k not in ("map_score", "map_p")}
    return {**out, "map": [{"score": s, "p": p} for s, p in zip(row["map_score"], row["map_p"])]}


def scale_line(row: dict) -> str:
    """One line per cell and target: the map's n and the systems where it does not carry over."""
    flagged = [c["system"] for c in row["carry_over"] if c["flagged"]]
    what = "P(human accepts)" if row["target"] == "accept" else "P(human prefers)"
    return (f"{row['judge']} / {row['format']} / {row['decoding']}: scores mapped to {what} on {row['n']} labelled "
            f"items; carry-over " + (f"fails for {', '.join(flagged)}" if flagged else "holds for every system tested"))
