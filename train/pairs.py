"""Preference pairs from one audit cell (docs/command-line.md#judgeaudit-pairs). Pure polars and
numpy, frames in, frames out; `make_pairs` (train/_pairs_file.py) reads the cell and writes the file.

Comparative cells: a pair is two candidates of a prompt that the judge compared (a tournament
match, or a candidate against its anchor). Its margin in favour of x (the item's orientation:
the anchored or earlier-listed candidate) is, per order, the mean over that order's calls of the
verdict margin for x (v with x in slot A, -v with x in slot B); the pair's margin is the mean of
its orders' margins (with both orders, the bias audit's q_i). Without --both-orders a pair is kept
when |margin| >= M and margin != 0 (lost: `tied` when 0, `below_margin` when under M). With
--both-orders it must be judged in both orders (else `one_order_only`), prefer the same candidate
in both (both orders tied: `tied`; otherwise any difference in the sign, a tie in one order
included, is `flipped` (the bias audit's consistency rule)), and have |margin| >= M (else
`below_margin`). Losses count candidate pairs.

Pointwise cells: per prompt with two or more scored candidates, its candidates ordered by the
normalised score, ties by the audit's seeded key (audit.tiebreak_key, larger first, as curation's
top pick); the first is chosen, the last rejected, the margin their score difference; lost as
`tied` when it is 0, `below_margin` when under M. Losses count prompts.

Held-out prompts (curation's rule, train.curate.heldout_prompts) are never paired. The margin at
exactly M is kept (a tolerance of 1e-9 absorbs the means' rounding).
"""

from __future__ import annotations

import polars as pl

from audit import tiebreak_key

LOST = ("tied", "flipped", "below_margin", "one_order_only")
TOLERANCE = 1e-9
PAIR_SCHEMA = {"prompt_idx": pl.Int64, "chosen": pl.Int64, "rejected": pl.Int64, "margin": pl.Float64,
               "tie_broken": pl.Boolean}


def _lost(frame: pl.DataFrame) -> dict:
    counts = dict(frame.group_by("why").len().iter_rows()) if frame.height else {}
    return {k: int(counts.get(k, 0)) for k in LOST}


def comparative_pairs(calls: pl.DataFrame, min_margin: float = 0.0, both_orders: bool = False,
                      held: pl.Series | None = None) -> tuple[pl.DataFrame, dict]:
    """(pairs, lost) from one cell's calls (prompt_idx, x, y, swapped, value; as
    audit.comparisons returns them). pairs: PAIR_SCHEMA (cand_idx of chosen and rejected, the margin
    in favour of the chosen one, tie_broken always False), by prompt_idx, chosen, rejected."""
    if held is not None:
        calls = calls.filter(~pl.col("prompt_idx").is_in(held.implode()))
    if calls.height == 0:
        return pl.DataFrame(schema=PAIR_SCHEMA), {k: 0 for k in LOST}
    oriented = pl.when(pl.col("swapped")).then(-pl.col("value")).otherwise(pl.col("value"))
    items = (calls.with_columns(oriented.cast(pl.Float64).alias("o"))
             .group_by("prompt_idx", "x", "y")
             .agg(pl.col("o").filter(~pl.col("swapped")).mean().alias("fwd"),
                  pl.col("o").filter(pl.col("swapped")).mean().alias("rev")))
    items = items.with_columns(pl.mean_horizontal("fwd", "rev").alias("m"))
    small = pl.col("m").abs() < min_margin - TOLERANCE
    if both_orders:
        why = (pl.when(pl.col("fwd").is_null() | pl.col("rev").is_null()).then(pl.lit("one_order_only"))
               .when((pl.col("fwd") == 0) & (pl.col("rev") == 0)).then(pl.lit("tied"))
               .when(pl.col("fwd").sign() != pl.col("rev").sign()).then(pl.lit("flipped"))
               .when(small).then(pl.lit("below_margin")))
    else:
        why = pl.when(pl.col("m") == 0).then(pl.lit("tied")).when(small).then(pl.lit("below_margin"))
    items = items.with_columns(why.alias("why"))
    kept = items.filter(pl.col("why").is_null())
    pairs = kept.select(
        "prompt_idx",
        pl.when(pl.col("m") > 0).then(pl.col("x")).otherwise(pl.col("y")).alias("chosen"),
        pl.when(pl.col("m") > 0).then(pl.col("y")).otherwise(pl.col("x")).alias("rejected"),
        pl.col("m").abs().alias("margin"), pl.lit(False).alias("tie_broken"))
    return pairs.cast(PAIR_SCHEMA).sort("prompt_idx", "chosen", "rejected"), _lost(items.filter(pl.col("why").is_not_null()))


def pointwise_pairs(scores: pl.DataFrame, n_pool_candidates: int, min_margin: float = 0.0, seed: int = 0,
                    held: pl.Series | None = None) -> tuple[pl.DataFrame, dict]:
    """(pairs, lost) from one pointwise cell's scores (cand_idx, prompt_idx, s: the normalised
    score). pairs: PAIR_SCHEMA, tie_broken when the chosen or the rejected one shared its score
    with another candidate of the prompt (the key decided)."""
    if held is not None:
        scores = scores.filter(~pl.col("prompt_idx").is_in(held.implode()))
    scores = scores.filter(pl.col("s").is_not_null() & pl.col("s").is_not_nan())
    if scores.height == 0:
        return pl.DataFrame(schema=PAIR_SCHEMA), {k: 0 for k in LOST}
    key = tiebreak_key(n_pool_candidates, seed)
    ranked = (scores.select(pl.col("prompt_idx").cast(pl.Int64), pl.col("cand_idx").cast(pl.Int64),
                            pl.col("s").cast(pl.Float64))
              .with_columns(pl.Series("_key", key[scores["cand_idx"].to_numpy()]))
              .sort(["prompt_idx", "s", "_key"], descending=[False, True, True]))
    per = ranked.group_by("prompt_idx", maintain_order=True).agg(
        pl.len().alias("n"), pl.col("cand_idx").first().alias("chosen"), pl.col("cand_idx").last().alias("rejected"),
        pl.col("s").first().alias("top"), pl.col("s").last().alias("bottom"),
        (pl.col("s") == pl.col("s").first()).sum().alias("n_top"),
        (pl.col("s") == pl.col("s").last()).sum().alias("n_bottom")).filter(pl.col("n") >= 2)
    per = per.with_columns((pl.col("top") - pl.col("bottom")).alias("margin"))
    per = per.with_columns(pl.when(pl.col("margin") == 0).then(pl.lit("tied"))
                           .when(pl.col("margin") < min_margin - TOLERANCE).then(pl.lit("below_margin")).alias("why"))
    kept = per.filter(pl.col("why").is_null()).select(
        "prompt_idx", "chosen", "rejected", "margin",
        ((pl.col("n_top") >= 2) | (pl.col("n_bottom") >= 2)).alias("tie_broken"))
    return kept.cast(PAIR_SCHEMA).sort("prompt_idx"), _lost(per.filter(pl.col("why").is_not_null()))


def to_preference_rows(pairs: pl.DataFrame, texts: pl.DataFrame) -> list[dict]:
    """TRL conversational preference rows ({"prompt", "chosen", "rejected"} as message lists) with
    prompt_id, chosen_id, rejected_id and margin. `texts`: cand_idx, prompt_id, candidate_id,
    prompt, response (audit.candidate_texts) of every candidate in `pairs`."""
    by = {r["cand_idx"]: r for r in texts.iter_rows(named=True)}
    rows = []
    for p in pairs.iter_rows(named=True):
        c, r = by[p["chosen"]], by[p["rejected"]]
        rows.append({"prompt": [{"role": "user", "content": c["prompt"]}],
                     "chosen": [{"role": "assistant", "content": c["response"]}],
                     "rejected": [{"role": "assistant", "content": r["response"]}],
                     "prompt_id": c["prompt_id"], "chosen_id": c["candidate_id"], "rejected_id": r["candidate_id"],
                     "margin": p["margin"]})
    return rows
