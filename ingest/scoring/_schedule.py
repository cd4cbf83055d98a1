"""Which judge calls a scoring run makes (docs/scoring.md#calls-retries-and-resuming): one frame row per call.

Columns of a plan: format, prompt_idx, a_idx, b_idx (null for pointwise), swapped, sample.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from ._anchor import reference_anchors, seeded_anchors
from .formats import Format

SCHEDULES = ("listing", "balanced", "both")


def _pick(n: int, how_many: int | str, rng: np.random.Generator) -> np.ndarray:
    """Mask of the `how_many` seeded choices out of n (or all of them)."""
    mask = np.zeros(n, dtype=bool)
    if how_many == "all":
        mask[:] = True
    elif how_many:
        mask[rng.choice(n, size=min(int(how_many), n), replace=False)] = True
    return mask


def pointwise_plan(cands: pl.DataFrame, fmt: Format) -> pl.DataFrame:
    return cands.select(pl.lit(fmt.name).alias("format"), "prompt_idx", pl.col("cand_idx").alias("a_idx"),
                        pl.lit(None, pl.Int32).alias("b_idx"), pl.lit(False).alias("swapped"),
                        pl.lit(0).alias("sample"))


def anchored_plan(cands: pl.DataFrame, fmt: Format, swap_sample: int | str, seed: int) -> tuple[pl.DataFrame, int]:
    """Every candidate in slot A against its prompt's anchor (the anchor against itself is kept: a
    self-comparison), plus the reverse order for `swap_sample` seeded candidates. Returns the plan
    and how many prompts got a seeded anchor (no complete references)."""
    joined, seeded = with_anchors(cands, seed)
    forward = joined.select(pl.lit(fmt.name).alias("format"), "prompt_idx", pl.col("cand_idx").alias("a_idx"),
                            pl.col("anchor_idx").alias("b_idx"), pl.lit(False).alias("swapped"),
                            pl.lit(0).alias("sample"))
    others = joined.filter(pl.col("cand_idx") != pl.col("anchor_idx"))
    chosen = others.filter(pl.Series(reversed_anchored(others.height, swap_sample, seed)))
    reverse = chosen.select(pl.lit(fmt.name).alias("format"), "prompt_idx", pl.col("anchor_idx").alias("a_idx"),
                            pl.col("cand_idx").alias("b_idx"), pl.lit(True).alias("swapped"),
                            pl.lit(0).alias("sample"))
    return pl.concat([forward, reverse]), seeded


def with_anchors(cands: pl.DataFrame, seed: int) -> tuple[pl.DataFrame, int]:
    """Each candidate (its columns kept) with its prompt's anchor (anchor_idx: the reference anchor, else a
    seeded one), by prompt and position; and how many prompts got a seeded anchor."""
    anchors = reference_anchors(cands)
    missing = cands.join(anchors, on="prompt_idx", how="anti")["prompt_idx"].unique().sort()
    if len(missing):
        anchors = pl.concat([anchors, seeded_anchors(cands, missing.to_numpy(), seed)
                             .with_columns(pl.col("anchor_idx").cast(anchors["anchor_idx"].dtype))])
    return cands.join(anchors, on="prompt_idx").sort("prompt_idx", "position"), len(missing)


def reversed_anchored(n_others: int, swap_sample: int | str, seed: int) -> np.ndarray:
    """Mask of the anchored calls (other than the anchor's own, in with_anchors' order) also asked in the
    reverse order: `swap_sample` seeded ones, or all."""
    return _pick(n_others, swap_sample, np.random.default_rng([seed, 1]))


def tournament_plan(cands: pl.DataFrame, fmt: Format, schedule: str, swap_sample: int | str,
                    seed: int) -> pl.DataFrame:
    """Pairs within each prompt. listing: the earlier-listed candidate is always Response A (as in
    the paper); balanced: pair (i, j), i < j in listing order, shows i first when j - i is odd, so
    each candidate is in slot A as often as in B as near as k allows; both: every pair in both
    orders. `swap_sample` adds the other order for that many seeded pairs."""
    c = cands.select("prompt_idx", "cand_idx", "position")
    pairs = c.join(c, on="prompt_idx", suffix="_b").filter(pl.col("position") < pl.col("position_b")) \
        .sort("prompt_idx", "position", "position_b")
    first, second = pl.col("cand_idx"), pl.col("cand_idx_b")
    if schedule == "balanced":
        earlier_first = (pl.col("position_b") - pl.col("position")) % 2 == 1
    else:
        earlier_first = pl.lit(True)
    base = pairs.select(pl.lit(fmt.name).alias("format"), "prompt_idx",
                        pl.when(earlier_first).then(first).otherwise(second).alias("a_idx"),
                        pl.when(earlier_first).then(second).otherwise(first).alias("b_idx"),
                        (~earlier_first).alias("swapped"), pl.lit(0).alias("sample"))
    if schedule == "both":
        extra = base
    else:
        extra = base.filter(pl.Series(_pick(base.height, swap_sample, np.random.default_rng([seed, 2]))))
    flipped = extra.select("format", "prompt_idx", pl.col("b_idx").alias("a_idx"), pl.col("a_idx").alias("b_idx"),
                           (~pl.col("swapped")).alias("swapped"), "sample")
    return pl.concat([base, flipped]) if extra.height else base


def with_samples(plan: pl.DataFrame, samples: int) -> pl.DataFrame:
    """Each call of `plan` asked `samples` times (sample 0..N-1), sample by sample: every call's
    sample 0 comes first, so a run stopped early holds whole samples."""
    if samples <= 1:
        return plan
    return pl.concat([plan.with_columns(pl.lit(s, pl.Int32).alias("sample")) for s in range(samples)])


def schedule_of(fmt: Format, tournament_schedule: str) -> str:
    """The schedule a cell run records: a tournament's (listing, random, ...), else 'anchored' (each
    candidate against its prompt's anchor) or 'pointwise' (one call per candidate)."""
    if fmt.kind == "pointwise":
        return "pointwise"
    return tournament_schedule if fmt.pairing == "tournament" else fmt.pairing


def plan_calls(cands: pl.DataFrame, formats: list[Format], schedule: str = "listing",
               swap_sample: int | str = 0, seed: int = 0, samples: int = 1) -> tuple[pl.DataFrame, list[str]]:
    """The calls of a run over `cands` (prompt_idx, cand_idx, position, reference), each `samples`
    times, and notes."""
    parts, notes = [], []
    for fmt in formats:
        if fmt.kind == "pointwise":
            parts.append(pointwise_plan(cands, fmt))
        elif fmt.pairing == "anchored":
            plan, seeded = anchored_plan(cands, fmt, swap_sample, seed)
            parts.append(plan)
            if seeded:
                notes.append(f"{fmt.name}: {seeded} prompt(s) without complete references got a seeded anchor")
            n_self = plan.filter(pl.col("a_idx") == pl.col("b_idx")).height
            notes.append(f"{fmt.name}: {n_self} self-comparison(s) (anchor vs itself) kept and flagged")
        else:
            parts.append(tournament_plan(cands, fmt, schedule, swap_sample, seed))
    schema = {"format": pl.String, "prompt_idx": pl.Int32, "a_idx": pl.Int32, "b_idx": pl.Int32,
              "swapped": pl.Boolean, "sample": pl.Int32}
    plan = pl.concat([p.cast(schema) for p in parts]) if parts else pl.DataFrame(schema=schema)
    return with_samples(plan, samples), notes
