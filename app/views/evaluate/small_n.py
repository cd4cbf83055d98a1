"""Contrasts from too few prompts: a contrast is a mean over held-out prompts, so
one from fewer than MIN_N prompts (diff 0 [0, 0], p = 1 from a single prompt) is flagged, not
read as a finding. Pure: the contrasts table and the Friedman rows (their n_blocks are the judge's
prompts) in, the table with its prompt count and the flag's sentence out."""

from __future__ import annotations

import polars as pl

from audit import MIN_N


def flag_small(table: pl.DataFrame, friedman: list[dict]) -> tuple[pl.DataFrame, str | None]:
    """The contrasts with `prompts` (the held-out prompts each rests on) and `too_few` (fewer than
    MIN_N), and a sentence naming the judges whose contrasts are too few to say (None if none)."""
    n = {r["judge"]: r["n_blocks"] for r in friedman}
    out = table.with_columns(pl.col("judge").replace_strict(n, default=None, return_dtype=pl.Int64).alias("prompts"))
    out = out.with_columns((pl.col("prompts") < MIN_N).fill_null(False).alias("too_few"))
    few = out.filter(pl.col("too_few")).unique("judge", maintain_order=True)
    if few.height == 0:
        return out, None
    who = "; ".join(f"{r['judge']}: {r['prompts']} held-out prompt{'' if r['prompts'] == 1 else 's'}"
                    for r in few.iter_rows(named=True))
    return out, (f"Too few to say: these contrasts rest on fewer than {MIN_N} held-out prompts ({who}). "
                 "Their difference, interval and p are shown, but they are not a finding; evaluate on more "
                 "held-out prompts.")


def best_and_worst_count(n_prompts: int) -> int:
    """How many prompts the best and the worst lists show each: up to 3, and never the same prompt in
    both (0 when there are fewer than two prompts: then there is no best or worst)."""
    return min(3, n_prompts // 2)
