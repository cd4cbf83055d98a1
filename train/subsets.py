"""Making a subset end to end: scores and texts from `audit`, the rule from `curate`, the stored
record through `ingest.store`, the TRL JSONL file on disk."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import polars as pl

import audit
from ingest import UserError
from ingest.store import ensure_current, save_subset

from . import heldout
from .curate import POLICIES, select, subset_name, summarise


def pool_heldout(db: str | os.PathLike | None, pool: str, share: float | None = heldout.SHARE
                 ) -> tuple[pl.Series, dict]:
    """(prompt_idx of the held-out prompts, the rule): curate.heldout_prompts and heldout_rule on the
    pool's one row per prompt (audit.curation_prompts) instead of its every candidate."""
    prompts = audit.curation_prompts(db, pool)
    if share is None:
        marked = prompts.filter("marked_heldout")["prompt_idx"]
        return marked, {"rule": "split", "n": marked.len()}
    ids, rule = heldout.heldout_prompt_ids(prompts, share)
    return prompts.filter(pl.col("prompt_id").is_in(ids))["prompt_idx"], rule


def curate_pool(db: str | os.PathLike | None, pool: str, policy: str, rate: float, seed: int = 0,
                judge: str | None = None, fmt: str | None = None, holdout_share: float | None = heldout.SHARE,
                decoding: str | None = None, score: str = "label", by: str = "score") -> tuple[pl.DataFrame, dict, dict]:
    """(picks, summary, held-out rule): train.curate.curate(audit.pool_candidates(...),
    audit.candidate_scores(...), ...) and its heldout_rule, out of core: the pool is
    read as one row per prompt and (prompt_idx, cand_idx, value) of the one cell or baseline, the
    held-out prompts dropped by a mask over prompt_idx, then the same `select`. by='calibrated': a
    judge's scores replaced by P(a human accepts) under the cell's isotonic map on the accept labels
    (audit.human_scale; docs/metrics.md#scores-on-the-human-scale)."""
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r} (known: {', '.join(POLICIES)})")
    if policy == "full":
        rate = 1.0
    held, rule = pool_heldout(db, pool, holdout_share)
    if policy == "judge":
        if judge is None or fmt is None:
            raise ValueError("policy 'judge' needs a judge and a format")
        values, decoding = audit.cell_values(db, pool, judge, fmt, decoding, score)
        if by == "calibrated":
            mapped = audit.calibrated_values(audit.human_scale(db, pool), judge, fmt, decoding, values)
            if mapped is None:
                raise UserError(f"--by calibrated: no accept labels on candidates the cell {judge} × {fmt} "
                                f"({decoding}) scored in pool '{pool}': import accept/reject labels first")
            values = mapped
    else:
        values = audit.baseline_values(db, pool, policy).sort("cand_idx")
    picks = select_outside(db, pool, values, held, rate, seed)
    return picks, summarise(picks, held.len(), policy, judge, fmt, decoding, score, rate, seed), rule


def select_outside(db, pool: str, values: pl.DataFrame, held: pl.Series, rate: float, seed: int) -> pl.DataFrame:
    """curate.select over the candidates' `values` outside the held-out prompts `held` (prompt_idx)."""
    n_cands, n_prompts = audit.pool_extent(db, pool)
    return select(outside(values, held_mask(held, n_prompts)), rate, seed, n_cands, n_prompts)


def held_mask(held: pl.Series, n_prompts: int) -> np.ndarray:
    """Per prompt_idx of a pool of n_prompts prompts, whether it is held out (`held`: their prompt_idx)."""
    mask = np.zeros(max(n_prompts, 1), dtype=bool)
    mask[held.to_numpy()] = True
    return mask


def outside(values: pl.DataFrame, mask: np.ndarray) -> pl.DataFrame:
    """The rows of `values` whose prompt_idx is not held out (held_mask's `mask`)."""
    return values.filter(pl.Series(~mask[values["prompt_idx"].to_numpy()]))


def message_lines(examples: pl.DataFrame) -> list[str]:
    """json.dumps(row, ensure_ascii=False) of each row of to_messages(examples), byte for byte, with
    only the two texts encoded per row (half a million rows at 10M candidates)."""
    dumps = json.JSONEncoder(ensure_ascii=False).encode
    head, mid, tail = ('{"prompt": [{"role": "user", "content": ', '}], "completion": [{"role": "assistant", '
                       '"content": ', '}]}')
    return [head + dumps(p) + mid + dumps(r) + tail
            for p, r in zip(examples["prompt"].to_list(), examples["response"].to_list())]


def make_subset(db: str | os.PathLike | None, pool: str, policy: str, rate: float, out: str | os.PathLike,
                seed: int = 0, judge: str | None = None, fmt: str | None = None, decoding: str | None = None,
                score: str = "label", by: str = "score") -> dict:
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
    picks, summary, rule = curate_pool(db, pool, policy, rate, seed, judge, fmt, decoding=decoding, score=score, by=by)
    summary = {**summary, "by": by if policy == "judge" else None}
    if policy == "judge" and picks.height == 0 and not _cell_scored(db, pool, judge, fmt, summary["decoding"], score):
        cells = audit.scored_cells(db, pool)
        known = sorted({f"{j} × {f}" for j, f in cells.select("judge", "format").unique().iter_rows()})
        raise UserError(f"--judge {judge} --format {fmt}"
                        + (f" --decoding {decoding}" if decoding else "") + (f" --score {score}" if score != "label" else "")
                        + f": no scores for that cell in pool '{pool}' (scored: {', '.join(known) or 'none'})")
    kept = picks.filter("kept").sort("prompt_idx")
    if kept.height == 0:
        raise UserError(f"--rate {rate}: keeps 0 of {summary['n_eligible']} eligible prompts; raise the rate")
    texts = audit.candidate_texts(db, pool, kept["cand_idx"].to_list())
    lines = message_lines(texts)
    payload = ("\n".join(lines) + "\n").encode("utf-8")
    sha = hashlib.sha256(payload).hexdigest()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_bytes(payload)
    name = subset_name(summary)
    sid = save_subset(db, pool, name, summary, kept, sha256=sha, export_path=str(out.resolve()))
    os.replace(tmp, out)
    return {**summary, "heldout": rule, "pool": pool, "subset_id": sid, "name": name, "out": str(out), "sha256": sha,
            "n_examples": len(lines)}


def _cell_scored(db, pool: str, judge: str, fmt: str, decoding: str | None, score: str) -> bool:
    cells = audit.scored_cells(db, pool)
    return cells.filter((pl.col("judge") == judge) & (pl.col("format") == fmt) & (pl.col("score") == score)
                        & (pl.col("decoding") == decoding)).height > 0
