"""The Align page's rules, pure: the cells a judge can be aligned in, the form turned into the run's
request, and what a finished run's result says (docs/metrics.md#aligning-a-judge-align)."""

from __future__ import annotations

import polars as pl

from app.cli import request_for


def cell_options(cells: pl.DataFrame) -> list[tuple[str, str, str]]:
    """(judge, format, decoding) of each scored cell a judge can be asked again in: greedy or
    constrained, juries left out, sorted."""
    if cells.height == 0:
        return []
    keep = cells.filter(pl.col("decoding").is_in(["greedy", "constrained"]))
    if "aggregate" in keep.columns:
        keep = keep.filter(pl.col("aggregate") != "jury")
    return sorted(set(keep.select("judge", "format", "decoding").iter_rows()))


def align_request(pool: str, cell: tuple[str, str, str], demonstrations: int, budget: int, held_out: float):
    """The `judgeaudit align` request of the form (app.cli.request_for: the command's own parsing)."""
    judge, fmt, decoding = cell
    return request_for("align", pool=pool, judge=judge, fmt=fmt, decoding=decoding, demonstrations=int(demonstrations),
                       budget=int(budget), held_out=float(held_out))


def _interval(part: dict) -> str:
    return f"{part['value']:.3f} [{part['lo']:.3f}, {part['hi']:.3f}]"


def gain_sentence(doc: dict) -> str:
    """Before → after on the held-out items, and whether the gain's interval excludes 0."""
    g = doc["gain"]
    head = (f"Held-out agreement {_interval(doc['before'])} → {_interval(doc['after'])} on {doc['n_heldout_items']} "
            f"items of {doc['n_heldout_prompts']} held-out prompts; gain {g['value']:+.3f} "
            f"[{g['lo']:+.3f}, {g['hi']:+.3f}].")
    if g["lo"] > 0:
        return head + " The interval excludes 0: the aligned judge agrees with the humans more."
    if g["hi"] < 0:
        return head + " The interval lies below 0: the aligned judge agrees with the humans less."
    return head + " The interval runs through 0: no gain is shown."


def judge_sentence(doc: dict) -> str:
    if not doc["stored"]:
        return (f"Nothing beat {doc['original_judge']}'s own prompt on the training labels: no new judge was "
                "stored.")
    return (f"Stored as the judge **{doc['judge']}** (its identity binds the instructions and demonstrations "
            f"below); Drift and Judges compare it with {doc['original_judge']}. The search used "
            f"{doc['search_calls']} of {doc['budget']} calls and {doc['labels_used']} training labels.")


def reference_sentence(doc: dict) -> str | None:
    """The format's own tau_a and top-1 against the references, before → after on the held-out items;
    None when the run reports none (no reference in the pool, an anchored format, an older run)."""
    ref = doc.get("reference")
    if not ref:
        return None

    def num(v) -> str:
        return "–" if v is None else f"{v:.3f}"
    n = ref["n_prompts"]
    return (f"Against the references (the format's own measures, on the held-out prompts with two or more "
            f"ranked candidates: {n['before']} → {n['after']}): τa {num(ref['tau_a']['before'])} → "
            f"{num(ref['tau_a']['after'])}, top-1 {num(ref['top1']['before'])} → {num(ref['top1']['after'])}.")


def gepa_sentence(doc: dict) -> str | None:
    """What GEPA did in a `--optimizer gepa` run; None for the built-in search."""
    g = doc.get("gepa")
    if not g:
        return None
    kept = "its own wording won the search" if doc["instructions_name"] == "gepa" else \
        "the search kept another wording"
    return (f"GEPA: {len(g['candidates'])} wording(s) kept of its proposals, {g['metric_calls']} judge calls and "
            f"{g['reflection_calls']} reflection call(s) on the training minibatch; {kept}.")
