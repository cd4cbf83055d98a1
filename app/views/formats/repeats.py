"""What asking each call N times does to a format: the audit's `single` cell (sample 0) beside its
`mean` cell (each call scored by the mean of its parsed samples). Pure: audit.audit_cells rows in,
a frame and a sentence out; the Formats page shows both."""

from __future__ import annotations

import polars as pl

from audit import MIN_N, minus, plural, too_few
from app.views.overview.headline import MIN_PARSE, span

KEYS = ["judge", "format", "decoding", "score"]
METRICS = ("top_tied", "tie_prob", "d2", "tau_a", "top1_expected", "parse_rate")
COUNTS = ("n_top_prompts", "n_verdicts")


def repeat_effect(cells: pl.DataFrame) -> pl.DataFrame:
    """One row per cell with repeated calls: each metric of sample 0 (`<metric>`) beside the mean
    of the samples (`<metric>_mean`), parse rates included (sample 0's calls; every sample's).
    Columns: judge, format, decoding, score, the pairs, then n_top_prompts and n_verdicts (sample 0's)."""
    columns = KEYS + [c for m in METRICS for c in (m, f"{m}_mean")] + list(COUNTS)
    if "aggregate" not in cells.columns or cells.filter(pl.col("aggregate") == "mean").height == 0:
        return pl.DataFrame(schema={c: (pl.String if c in KEYS else pl.Int64 if c in COUNTS else pl.Float64)
                                    for c in columns})
    counts = [c for c in COUNTS if c in cells.columns]
    single = cells.filter(pl.col("aggregate") == "single").select(*KEYS, *METRICS, *counts)
    mean = cells.filter(pl.col("aggregate") == "mean").select(*KEYS, *METRICS)
    out = single.join(mean, on=KEYS, suffix="_mean")
    out = out.with_columns([pl.lit(None, pl.Int64).alias(c) for c in COUNTS if c not in counts])
    return out.select(columns).cast({m: pl.Float64 for m in METRICS})


def repeats_sentence(effect: pl.DataFrame) -> str | None:
    """Does repeating break the coin flips? One sentence over the label cells with repeats: the
    share of prompts whose top is shared, sample 0 against the mean of the samples, per format,
    each with the prompts it is a share of. A cell whose calls parse under MIN_PARSE (sample 0's
    or all samples') or with fewer than MIN_N prompts is named apart and decides nothing."""
    rows = [r for r in effect.filter(pl.col("score") == "label").to_dicts()
            if r["top_tied"] is not None and r["top_tied_mean"] is not None]
    if not rows:
        return None

    def name(r):
        return f"{r['format']}{'' if r['decoding'] in ('greedy', 'sampled') else ' (' + r['decoding'] + ')'}"

    def parse_of(r):
        return [x for x in (r["parse_rate"], r["parse_rate_mean"]) if x is not None]

    low = [r for r in rows if parse_of(r) and min(parse_of(r)) < MIN_PARSE]
    few = [r for r in rows if r not in low and r["n_top_prompts"] is not None and r["n_top_prompts"] < MIN_N]
    kept = [r for r in rows if r not in low and r not in few]
    aside = [f"{name(r)} {r['top_tied']:.0%} → {r['top_tied_mean']:.0%}, but its calls parse only "
             f"{span(parse_of(r))} of the time"
             + (f" ({plural(r['n_verdicts'], 'call')})" if r.get("n_verdicts") is not None else "") for r in low]
    aside += [f"{name(r)}: too few to say ({plural(r['n_top_prompts'], 'prompt')} "
              f"with two scored candidates; at least {MIN_N} needed)" for r in few]
    tail = (" Left out: " + "; ".join(aside) + ".") if aside else ""
    if not kept:
        return "Too few to say whether averaging the samples breaks coin flips." + tail
    parts = [f"{name(r)} {r['top_tied']:.0%} → {r['top_tied_mean']:.0%}"
             + (f" of {plural(r['n_top_prompts'], 'prompt')}" if r["n_top_prompts"] is not None else "") for r in kept]
    broken = sum(r["top_tied_mean"] < r["top_tied"] for r in kept)
    verdict = ("Averaging the samples breaks coin flips" if broken == len(kept) else
               "Averaging the samples breaks coin flips in some formats" if broken else
               "Averaging the samples breaks no coin flip")
    return (f"{verdict}: share of prompts whose top score is shared, one sample → mean of the samples: "
            + "; ".join(parts) + "." + tail)


# Repeat consistency (audit.consistency): does a judge asked the same call again answer the same?
CONSISTENCY_HEADERS = {
    "format": "format", "decoding": "decoding", "samples": "samples per call",
    "n_items": "calls with ≥ 2 parsed samples", "flip_rate": "flip rate", "agreement": "pairwise agreement",
    "alpha": "Krippendorff's α", "alpha_lo": "α low", "alpha_hi": "α high", "level": "α scale",
    "samples_for_alpha_08": "samples for α 0.8"}
CONSISTENCY_HELP = {
    "samples per call": "The most samples of any call in the cell (--samples N).",
    "calls with ≥ 2 parsed samples": "The calls the flip rate and α are measured over.",
    "flip rate": "Share of those calls whose parsed samples are not all the same value.",
    "pairwise agreement": "Mean over calls of the share of pairs of its samples that agree.",
    "Krippendorff's α": "Agreement of the samples beyond chance (1 = always the same answer, 0 = no better "
                        "than chance); blank when a single value occurs throughout.",
    "α low": "95% percentile bootstrap over calls (2,000 resamples), lower end.",
    "α high": "95% percentile bootstrap over calls (2,000 resamples), upper end.",
    "α scale": "nominal for two labels, interval for more than ten, else ordinal.",
    "samples for α 0.8": "The smallest k whose mean of k samples reaches α 0.8 (Spearman-Brown); blank "
                         "when α ≤ 0.",
}


def repeat_consistency(cons: pl.DataFrame, judge: str) -> pl.DataFrame:
    """One judge's cells whose calls were asked more than once, with readable headers
    (CONSISTENCY_HEADERS' values): format, decoding, samples, n_items, flip rate, agreement, α and its
    interval, α's scale and the samples a mean would need for α 0.8."""
    mine = cons.filter((pl.col("judge") == judge) & (pl.col("samples") > 1))
    return mine.select(list(CONSISTENCY_HEADERS)).rename(CONSISTENCY_HEADERS)


def consistency_sentence(cons: pl.DataFrame, judge: str) -> str | None:
    """The flip rate and α in words, per format, each with the calls it rests on; over fewer than
    MIN_N calls with two parsed samples, too few to say (audit.MIN_N, the one rule)."""
    rows = [r for r in cons.filter((pl.col("judge") == judge) & (pl.col("samples") > 1)).to_dicts()]
    if not rows:
        return None
    parts = []
    for r in rows:
        name = f"**{r['format']}** ({r['decoding']}, {r['samples']} samples)"
        if not r["n_items"]:
            parts.append(f"{name}: no call has two parsed samples")
            continue
        if too_few(r["n_items"]):
            parts.append(f"{name}: too few to say ({plural(r['n_items'], 'call')} with two parsed samples; "
                         f"at least {MIN_N} needed)")
            continue
        alpha = ("α undefined (one value throughout)" if r["alpha"] is None else
                 minus(f"α = {r['alpha']:.2f} (95% CI {r['alpha_lo']:.2f} to {r['alpha_hi']:.2f})"))
        parts.append(f"{name}: flip rate {r['flip_rate']:.0%} of {plural(r['n_items'], 'call')}, {alpha}")
    return ("Asked the same call again, does the judge answer the same? Flip rate = share of calls whose "
            "samples disagree; Krippendorff's α = the samples' agreement beyond chance (1 = always the "
            "same). " + "; ".join(parts) + ".")
