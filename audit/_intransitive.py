"""Intransitive tournaments (docs/metrics.md#intransitive-tournaments): how often a tournament cell's
decisive verdicts on three candidates of one prompt go round in a circle.

A pair's verdict is decisive when its sample-0 parsed calls, in one order or both, all prefer the same
candidate; a triad of a prompt's candidates counts when its three pairs all
are. `intransitive_share` = the triads whose verdicts form a cycle (x over y, y over z, z over x) /
the triads that count, pooled over the prompts; its 95% interval is a percentile bootstrap over
prompts (seeded by the cell, as slot bias's), drawn as multinomial counts of the prompts' kinds (a
prompt is its cycles and triads, so resampling n prompts is drawing how many of each kind: the same
distribution in memory of the kinds, not of the prompts times the draws). The kinds are counted in
DuckDB (intransitive_kinds.sql: per cell, how many prompts have each (cycles, triads)), so a cell comes
to Python as a few rows, not one per prompt. A judge that decides each pair by a coin flip makes a
cycle of 2 of the 8 orientations of a triad: `intransitive_random` = ¼. A transitive judge (one that
ranks the candidates) makes none.
"""

from __future__ import annotations

import os

import numpy as np
import polars as pl

from ._bias import cell_rng
from ._read import reading

RANDOM_SHARE = 0.25
N_BOOT = 2000
INTRANSITIVE_SCHEMA = {"judge": pl.String, "format": pl.String, "decoding": pl.String,
                       "intransitive_prompts": pl.Int64, "intransitive_triads": pl.Int64,
                       "intransitive_cycles": pl.Int64, "intransitive_share": pl.Float64,
                       "intransitive_lo": pl.Float64, "intransitive_hi": pl.Float64,
                       "intransitive_random": pl.Float64}
INTRANSITIVE_COLUMNS = list(INTRANSITIVE_SCHEMA)


def pooled_share(cycles: np.ndarray, triads: np.ndarray, n_boot: int, rng: np.random.Generator) -> dict:
    """Σ cycles / Σ triads over prompts, with the 2.5 and 97.5 percentiles of the same ratio over
    prompts resampled with replacement (as multinomial counts of the distinct (cycles, triads) kinds)."""
    cycles, triads = np.asarray(cycles, dtype=float), np.asarray(triads, dtype=float)
    kinds, counts = np.unique(np.column_stack([cycles, triads]), axis=0, return_counts=True)
    return kinds_share(kinds, counts, n_boot, rng)


def kinds_share(kinds: np.ndarray, counts: np.ndarray, n_boot: int, rng: np.random.Generator) -> dict:
    """pooled_share from the prompts' kinds: `kinds` (cycles, triads) rows in lexicographic order, each
    standing for counts[k] prompts."""
    kinds, counts = np.asarray(kinds, dtype=float).reshape(-1, 2), np.asarray(counts, dtype=np.int64)
    triads = float(counts @ kinds[:, 1])
    if triads == 0:
        return {"share": None, "lo": None, "hi": None}
    n = int(counts.sum())
    drawn = rng.multinomial(n, counts / n, size=n_boot)       # n_boot x kinds
    boot = (drawn @ kinds[:, 0]) / (drawn @ kinds[:, 1])     # every prompt listed has a triad: no 0 / 0
    return {"share": float(counts @ kinds[:, 0] / triads), "lo": float(np.percentile(boot, 2.5)),
            "hi": float(np.percentile(boot, 97.5))}


def intransitivity(db: str | os.PathLike | None, pool: str, seed: int = 0, n_boot: int = N_BOOT) -> pl.DataFrame:
    """One row per tournament cell of the pool with a counted triad, INTRANSITIVE_COLUMNS: judge,
    format, decoding, intransitive_prompts (prompts with a counted triad), intransitive_triads,
    intransitive_cycles, intransitive_share (cycles / triads), intransitive_lo/hi (95% bootstrap over
    prompts), intransitive_random (¼: a judge flipping a coin)."""
    with reading(db) as read:
        kinds = read.frame("intransitive_kinds", pool_id=read.pool_id(pool))
    rows = []
    for (judge, fmt, dec), g in kinds.group_by(["judge", "format", "decoding"], maintain_order=True):
        counts = g["prompts"].to_numpy()
        got = kinds_share(g.select("n_cycles", "n_triads").to_numpy(), counts, n_boot, cell_rng(seed, judge, fmt, dec))
        rows.append({"judge": judge, "format": fmt, "decoding": dec, "intransitive_prompts": int(counts.sum()),
                     "intransitive_triads": int(counts @ g["n_triads"].to_numpy()),
                     "intransitive_cycles": int(counts @ g["n_cycles"].to_numpy()),
                     "intransitive_share": got["share"], "intransitive_lo": got["lo"], "intransitive_hi": got["hi"],
                     "intransitive_random": RANDOM_SHARE})
    return pl.DataFrame(rows, schema=INTRANSITIVE_SCHEMA)
