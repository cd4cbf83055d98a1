"""The alternative annotator test per cell of a pool (docs/metrics.md#may-the-judge-replace-the-annotators-alt-test):
the cell's verdicts become answers on the human labels' scale, the pool's labels become annotations,
and audit/_alt_test.py tests them.

A cell is tested on one kind of human label: `pair` (A / B / tie on two candidates of a prompt) or
`accept` (accept / reject of one candidate); by default a comparative cell on pairs, a pointwise cell
on accept labels when the pool holds any, else on pairs. A verdict becomes a label so:
- on a pair, the cell's preference f for the pair's first candidate (alt_test_pair_items.sql: a
  comparative cell's mean over its parsed calls on the pair, in both orders, of 1 / ½ / 0 by the
  margin's sign; a pointwise cell's 1 / ½ / 0 by the two scores) becomes A when f > ½, B when f < ½,
  tie at ½: the sign of its margins summed;
- on a candidate, its normalised score (the mean over its parsed samples) becomes accept when ≥ ½,
  else reject: a binary format's own answer, a scale's upper half.
Labels compare as categories (`accuracy`), or as the numbers A = 1, tie = ½, B = 0 and accept = 1,
reject = 0 (`neg_rmse`).

A cell that cannot be tested carries `missing`: what it lacks, in words (no labels of its kind, fewer
than two annotators, no item labelled twice, no verdict on those items, no annotator with the minimum
of items), and null numbers.
"""

from __future__ import annotations

import os

import polars as pl

from ._alt_test import ALIGNMENTS, MIN_ANNOTATORS, MIN_ITEMS, alt_test_annotations
from ._read import AuditError, reading

KINDS = ("pair", "accept")
ANNOTATOR_TYPE = pl.Struct({"annotator": pl.String, "n_items": pl.Int64, "p_value": pl.Float64,
                            "advantage_probability": pl.Float64, "won": pl.Boolean})
ALT_TEST_SCHEMA = {"judge": pl.String, "format": pl.String, "decoding": pl.String, "kind": pl.String,
                   "alignment": pl.String, "epsilon": pl.Float64, "alpha": pl.Float64, "min_items": pl.Int64,
                   "n_items": pl.Int64, "n_annotators": pl.Int64, "winning_rate": pl.Float64,
                   "advantage_probability": pl.Float64, "passed": pl.Boolean,
                   "annotators": pl.List(ANNOTATOR_TYPE), "missing": pl.String}
ALT_TEST_COLUMNS = list(ALT_TEST_SCHEMA)
SHOWN = 3                # the annotators a refusal names


def answer_of(f: float, kind: str) -> float:
    """A verdict as a label on the humans' scale: for a pair, 1 (A: the pair's first candidate), ½ (tie)
    or 0 (B) by the sign of f − ½; for a candidate, 1 (accept) when f ≥ ½, else 0 (reject). f is rounded
    to 12 decimals first, so a preference that sums to a tie is one."""
    f = round(float(f), 12)
    if kind == "accept":
        return 1.0 if f >= 0.5 else 0.0
    return 1.0 if f > 0.5 else 0.0 if f < 0.5 else 0.5


def annotations(items: pl.DataFrame, key: list[str], kind: str) -> tuple[dict, dict]:
    """(judge: item -> answer, humans: annotator -> {item -> label}) from one cell's item rows (key
    columns, annotator, y, f); annotators in name order, each one's items in the rows' order."""
    judge, humans = {}, {}
    for row in items.sort("annotator", maintain_order=True).iter_rows(named=True):
        item = tuple(row[k] for k in key)
        judge[item] = answer_of(row["f"], kind)
        humans.setdefault(row["annotator"], {})[item] = row["y"]
    return judge, humans


def _too_few(result: dict, min_items: int) -> str:
    most = sorted(result["skipped"].items(), key=lambda kv: (-kv[1], kv[0]))[:SHOWN]
    named = ", ".join(f"{h} {n}" for h, n in most)
    return (f"no annotator has {min_items} items that 2 or more annotators labelled and the cell judged "
            f"(there are {result['n_items']} such items; the most: {named}); each annotator tested needs "
            f"{min_items} ({most[0][0]} needs {min_items - most[0][1]} more)")


def missing_labels(kind: str, counts: dict) -> str | None:
    """Why the pool's labels of `kind` cannot test any cell (counts: annotators, items, shared), or None."""
    what = "pair labels (A / B / tie)" if kind == "pair" else "accept labels (accept / reject)"
    if not counts.get("items"):
        return f"the pool holds no {what}"
    if counts["annotators"] < MIN_ANNOTATORS:
        return (f"the test needs at least {MIN_ANNOTATORS} annotators; the pool's {what} name only "
                f"{counts['annotators']}")
    if not counts["shared"]:
        return f"none of the {counts['items']} items of the pool's {what} was labelled by 2 or more annotators"
    return None


def cell_result(items: pl.DataFrame, kind: str, epsilon: float, alpha: float, how: str, min_items: int,
                counts: dict) -> dict:
    """The test's numbers for one cell (its item rows) and why it could not be run, if it could not."""
    key = ["lo_idx", "hi_idx"] if kind == "pair" else ["cand_idx"]
    empty = {"n_items": 0, "n_annotators": 0, "winning_rate": None, "advantage_probability": None,
             "passed": None, "annotators": []}
    why = missing_labels(kind, counts)
    if why is None and items.height == 0:
        why = f"the cell has no verdict on the {counts['shared']} items that 2 or more annotators labelled"
    if why is not None:
        return {**empty, "missing": why}
    judge, humans = annotations(items, key, kind)
    result = alt_test_annotations(judge, humans, epsilon, alpha, how, min_items)
    if not result["tested"]:
        return {**empty, "n_items": result["n_items"], "missing": _too_few(result, min_items)}
    return {"n_items": result["n_items"], "n_annotators": len(result["tested"]),
            "winning_rate": result["winning_rate"], "advantage_probability": result["advantage_probability"],
            "passed": result["passed"], "annotators": result["tested"], "missing": None}


def _check(epsilon: float, alpha: float, kind: str | None, how: str, min_items: int) -> None:
    if not 0 <= epsilon < 1:
        raise AuditError(f"--epsilon {epsilon}: must be at least 0 and below 1")
    if not 0 < alpha < 1:
        raise AuditError(f"--alpha {alpha}: must be between 0 and 1")
    if kind is not None and kind not in KINDS:
        raise AuditError(f"--kind {kind}: use pair or accept")
    if how not in ALIGNMENTS:
        raise AuditError(f"--alignment {how}: use {' or '.join(ALIGNMENTS)}")
    if min_items < 2:
        raise AuditError(f"--min-items {min_items}: a t-test needs at least 2 items")


def alt_test(db: str | os.PathLike | None, pool: str, judge: str | None = None, format: str | None = None,
             decoding: str | None = None, epsilon: float = 0.2, alpha: float = 0.05, kind: str | None = None,
             alignment: str = "accuracy", min_items: int = MIN_ITEMS) -> pl.DataFrame:
    """One row per cell of the pool (judge × format × decoding with parsed verdicts; only those of
    `judge`, `format`, `decoding` where given). Columns ALT_TEST_COLUMNS: judge, format, decoding; kind
    (the labels tested: pair | accept); alignment, epsilon, alpha, min_items (as asked); n_items (items
    labelled by ≥ 2 annotators that the cell judged); n_annotators (annotators with ≥ min_items of
    them: those tested); winning_rate (ω), advantage_probability (ρ), passed (ω ≥ 0.5); annotators
    (per annotator tested: annotator, n_items, p_value, advantage_probability = mean(W), won);
    missing (why the cell could not be tested, in words; null when it was)."""
    _check(epsilon, alpha, kind, alignment, min_items)
    with reading(db) as read:
        pid = read.pool_id(pool)
        cells = read.frame("label_cells", pool_id=pid)
        counts = {r["kind"]: r for r in read.frame("alt_test_labels", pool_id=pid).to_dicts()}
        for column, wanted in (("judge", judge), ("format", format), ("decoding", decoding)):
            cells = cells if wanted is None else cells.filter(pl.col(column) == wanted)
        args = {"pool_id": pid, "judge": judge, "format": format, "decoding": decoding}
        empty = pl.DataFrame(schema={"judge": pl.String, "format": pl.String, "decoding": pl.String})
        pair_items, accept_items = (read.frame(f"alt_test_{k}_items", **args) if cells.height and counts[k]["shared"]
                                    else empty for k in KINDS)   # no item labelled twice: nothing to read
    rows = []
    for cell in cells.iter_rows(named=True):
        which = kind or ("pair" if cell["kind"] == "comparative" or not counts["accept"]["items"] else "accept")
        sel = (pl.col("judge") == cell["judge"]) & (pl.col("format") == cell["format"]) \
            & (pl.col("decoding") == cell["decoding"])
        head = {"judge": cell["judge"], "format": cell["format"], "decoding": cell["decoding"], "kind": which,
                "alignment": alignment, "epsilon": epsilon, "alpha": alpha, "min_items": min_items}
        if which == "accept" and cell["kind"] != "pointwise":
            rows.append({**head, "n_items": 0, "n_annotators": 0, "annotators": [],
                         "missing": f"accept labels need a pointwise cell; format '{cell['format']}' is comparative"})
            continue
        items = (accept_items if which == "accept" else pair_items).filter(sel)
        rows.append({**head, **cell_result(items, which, epsilon, alpha, alignment, min_items, counts[which])})
    return pl.DataFrame([{c: r.get(c) for c in ALT_TEST_COLUMNS} for r in rows], schema=ALT_TEST_SCHEMA)
