"""`judgeaudit label-queue` and `estimate`: which items to ask a person about, and what a cell's
verdicts are worth in human labels (docs/command-line.md#what-human-labels-are-worth)."""

from __future__ import annotations

import click

from ._common import current, db_option, emit_json, emit_table, json_option


@click.command("label-queue")
@click.option("--pool", required=True)
@click.option("--n", "n", type=int, required=True, help="items to draw")
@click.option("--kind", type=click.Choice(["pair", "accept"]), default="pair", show_default=True,
              help="pair: A / B / tie on two responses; accept: accept / reject one response")
@click.option("--strategy", type=click.Choice(["random", "active"]), default="random", show_default=True,
              help="random: uniform; active: uniform until 40 labels in the cell, then where the judge has erred")
@click.option("--judge", default=None, help="the cell the items come from (with --format)")
@click.option("--format", "fmt", default=None)
@click.option("--decoding", default=None, help="greedy | sampled | constrained (default: greedy, or the cell's only one)")
@click.option("--annotator", default="me", show_default=True, help="who will label the queue")
@click.option("--seed", type=int, default=0, show_default=True)
@db_option
@json_option
def label_queue_cmd(pool, n, kind, strategy, judge, fmt, decoding, annotator, seed, db, as_json):
    """Draw N items the annotator has not labelled and store them as their queue, each with its
    inclusion probability pi."""
    from audit import draw_label_queue
    from ingest.store import save_label_queue
    db = current(db)
    plan = draw_label_queue(db, pool, n, kind, strategy, judge, fmt, decoding, annotator, seed)
    items, n_frame, followed = plan["items"], plan["n_frame"], plan["active"]
    qid = save_label_queue(db, pool, annotator, kind, strategy, judge, fmt, plan["decoding"], seed, n_frame, followed,
                           items.select("prompt_idx", "a_idx", "b_idx", "cand_idx", "pi"))
    keys = ["prompt_id", "candidate_id", "pi"] if kind == "accept" else ["prompt_id", "a_id", "b_id", "pi"]
    doc = {"queue_id": qid, "pool": pool, "annotator": annotator, "kind": kind, "strategy": strategy,
           "active": followed, "n_frame": n_frame, "items": items.select(keys).to_dicts()}
    if as_json:
        emit_json(doc)
    else:
        emit_table(items.select(keys), f"queue {qid} for {annotator}: {items.height} of {n_frame} items"
                   + (" (inclusion follows the residuals)" if followed else " (uniform)"))


def estimate_document(frame) -> dict:
    """`estimate --json`: {"cells": [{judge, format, decoding, target, system, n_labelled, n_unlabelled,
    classical: {value, lo, hi}, ppi: {value, lo, hi, lambda}, effective_labels}]}, with `--strata` also
    stratified: {strata, n_strata, value, lo, hi, effective_labels}."""
    cells = []
    for r in frame.to_dicts():
        cell = {k: r[k] for k in ("judge", "format", "decoding", "target", "system", "n_labelled", "n_unlabelled")}
        cell["classical"] = {k: r[f"classical_{k}"] for k in ("value", "lo", "hi")}
        cell["ppi"] = {k: r[f"ppi_{k}"] for k in ("value", "lo", "hi", "lambda")}
        cell["effective_labels"] = r["effective_labels"]
        if "baseline" in r:
            cell["baseline"] = r["baseline"]
        if "strata" in r:
            cell["stratified"] = {"strata": r["strata"], "n_strata": r["n_strata"],
                                  **{k: r[f"stratified_{k}"] for k in ("value", "lo", "hi", "effective_labels")}}
        cells.append(cell)
    return {"cells": cells}


@click.command("estimate")
@click.option("--pool", required=True)
@click.option("--target", type=click.Choice(["accept", "winrate"]), required=True,
              help="accept: the share of candidates a human accepts; winrate: each system against the baseline")
@click.option("--baseline", default=None, help="winrate: the system the others are compared with "
              "(default: the one in the most labelled pairs)")
@click.option("--alpha", type=float, default=0.05, show_default=True, help="1 - the intervals' coverage")
@click.option("--strata", default=None, help="also a stratified PPI++ estimate, the items split by score-bin "
              "(five bins of the cell's score), category (the prompt's, from the pool file) or a candidate "
              "field: model, split, candidate_id")
@db_option
@json_option
def estimate_cmd(pool, target, baseline, alpha, strata, db, as_json):
    """Per cell: the interval from human labels alone, the prediction-powered (PPI++) one, and what
    the cell's verdicts are worth in human labels."""
    from audit import estimate
    frame = estimate(current(db), pool, target, baseline=baseline, alpha=alpha, strata=strata)
    if as_json:
        emit_json(estimate_document(frame))
    else:
        emit_table(frame.drop("target"))
