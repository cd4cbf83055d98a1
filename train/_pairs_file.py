"""Making a pairs file end to end: the cell's calls or scores from `audit`, the rule from
train.pairs, the TRL preference JSONL on disk, and beside it FILE.rule.json (the summary: the
cell, the margin, the orders, the losses), which a DPO run records as its data rule."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import polars as pl

import audit
from ingest import UserError
from ingest.files import file_sha256
from ingest.store import ensure_current

from .curate import heldout_prompts, heldout_rule, pick_cell
from .pairs import LOST, comparative_pairs, pointwise_pairs, to_preference_rows


def rule_path(pairs_file: str | os.PathLike) -> Path:
    """The summary written beside a pairs file: pairs.jsonl -> pairs.rule.json."""
    p = Path(pairs_file)
    return p.with_name(p.name.removesuffix(".jsonl") + ".rule.json")


def pair_cell(db, pool: str, judge: str, fmt: str, decoding: str | None = None, min_margin: float = 0.0,
              both_orders: bool = False, seed: int = 0):
    """(pairs, summary) of one cell of the pool, without writing anything. summary: pool, judge,
    format, decoding, kind, min_margin, both_orders, seed, pairs, prompts (with a pair), lost,
    n_tie_broken, n_heldout_prompts, heldout (the rule)."""
    if min_margin < 0:
        raise UserError(f"--min-margin {min_margin}: must be at least 0")
    pool_cands = audit.pool_candidates(db, pool)
    held = heldout_prompts(pool_cands)
    calls, decoding_c = pick_cell(audit.comparisons(db, pool), judge, fmt, decoding)
    if calls.height:
        kind, decoding = "comparative", decoding_c
        pairs, lost = comparative_pairs(calls, min_margin, both_orders, held)
    else:
        scores = audit.candidate_scores(db, pool)
        cell, decoding_p = pick_cell(scores, judge, fmt, decoding)
        if cell.height == 0:
            known = sorted({f"{j} × {f}" for j, f in scores.select("judge", "format").unique().iter_rows()})
            raise UserError(f"--judge {judge} --format {fmt}" + (f" --decoding {decoding}" if decoding else "")
                            + f": no verdicts for that cell in pool '{pool}' (scored: {', '.join(known) or 'none'})")
        if both_orders:
            raise UserError(f"--both-orders: format {fmt} is pointwise (each candidate is judged alone); "
                            "leave the flag out")
        kind, decoding = "pointwise", decoding_p
        pairs, lost = pointwise_pairs(cell, pool_cands.height, min_margin, seed, held)
    summary = {"pool": pool, "judge": judge, "format": fmt, "decoding": decoding, "kind": kind,
               "min_margin": float(min_margin), "both_orders": bool(both_orders), "seed": int(seed),
               "pairs": pairs.height, "prompts": pairs["prompt_idx"].n_unique() if pairs.height else 0,
               "lost": {k: lost[k] for k in LOST}, "n_tie_broken": int(pairs["tie_broken"].sum()),
               "n_heldout_prompts": held.len(), "heldout": heldout_rule(pool_cands)}
    return pairs, summary


TABLE_SCHEMA = {"format": "String", "decoding": "String", "kind": "String", "pairs": "Int64", "prompts": "Int64",
                **{k: "Int64" for k in LOST}}


def pair_table(db, pool: str, judge: str, min_margin: float = 0.0, both_orders: bool = False, seed: int = 0):
    """One row per (format, decoding) cell of the judge in the pool, comparative and pointwise:
    format, decoding, kind, pairs, prompts (with a pair), and the losses (LOST); --both-orders
    applies to the comparative cells only (a pointwise cell has one order)."""
    pool_cands = audit.pool_candidates(db, pool)
    held = heldout_prompts(pool_cands)
    rows = []
    calls = audit.comparisons(db, pool).filter(pl.col("judge") == judge)
    for (fmt, decoding), cell in sorted(calls.group_by("format", "decoding"), key=lambda g: g[0]):
        pairs, lost = comparative_pairs(cell, min_margin, both_orders, held)
        rows.append({"format": fmt, "decoding": decoding, "kind": "comparative", "pairs": pairs.height,
                     "prompts": pairs["prompt_idx"].n_unique(), **lost})
    scores = audit.candidate_scores(db, pool).filter((pl.col("judge") == judge) & (pl.col("score") == "label"))
    scores = scores.filter(~pl.col("format").is_in(calls["format"].unique().implode()))
    for (fmt, decoding), cell in sorted(scores.group_by("format", "decoding"), key=lambda g: g[0]):
        pairs, lost = pointwise_pairs(cell, pool_cands.height, min_margin, seed, held)
        rows.append({"format": fmt, "decoding": decoding, "kind": "pointwise", "pairs": pairs.height,
                     "prompts": pairs["prompt_idx"].n_unique(), **lost})
    return pl.DataFrame(rows, schema={k: getattr(pl, v) for k, v in TABLE_SCHEMA.items()})


def make_pairs(db, pool: str, judge: str, fmt: str, out: str | os.PathLike, decoding: str | None = None,
               min_margin: float = 0.0, both_orders: bool = False, seed: int = 0) -> dict:
    """Build the cell's pairs, write `out` (TRL conversational preference JSONL) and its rule file;
    the summary with out, sha256 and rule_file."""
    ensure_current(db)
    pairs, summary = pair_cell(db, pool, judge, fmt, decoding, min_margin, both_orders, seed)
    if pairs.height == 0:
        raise UserError(f"--judge {judge} --format {fmt}: no pairs (lost: "
                        + ", ".join(f"{k} {v}" for k, v in summary["lost"].items()) + "); lower --min-margin"
                        + (" or leave out --both-orders" if both_orders else ""))
    ids = sorted(set(pairs["chosen"].to_list()) | set(pairs["rejected"].to_list()))
    rows = to_preference_rows(pairs, audit.candidate_texts(db, pool, ids))
    payload = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    summary.update(out=str(out), sha256=hashlib.sha256(payload).hexdigest(), rule_file=str(rule_path(out)))
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_bytes(payload)
    rule_path(out).write_text(json.dumps(summary, indent=2), encoding="utf-8")
    os.replace(tmp, out)
    return summary


def read_rule(pairs_file: str | os.PathLike) -> dict | None:
    """The summary `make_pairs` wrote beside the file, when it is there and describes this file
    (its sha256 matches); else None."""
    p = rule_path(pairs_file)
    if not p.is_file():
        return None
    try:
        rule = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return rule if rule.get("sha256") == file_sha256(pairs_file) else None
