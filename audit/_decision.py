"""The decision in words (docs/metrics.md#the-decision-in-words): per cell, where the judge is chosen
(the Judges page, the report), what its verdicts are worth in human labels, whether it passes the
alternative annotator test, and what an interval of ±H would cost; each number with its n, and "too few
labels to say" where that is the truth.

The numbers are those of `estimate` (effective_labels), `alt-test` and `plan` for the cell: for a
pointwise cell on accept labels when the pool holds any, else on pairs (the win rate of each system
against the baseline: effective labels averaged over the systems that have some, the labels and cost
of ±H summed over the systems, each by its cheapest plan).
"""

from __future__ import annotations

import os

import polars as pl

from ._alt_test_cells import alt_test
from ._plan import plan
from ._read import reading
from ._worth_cells import cell_arrays, estimate

DECISION_SCHEMA = {"judge": pl.String, "format": pl.String, "decoding": pl.String, "target": pl.String,
                   "n_labelled": pl.Int64, "n_systems": pl.Int64,
                   "effective_labels": pl.Float64, "epsilon": pl.Float64,
                   "alt_passed": pl.Boolean, "winning_rate": pl.Float64, "advantage_probability": pl.Float64,
                   "alt_annotators": pl.Int64, "alt_items": pl.Int64, "alt_missing": pl.String,
                   "half_width": pl.Float64, "labels_needed": pl.Int64, "cost_usd": pl.Float64,
                   "decision": pl.String}
DECISION_COLUMNS = list(DECISION_SCHEMA)
TOO_FEW = "too few labels to say"


def _worth_words(r: dict) -> str:
    if r["target"] is None or not r["n_labelled"]:
        return f"what its verdicts are worth: {TOO_FEW} (no human label of its items)"
    if r["effective_labels"] is None:
        return f"what its verdicts are worth: {TOO_FEW} (n = {r['n_labelled']} labelled items)"
    if r["target"] == "accept":
        return (f"its verdicts are worth {r['effective_labels']:.1f} human labels, against the "
                f"{r['n_labelled']} accept labels of its items")
    per = r["n_labelled"] / r["n_systems"]
    return (f"its verdicts are worth {r['effective_labels']:.1f} human labels per system, against {per:.1f} "
            f"labelled pairs per system ({r['n_systems']} systems' win rates, n = {r['n_labelled']} labelled pairs)")


def _alt_words(r: dict) -> str:
    head = f"alternative annotator test at ε = {r['epsilon']:g}"
    if r["alt_passed"] is None:
        return f"{head}: {TOO_FEW}: {r['alt_missing'] or 'no labels'}"
    verdict = "passes" if r["alt_passed"] else "fails"
    return (f"{head}: {verdict}, winning rate {r['winning_rate']:.2f} of {r['alt_annotators']} annotators, "
            f"advantage probability {r['advantage_probability']:.2f} (n = {r['alt_items']} items labelled twice "
            f"or more)")


def _price_words(r: dict) -> str:
    what = "the accept rate" if r["target"] == "accept" else "every system's win rate"
    if r["labels_needed"] is None:
        return f"±{r['half_width']:g} on {what}: {TOO_FEW} (a variance needs 2 labels of each system's items)" \
            if r["target"] == "winrate" else f"±{r['half_width']:g} on {what}: {TOO_FEW} (a variance needs 2 labels)"
    if r["labels_needed"] == 0:
        return f"±{r['half_width']:g} on {what}: reached with the labels already in (n = {r['n_labelled']})"
    cost = "no price per label in judgeaudit.toml" if r["cost_usd"] is None else f"≈ ${r['cost_usd']:,.2f}"
    return (f"±{r['half_width']:g} on {what}: {r['labels_needed']:,} more labels ({cost}) beyond the "
            f"{r['n_labelled']} labelled")


def decision_sentence(r: dict) -> str:
    """The cell's decision in words from its numbers (a row of DECISION_COLUMNS without `decision`)."""
    return "; ".join((_worth_words(r), _alt_words(r), _price_words(r))) + "."


def _summed(frame: pl.DataFrame, key: tuple) -> dict:
    rows = [r for r in frame.to_dicts() if (r["judge"], r["format"], r["decoding"]) == key]
    worth = [r["effective_labels"] for r in rows if r.get("effective_labels") is not None]
    needed = [r.get("labels_needed") for r in rows]
    costs = [r.get("cost_usd") for r in rows]
    return {"n_labelled": sum(r["n_labelled"] for r in rows), "n_systems": len(rows),
            "effective_labels": sum(worth) / len(worth) if worth else None,
            "labels_needed": None if not rows or None in needed else int(sum(needed)),
            "cost_usd": None if not rows or None in costs else float(sum(costs))}


def decisions(db: str | os.PathLike | None, pool: str, half_width: float = 0.05, epsilon: float = 0.2,
              alpha: float = 0.05, prices: dict | None = None, label_price: float | None = None) -> pl.DataFrame:
    """One row per cell of the pool (judge × format × decoding with parsed verdicts), DECISION_COLUMNS:
    target (accept | winrate | null without labels), n_labelled (labelled items of the cell, summed
    over systems), n_systems (1 for accept), effective_labels (the mean over systems), epsilon, alt_passed / winning_rate / advantage_probability /
    alt_annotators / alt_items / alt_missing (the alternative annotator test; alt_missing says why
    there is none), half_width (H), labels_needed and cost_usd (±H, summed over systems; cost null
    without prices), decision (the sentence)."""
    with reading(db) as read:
        pid = read.pool_id(pool)
        cells = read.frame("label_cells", pool_id=pid)
        held = read.frame("label_counts", pool_id=pid).row(0, named=True)
    alt = {(r["judge"], r["format"], r["decoding"]): r
           for r in alt_test(db, pool, epsilon=epsilon, alpha=alpha).to_dicts()}
    worth, plans = {}, {}
    for target, n in (("accept", held["accepts"]), ("winrate", held["pairs"])):
        if n:
            arrays = cell_arrays(db, pool, target, None)       # the items read once for both
            worth[target] = estimate(db, pool, target, alpha=alpha, arrays=arrays)
            plans[target] = plan(db, pool, target, half_width, alpha=alpha, prices=prices, label_price=label_price,
                                 arrays=arrays)
    rows = []
    for cell in cells.to_dicts():
        key = (cell["judge"], cell["format"], cell["decoding"])
        target = ("accept" if cell["kind"] == "pointwise" and "accept" in worth
                  else "winrate" if "winrate" in worth else None)
        row = {"judge": key[0], "format": key[1], "decoding": key[2], "target": target, "n_labelled": 0,
               "n_systems": 0,
               "effective_labels": None, "epsilon": epsilon, "half_width": half_width, "labels_needed": None,
               "cost_usd": None}
        if target is not None:
            w, p = _summed(worth[target], key), _summed(plans[target], key)
            row |= {"n_labelled": w["n_labelled"], "n_systems": w["n_systems"], "effective_labels": w["effective_labels"],
                    "labels_needed": p["labels_needed"], "cost_usd": p["cost_usd"]}
        a = alt.get(key, {})
        row |= {"alt_passed": a.get("passed"), "winning_rate": a.get("winning_rate"),
                "advantage_probability": a.get("advantage_probability"), "alt_annotators": a.get("n_annotators"),
                "alt_items": a.get("n_items"), "alt_missing": a.get("missing")}
        row["decision"] = decision_sentence(row)
        rows.append(row)
    return pl.DataFrame(rows, schema=DECISION_SCHEMA)


def decision_markdown(rows: list[dict]) -> list[str]:
    """The report's section: one bullet per cell, its decision in words."""
    if not rows:
        return []
    h, eps = rows[0]["half_width"], rows[0]["epsilon"]
    return ["## The decision, per cell", "",
            f"What each cell's verdicts are worth in human labels (`estimate`), whether it passes the alternative "
            f"annotator test at ε = {eps:g} (`alt-test`) and what ±{h:g} would cost (`plan`, at the prices in "
            f"judgeaudit.toml).", "",
            *[f"- **{r['judge']} × {r['format']} × {r['decoding']}**: {r['decision']}" for r in rows], ""]
