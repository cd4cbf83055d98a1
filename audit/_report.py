"""The reporting checklist (DESIGN.md): per judge x format, the format verbatim with its decoding
rule, tie probability and D2 beside the distinct values and pool size, the slot scheme and b for
comparative formats, and the parse rate. Built from the database alone."""

from __future__ import annotations

import json
import os

import polars as pl

from ._bias import bias
from ._cells import audit_cells
from ._db import connect, pool_id, query
from ._pools import pools


def _slot_scheme(run: dict | None, b_row: dict | None) -> str:
    if run is None:
        return "unknown"
    swaps = ""
    if b_row is not None:
        swaps = (f"; {b_row['n_reverse_calls']} of {b_row['n_calls']} calls in the reverse order, "
                 f"{b_row['n_pairs']} items seen in both orders")
    if run["source"] == "import":
        return "imported verdicts" + swaps
    return {"anchored": "candidate in slot A against the prompt's anchor",
            "listing": "tournament, earlier-listed candidate always Response A",
            "balanced": "tournament, each candidate in slot A as often as in B",
            "both": "tournament, every pair in both orders"}.get(run["schedule"] or "", run["schedule"] or "") + swaps


DECODING_RULES = {
    "greedy": "greedy: the judge's own answer (temperature 0, at most 16 new tokens), parsed against "
              "the format's labels; an answer that names no label is an unparsed verdict",
    "constrained": "constrained: the answer restricted to the format's labels while decoding, so "
                   "every verdict parses",
}
SCORE_RULES = {"label": "the parsed label's value",
               "expected": "the probability-weighted value over the format's labels (expected score)"}


def checklist(db: str | os.PathLike | None, pool: str, seed: int = 0) -> dict:
    """The checklist as the JSON document of DESIGN.md; a cell is (judge, format, decoding, score),
    and its `decoding` holds the recorded settings with the mode (greedy | constrained) as `mode`."""
    info = pools(db).filter(pl.col("name") == pool)
    cells = audit_cells(db, pool, seed=seed)
    slots = {(r["judge"], r["format"], r["decoding"]): r for r in bias(db, pool, seed=seed).to_dicts()}
    with connect(db) as con:
        runs = {(r["judge"], r["format"], r["decoding"]): r
                for r in query(con, "cell_runs", pool_id=pool_id(con, pool)).to_dicts()}
    out = []
    for cell in cells.to_dicts():
        key = (cell["judge"], cell["format"], cell["decoding"])
        run = runs.get(key)
        settings = json.loads(run["settings"]) if run and run["settings"] else {}
        decoding = {**settings, "mode": cell["decoding"], "rule": DECODING_RULES.get(cell["decoding"])}
        entry = {"judge": cell["judge"], "format": cell["format"], "score": cell["score"],
                 "score_rule": SCORE_RULES[cell["score"]],
                 "template": run["template"] if run else None, "decoding": decoding,
                 "source": run["source"] if run else None, "judge_model": run["judge_model"] if run else None,
                 "tie_prob": cell["tie_prob"], "d2": cell["d2"], "distinct": cell["distinct"],
                 "n_candidates": cell["n_candidates"], "parse_rate": cell["parse_rate"], "slot": None}
        if cell["kind"] == "comparative":
            b = slots.get(key)
            entry["slot"] = {"scheme": _slot_scheme(run, b), "b": b["b"] if b else None,
                             "b_lo": b["b_lo"] if b else None, "b_hi": b["b_hi"] if b else None}
        out.append(entry)
    row = info.to_dicts()[0]
    return {"pool": {"name": pool, "n_prompts": row["n_prompts"], "n_candidates": row["n_candidates"]},
            "cells": out}


def _num(x, digits=3) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def checklist_markdown(doc: dict) -> str:
    """The same checklist as Markdown."""
    p = doc["pool"]
    lines = [f"# Reporting checklist: pool `{p['name']}`", "",
             f"{p['n_prompts']} prompts, {p['n_candidates']} candidates.", ""]
    for c in doc["cells"]:
        d = c["decoding"]
        mode = d.get("mode", "greedy")
        expected = " (expected score)" if c["score"] == "expected" else ""
        lines += [f"## {c['judge']} × {c['format']} × {mode}{expected}", ""]
        if c["template"]:
            lines += ["1. Format, verbatim:", "", "```", c["template"].rstrip(), "```", ""]
        else:
            lines += ["1. Format: verdicts imported; the prompt template was not recorded.", ""]
        lines.append(f"   Decoding: {d.get('rule') or mode}.")
        settings = {k: v for k, v in d.items() if k not in ("mode", "rule")}
        lines += [f"   Settings: `{json.dumps(settings)}`." if settings else "   Settings: not recorded.",
                  f"   Score: {c['score_rule']}.", ""]
        lines.append(f"2. Tie probability {_num(c['tie_prob'])}, D2 = {_num(c['d2'], 2)} effective levels; "
                     f"{c['distinct']} distinct values over {c['n_candidates']} scored candidates.")
        if c["slot"] is not None:
            s = c["slot"]
            lines.append(f"3. Slots: {s['scheme']}. Estimated slot bias b = {_num(s['b'])} "
                         f"(95% CI {_num(s['b_lo'])} to {_num(s['b_hi'])}).")
        else:
            lines.append("3. Slots: pointwise format, no slot bias.")
        lines += [f"4. Parse rate {_num(c['parse_rate'])}.", ""]
    return "\n".join(lines)

