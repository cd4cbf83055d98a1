"""Curation (docs/training.md#curating): a policy picks one response per prompt, then keeps
a share r of the prompts. Pure polars and numpy, frames in, frames out.

- judge x format: per prompt the highest score, ties broken by `audit.tiebreak_key` (the key of
  the audit's top1, so both pick the same candidate for the same seed); then the top r of prompts
  by that score, ties at the cut broken by a seeded key per prompt.
- random: a uniform response per prompt, a uniform r of prompts (the same machinery with every
  value equal: each pick is a draw).
- length: the longest response (characters), then the top r of prompts by that length.
- full: every prompt (r = 1), its reference-top response; prompts without a reference are left out.

Held-out prompts are never eligible: those the pool marks (split = heldout), else the seeded share
that evaluation answers (train.heldout, shared with evaluation). The subset holds
round(r x eligible prompts) prompts, rounded half up. Both stages record which picks were
tie-breaks: a pick among >= 2 candidates sharing the prompt's top value, and a prompt kept by the
coin among prompts sharing the value at the cut.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import polars as pl

from audit import tiebreak_key

from . import heldout

POLICIES = ("judge", "random", "length", "full")

PICK_SCHEMA = {"prompt_idx": pl.Int64, "cand_idx": pl.Int64, "value": pl.Float64, "n_top": pl.Int64,
               "pick_tied": pl.Boolean, "rank": pl.Int64, "kept": pl.Boolean, "cut_tied": pl.Boolean}


def keep_count(rate: float, n_eligible: int) -> int:
    """round(rate x n_eligible), halves rounded up (0.5 -> 1, 2.5 -> 3)."""
    if not 0 < rate <= 1:
        raise ValueError(f"rate must be in (0, 1], not {rate}")
    return min(n_eligible, int(math.floor(rate * n_eligible + 0.5)))


def prompt_key(n_prompts: int, seed: int) -> np.ndarray:
    """The seeded key of each of a pool's prompts (by prompt_idx) for ties at the cut; a stream of
    its own, so it does not repeat the candidates' keys."""
    return np.random.default_rng([seed, 1]).random(n_prompts)


@functools.lru_cache(maxsize=2)
def prompts_by_key(n_prompts: int, seed: int) -> np.ndarray:
    """The pool's prompt indices by prompt_key, descending (a tie: the lower index first), computed once
    per (pool size, seed): the curations of several cells of a pool share it (read-only)."""
    order = np.argsort(-prompt_key(n_prompts, seed), kind="stable")
    order.flags.writeable = False
    return order


def by_prompt_key(p_idx: np.ndarray, n_prompts: int, seed: int) -> np.ndarray:
    """np.argsort(-prompt_key(n_prompts, seed)[p_idx], kind="stable") for prompt indices in ascending order,
    each at most once (a prompt's one pick): the pool's prompts_by_key with the others left out, no sort."""
    if p_idx.size > 1 and not np.all(p_idx[1:] > p_idx[:-1]):
        return np.argsort(-prompt_key(n_prompts, seed)[p_idx], kind="stable")
    place = np.full(n_prompts, -1, dtype=np.int64)
    place[p_idx] = np.arange(p_idx.size)
    ordered = place[prompts_by_key(n_prompts, seed)]
    return ordered[ordered >= 0]


def select(cands: pl.DataFrame, rate: float, seed: int, n_pool_candidates: int,
           n_pool_prompts: int) -> pl.DataFrame:
    """The two stages on eligible candidates.

    `cands`: prompt_idx, cand_idx, value (higher is better; no nulls). The candidate key is
    tiebreak_key(n_pool_candidates, seed)[cand_idx], the prompt key prompt_key(n_pool_prompts,
    seed)[prompt_idx]. Returns one row per eligible prompt (columns PICK_SCHEMA, by rank):
    the picked cand_idx and its value, n_top (candidates holding the prompt's top value),
    pick_tied (n_top >= 2), rank (0 = best), kept, cut_tied (decided by the coin at the cut: its
    value equals the cut value and that group is split between kept and dropped).
    """
    if cands.height == 0:
        return pl.DataFrame(schema=PICK_SCHEMA)
    if cands["value"].null_count() or cands["value"].is_nan().any():
        raise ValueError("select: every candidate needs a value")
    # in numpy (10M candidates): group by prompt with one stable sort (none when the rows
    # come prompt by prompt), the top value and the largest key among it per group by reduceat
    prompt = cands["prompt_idx"].cast(pl.Int64).to_numpy()
    cand = cands["cand_idx"].cast(pl.Int64).to_numpy()
    value = cands["value"].cast(pl.Float64).to_numpy()
    if prompt.size > 1 and np.any(prompt[1:] < prompt[:-1]):
        order = np.argsort(prompt, kind="stable")
        prompt, cand, value = prompt[order], cand[order], value[order]
    key = tiebreak_key(n_pool_candidates, seed)[cand]
    starts = np.flatnonzero(np.r_[True, prompt[1:] != prompt[:-1]])
    sizes = np.diff(np.r_[starts, prompt.size])
    top = value == np.repeat(np.maximum.reduceat(value, starts), sizes)
    n_top = np.add.reduceat(top.astype(np.int64), starts)
    masked = np.where(top, key, -1.0)              # keys are in [0, 1): a top member always wins
    pick = np.flatnonzero(masked == np.repeat(np.maximum.reduceat(masked, starts), sizes))
    p_idx, p_val = prompt[pick], value[pick]
    by_key = by_prompt_key(p_idx, n_pool_prompts, seed)
    by_rank = by_key[np.argsort(-p_val[by_key], kind="stable")]     # value, then the prompt key, descending
    n_keep = keep_count(rate, pick.size)
    rank = np.arange(pick.size, dtype=np.int64)
    kept = rank < n_keep
    p_val = p_val[by_rank]
    cut = p_val[n_keep - 1] if n_keep > 0 else None
    split = cut is not None and bool(np.any(~kept & (p_val == cut)))   # the cut's value is also dropped
    return pl.DataFrame({"prompt_idx": p_idx[by_rank], "cand_idx": cand[pick][by_rank], "value": p_val,
                         "n_top": n_top[by_rank], "pick_tied": n_top[by_rank] >= 2, "rank": rank, "kept": kept,
                         "cut_tied": (p_val == cut) if split else np.zeros(pick.size, dtype=bool)},
                        schema=PICK_SCHEMA)


def heldout_prompts(pool_cands: pl.DataFrame, share: float | None = heldout.SHARE) -> pl.Series:
    """prompt_idx of the held-out prompts, by the rule evaluation shares (train.heldout): those
    the pool marks (any candidate with split 'heldout'); in a pool that marks none, the seeded
    `share` of prompts (share None: marked ones only)."""
    prompts = pool_cands.group_by("prompt_idx", maintain_order=True).agg(
        pl.col("prompt_id").first(), (pl.col("split") == "heldout").any().alias("marked_heldout"))
    if share is None:
        return prompts.filter("marked_heldout")["prompt_idx"]
    ids, _ = heldout.heldout_prompt_ids(prompts, share)
    return prompts.filter(pl.col("prompt_id").is_in(ids))["prompt_idx"]


def heldout_rule(pool_cands: pl.DataFrame, share: float | None = heldout.SHARE) -> dict:
    """The rule heldout_prompts applies to this pool: {"rule": "split", "n"} when the pool marks
    prompts, else {"rule": "share", "share", "seed", "n"} (recorded with a training run, so that
    evaluation can refuse another rule)."""
    prompts = pool_cands.group_by("prompt_idx", maintain_order=True).agg(
        pl.col("prompt_id").first(), (pl.col("split") == "heldout").any().alias("marked_heldout"))
    if share is None:
        return {"rule": "split", "n": int(prompts["marked_heldout"].sum())}
    return heldout.heldout_prompt_ids(prompts, share)[1]


def pick_cell(scores: pl.DataFrame, judge: str, fmt: str, decoding: str | None = None,
              score: str = "label") -> tuple[pl.DataFrame, str | None]:
    """The rows of one audit cell (judge, format, decoding, score) from `scores` (as
    audit.candidate_scores returns it), and the cell's decoding: with decoding None, the cell's
    only mode, or of two the paper's (greedy)."""
    cell = scores.filter((pl.col("judge") == judge) & (pl.col("format") == fmt))
    if "score" in cell.columns:
        cell = cell.filter(pl.col("score") == score)
    if "decoding" not in cell.columns:
        return cell, decoding
    if decoding is None:
        modes = sorted(cell["decoding"].unique().to_list())
        decoding = modes[0] if len(modes) == 1 else "greedy"
    return cell.filter(pl.col("decoding") == decoding), decoding


def eligible(pool_cands: pl.DataFrame, scores: pl.DataFrame | None, policy: str, judge: str | None = None,
             fmt: str | None = None, held: pl.Series | None = None, decoding: str | None = None,
             score: str = "label") -> pl.DataFrame:
    """The candidates a policy chooses among, with the value it selects by: prompt_idx, cand_idx,
    value. The prompts in `held` (prompt_idx; default: heldout_prompts) are left out.

    `pool_cands` as audit.pool_candidates returns it (row = cand_idx); `scores` as
    audit.candidate_scores (policy 'judge' only; the cell as `pick_cell` picks it).
    """
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r} (known: {', '.join(POLICIES)})")
    cands = pool_cands.with_row_index("cand_idx").with_columns(pl.col("cand_idx").cast(pl.Int64))
    held = heldout_prompts(pool_cands) if held is None else held
    cands = cands.filter(~pl.col("prompt_idx").is_in(held.implode()))
    if policy == "judge":
        if scores is None or judge is None or fmt is None:
            raise ValueError("policy 'judge' needs scores, a judge and a format")
        cell, _ = pick_cell(scores, judge, fmt, decoding, score)
        out = cands.select("cand_idx").join(cell.select("cand_idx", pl.col("s").alias("value")),
                                            on="cand_idx").join(cands.select("cand_idx", "prompt_idx"), on="cand_idx")
    elif policy == "random":
        out = cands.select("cand_idx", "prompt_idx", pl.lit(0.0).alias("value"))
    elif policy == "length":
        out = cands.select("cand_idx", "prompt_idx", pl.col("response_chars").cast(pl.Float64).alias("value"))
    else:
        out = cands.filter(pl.col("reference").is_not_null()) \
            .select("cand_idx", "prompt_idx", pl.col("reference").cast(pl.Float64).alias("value"))
    return out.select(pl.col("prompt_idx").cast(pl.Int64), "cand_idx", pl.col("value").cast(pl.Float64)) \
        .filter(pl.col("value").is_not_nan()).sort("cand_idx")


def curate(pool_cands: pl.DataFrame, scores: pl.DataFrame | None, policy: str, rate: float, seed: int = 0,
           judge: str | None = None, fmt: str | None = None,
           holdout_share: float | None = heldout.SHARE, decoding: str | None = None,
           score: str = "label") -> tuple[pl.DataFrame, dict]:
    """(picks, summary): `select` over `eligible`; policy 'full' always keeps every prompt.
    Held-out prompts: heldout_prompts(pool_cands, holdout_share).

    summary: policy, judge, format, decoding, score, rate, seed, n_eligible (prompts), n_selected, n_pick_tied
    (selected prompts whose response was a tie-break), n_cut_tied (selected prompts kept by the
    coin at the cut), n_tie_broken (selected prompts with either), n_heldout_prompts, cut_value (the lowest kept value; None when empty).
    """
    if policy == "full":
        rate = 1.0
    held = heldout_prompts(pool_cands, holdout_share)
    if policy == "judge" and scores is not None:
        decoding = pick_cell(scores, judge, fmt, decoding, score)[1]
    cands = eligible(pool_cands, scores, policy, judge, fmt, held, decoding, score)
    n_prompts = int(pool_cands["prompt_idx"].max()) + 1 if pool_cands.height else 0
    picks = select(cands, rate, seed, pool_cands.height, n_prompts)
    return picks, summarise(picks, held.len(), policy, judge, fmt, decoding, score, rate, seed)


def summarise(picks: pl.DataFrame, n_heldout_prompts: int, policy: str, judge, fmt, decoding, score, rate: float,
              seed: int) -> dict:
    """A curation's summary: its choices, the eligible and selected prompts, how many picks and cuts a
    tie decided, the held-out prompts and the cut's value (the last kept pick's)."""
    kept = picks.filter("kept")
    by_judge = policy == "judge"
    return {"policy": policy, "judge": judge if by_judge else None, "format": fmt if by_judge else None,
            "decoding": decoding if by_judge else None, "score": score if by_judge else None,
            "rate": float(rate), "seed": int(seed), "n_eligible": picks.height, "n_selected": kept.height,
            "n_pick_tied": int(kept["pick_tied"].sum()), "n_cut_tied": int(kept["cut_tied"].sum()),
            "n_tie_broken": int((kept["pick_tied"] | kept["cut_tied"]).sum()),
            "n_heldout_prompts": n_heldout_prompts,
            "cut_value": float(kept["value"][-1]) if kept.height else None}


def subset_name(summary: dict) -> str:
    """A subset's name in the store: judge x format (or the baseline) @ rate, seed."""
    what = summary["policy"]
    if what == "judge":
        what = f"{summary['judge']}×{summary['format']}" + "".join(
            f"·{v}" for v in (summary.get("decoding"), summary.get("score"), summary.get("by"))
            if v not in (None, "greedy", "label", "score"))
    return f"{what}@{summary['rate']:g}#s{summary['seed']}"


def jaccard(a: set, b: set) -> float | None:
    """|a ∩ b| / |a ∪ b|; None when both are empty."""
    union = a | b
    return len(a & b) / len(union) if union else None


def overlap(pool_cands: pl.DataFrame, scores: pl.DataFrame, judge: str, formats: list[str],
            rates: list[float], seed: int = 0, holdout_share: float | None = heldout.SHARE,
            decoding: str | None = None, score: str = "label") -> pl.DataFrame:
    """Jaccard overlap of the selected examples (cand_idx sets) between each pair of formats of
    one judge, at each rate. Columns: rate, format_a, format_b, n_a, n_b, jaccard (null when both
    are empty)."""
    rows = []
    for rate in rates:
        sets = {f: set(curate(pool_cands, scores, "judge", rate, seed, judge, f, holdout_share, decoding, score)[0]
                       .filter("kept")["cand_idx"].to_list()) for f in formats}
        for i, a in enumerate(formats):
            for b in formats[i + 1:]:
                rows.append({"rate": float(rate), "format_a": a, "format_b": b, "n_a": len(sets[a]),
                             "n_b": len(sets[b]), "jaccard": jaccard(sets[a], sets[b])})
    return pl.DataFrame(rows, schema={"rate": pl.Float64, "format_a": pl.String, "format_b": pl.String,
                                      "n_a": pl.Int64, "n_b": pl.Int64, "jaccard": pl.Float64})


def to_messages(examples: pl.DataFrame) -> list[dict]:
    """TRL conversational prompt-completion rows from a frame with prompt and response columns."""
    return [{"prompt": [{"role": "user", "content": p}], "completion": [{"role": "assistant", "content": r}]}
            for p, r in zip(examples["prompt"].to_list(), examples["response"].to_list())]
