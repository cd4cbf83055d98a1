"""`judgeaudit alt-test` and `plan`: may a cell's verdicts replace the annotators who labelled the
pool, and what would more labels cost to be sure (docs/command-line.md#decide-with-the-labels)."""

from __future__ import annotations

import click
import polars as pl

from ._common import current, db_option, emit_json, emit_table, json_option

ALT_TEST_KEYS = ("judge", "format", "decoding", "kind", "alignment", "epsilon", "alpha", "min_items",
                 "winning_rate", "advantage_probability", "passed", "n_items", "n_annotators")


def alt_test_document(frame: pl.DataFrame) -> dict:
    """`alt-test --json`: {"cells": [{judge, format, decoding, kind, alignment, epsilon, alpha, min_items,
    winning_rate, advantage_probability, passed, n_items, n_annotators, annotators: [{annotator,
    n_items, p_value, advantage_probability, won}]}]} for the cells that could be tested."""
    return {"cells": [{**{k: r[k] for k in ALT_TEST_KEYS}, "annotators": r["annotators"]}
                      for r in frame.filter(pl.col("missing").is_null()).to_dicts()]}


@click.command("alt-test")
@click.option("--pool", required=True)
@click.option("--judge", required=True)
@click.option("--format", "fmt", required=True)
@click.option("--decoding", default=None, help="greedy | sampled | constrained (default: each of the cell's)")
@click.option("--epsilon", type=float, default=0.2, show_default=True,
              help="the advantage allowed the judge for its lower cost (the authors: 0.2 for experts, "
                   "0.15 for skilled annotators, 0.1 for crowd workers)")
@click.option("--alpha", type=float, default=0.05, show_default=True,
              help="the false discovery rate of the Benjamini-Yekutieli procedure over annotators")
@click.option("--kind", type=click.Choice(["pair", "accept"]), default=None,
              help="the labels tested (default: pair for a comparative format; accept for a pointwise one "
                   "when the pool holds accept labels, else pair)")
@click.option("--alignment", type=click.Choice(["accuracy", "neg_rmse"]), default="accuracy", show_default=True,
              help="accuracy: labels as categories; neg_rmse: as numbers (A 1, tie 0.5, B 0; accept 1, reject 0)")
@click.option("--min-items", type=int, default=30, show_default=True,
              help="items an annotator needs to be tested (the authors' minimum for the t-test: 30)")
@db_option
@json_option
def alt_test_cmd(pool, judge, fmt, decoding, epsilon, alpha, kind, alignment, min_items, db, as_json):
    """The alternative annotator test: leave each annotator out in turn and ask whether the judge
    represents the others as well as that annotator does, allowing the judge an advantage epsilon.
    Passes when the judge wins against at least half of the annotators."""
    from audit import AuditError, alt_test
    frame = alt_test(current(db), pool, judge, fmt, decoding, epsilon=epsilon, alpha=alpha, kind=kind,
                     alignment=alignment, min_items=min_items)
    if frame.height == 0:
        raise AuditError(f"no parsed verdicts of judge '{judge}', format '{fmt}'"
                         + (f", decoding '{decoding}'" if decoding else "") + f" in pool '{pool}'")
    refused = frame.filter(pl.col("missing").is_not_null())
    reasons = [f"alt-test of {r['judge']} / {r['format']} / {r['decoding']} ({r['kind']} labels) refused: "
               f"{r['missing']}" for r in refused.to_dicts()]
    if refused.height == frame.height:
        raise AuditError("; ".join(reasons))
    for line in reasons:
        click.echo(line, err=True)
    if as_json:
        emit_json(alt_test_document(frame))
        return
    for r in frame.filter(pl.col("missing").is_null()).to_dicts():
        emit_table(pl.DataFrame(r["annotators"]),
                   f"{r['judge']} / {r['format']} / {r['decoding']} on {r['kind']} labels, epsilon {r['epsilon']}: "
                   f"{'PASSED' if r['passed'] else 'FAILED'}, winning rate {r['winning_rate']:.2f} of "
                   f"{r['n_annotators']} annotators, advantage probability {r['advantage_probability']:.2f}, "
                   f"{r['n_items']} items")


PLAN_KEYS = ("judge", "format", "decoding", "target", "system", "n_labelled", "n_items", "n_frame",
             "labels_needed", "cost_usd", "plan", "plans", "reason")


def plan_document(frame: pl.DataFrame, pool: str, target: str, half_width: float, alpha: float,
                  label_price: float | None) -> dict:
    """`plan --json`: {"pool", "target", "half_width", "alpha", "human_label_usd", "cells": [{judge, format,
    decoding, target, system, n_labelled, n_items, n_frame, labels_needed, cost_usd, plan, plans:
    [{method, queue, half_width, labels_needed, label_cost_usd, calls_needed, call_cost_usd, cost_usd,
    reachable}],
    reason}]}, the cheapest first."""
    return {"pool": pool, "target": target, "half_width": half_width, "alpha": alpha,
            "human_label_usd": label_price, "cells": [{k: r[k] for k in PLAN_KEYS} for r in frame.to_dicts()]}


@click.command("plan")
@click.option("--pool", required=True)
@click.option("--target", type=click.Choice(["accept", "winrate"]), required=True,
              help="accept: the share of candidates a human accepts; winrate: each system against the baseline")
@click.option("--half-width", "half_width", type=float, required=True, help="the interval wanted: estimate ± H")
@click.option("--baseline", default=None, help="winrate: the system the others are compared with "
              "(default: the one in the most labelled pairs)")
@click.option("--alpha", type=float, default=0.05, show_default=True, help="1 - the intervals' coverage")
@db_option
@json_option
def plan_cmd(pool, target, half_width, baseline, alpha, db, as_json):
    """Per cell: the human labels still needed to reach +-H with the labels alone, with PPI++ and
    labels drawn at random, or with PPI++ and an active queue; their price and the judge calls still
    needed, at the prices in judgeaudit.toml. The cheapest plan first."""
    from audit import plan
    from ingest.endpoints import label_price, prices
    per_label = label_price(db)
    frame = plan(current(db), pool, target, half_width, baseline=baseline, alpha=alpha, prices=prices(db),
                 label_price=per_label)
    if as_json:
        emit_json(plan_document(frame, pool, target, half_width, alpha, per_label))
        return
    emit_table(frame.select("judge", "format", "decoding", "system", "n_labelled", "plan", "labels_needed",
                            "cost_usd", "reason"),
               f"labels still needed for +-{half_width} ({'no price per label in judgeaudit.toml' if per_label is None else f'{per_label} USD a label'})")
