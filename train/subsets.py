"""Making a subset end to end: scores and texts from `audit`, the rule from `curate`, the stored
record through `ingest.store`, the TRL JSONL file on disk."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import audit
from ingest import UserError
from ingest.store import ensure_current, save_subset

from .curate import POLICIES, curate, heldout_rule, pick_cell, subset_name, to_messages


def make_subset(db: str | os.PathLike | None, pool: str, policy: str, rate: float, out: str | os.PathLike,
                seed: int = 0, judge: str | None = None, fmt: str | None = None, decoding: str | None = None,
                score: str = "label") -> dict:
    """Curate, export `out` (TRL conversational prompt-completion JSONL) and store the subset.

    Returns the curation summary with subset_id, name, out, sha256 and n_examples.
    """
    if policy not in POLICIES:
        raise UserError(f"--policy: unknown policy {policy!r} (known: {', '.join(POLICIES)})")
    if policy == "judge" and (not judge or not fmt):
        raise UserError("--judge and --format are required (or choose --policy random|length|full)")
    if not 0 < rate <= 1:
        raise UserError(f"--rate {rate}: must be in (0, 1]")
    ensure_current(db)
    pool_cands = audit.pool_candidates(db, pool)
    scores = None
    if policy == "judge":
        scores = audit.candidate_scores(db, pool, judge=judge, fmt=fmt)   # that cell alone, read in blocks
        cell, _ = pick_cell(scores, judge, fmt, decoding, score)
        if cell.height == 0:
            cells = audit.score_values(db, pool)
            known = sorted({f"{j} × {f}" for j, f in cells.select("judge", "format").unique().iter_rows()})
            raise UserError(f"--judge {judge} --format {fmt}"
                            + (f" --decoding {decoding}" if decoding else "") + (f" --score {score}" if score != "label" else "")
                            + f": no scores for that cell in pool '{pool}' (scored: {', '.join(known) or 'none'})")
    picks, summary = curate(pool_cands, scores, policy, rate, seed, judge, fmt, decoding=decoding, score=score)
    kept = picks.filter("kept").sort("prompt_idx")
    if kept.height == 0:
        raise UserError(f"--rate {rate}: keeps 0 of {summary['n_eligible']} eligible prompts; raise the rate")
    texts = audit.candidate_texts(db, pool, kept["cand_idx"].to_list())
    lines = [json.dumps(row, ensure_ascii=False) for row in to_messages(texts)]
    payload = ("\n".join(lines) + "\n").encode("utf-8")
    sha = hashlib.sha256(payload).hexdigest()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_bytes(payload)
    name = subset_name(summary)
    sid = save_subset(db, pool, name, summary, kept, sha256=sha, export_path=str(out.resolve()))
    os.replace(tmp, out)
    return {**summary, "heldout": heldout_rule(pool_cands), "pool": pool, "subset_id": sid, "name": name, "out": str(out), "sha256": sha,
            "n_examples": len(lines)}
