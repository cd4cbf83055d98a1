"""What asking each call N times does to a format: the audit's `single` cell (sample 0) beside its
`mean` cell (each call scored by the mean of its parsed samples). Pure: audit.audit_cells rows in,
a frame and a sentence out; the Formats page shows both."""

from __future__ import annotations

import polars as pl

KEYS = ["judge", "format", "decoding", "score"]
METRICS = ("top_tied", "tie_prob", "d2", "tau_a", "top1_expected")


def repeat_effect(cells: pl.DataFrame) -> pl.DataFrame:
    """One row per cell with repeated calls: each metric of sample 0 (`<metric>`) beside the mean
    of the samples (`<metric>_mean`). Columns: judge, format, decoding, score, then the pairs."""
    columns = KEYS + [c for m in METRICS for c in (m, f"{m}_mean")]
    if "aggregate" not in cells.columns or cells.filter(pl.col("aggregate") == "mean").height == 0:
        return pl.DataFrame(schema={c: (pl.String if c in KEYS else pl.Float64) for c in columns})
    single = cells.filter(pl.col("aggregate") == "single").select(*KEYS, *METRICS)
    mean = cells.filter(pl.col("aggregate") == "mean").select(*KEYS, *METRICS)
    return single.join(mean, on=KEYS, suffix="_mean").select(columns).cast({m: pl.Float64 for m in METRICS})


def repeats_sentence(effect: pl.DataFrame) -> str | None:
    """Does repeating break the coin flips? One sentence over the label cells with repeats: the
    share of prompts whose top is shared, sample 0 against the mean of the samples, per format."""
    rows = [r for r in effect.filter(pl.col("score") == "label").to_dicts()
            if r["top_tied"] is not None and r["top_tied_mean"] is not None]
    if not rows:
        return None
    parts = [f"{r['format']}{'' if r['decoding'] == 'greedy' else ' (' + r['decoding'] + ')'} "
             f"{r['top_tied']:.0%} → {r['top_tied_mean']:.0%}" for r in rows]
    broken = sum(r["top_tied_mean"] < r["top_tied"] for r in rows)
    verdict = ("Averaging the samples breaks coin flips" if broken == len(rows) else
               "Averaging the samples breaks coin flips in some formats" if broken else
               "Averaging the samples breaks no coin flip")
    return (f"{verdict}: share of prompts whose top score is shared, one sample → mean of the samples: "
            + "; ".join(parts) + ".")
