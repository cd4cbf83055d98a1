"""The Curate & Train page's first view as derived results (flat in the pool's size): what the preview
draws, computed once per fingerprint of the judge it curates by and stored (train.DERIVED_RESULTS
'curation' and 'curation_overlap'), so a session reads a few hundred rows instead of curating 10M
candidates.

`curation_view` is one frame of parts (column `part`): 'summary' (one row, the curation summary as
JSON), 'value' and 'chars' (histogram bins of the picks' selecting value and response length, kept
and dropped: lo, hi, n), 'example' (the 3 lowest kept and 3 highest dropped picks: cand_idx,
value, prompt_id, prompt, response). `curation_overlap` is train.curate.overlap's table. Both read the pool out of core
(train.subsets.curate_pool); called with the pool alone (`judgeaudit derive`), they curate what the
page shows first: the first judge and its first format (a baseline without scores), rate 0.25, seed 0.
"""

from __future__ import annotations

import json
import os

import numpy as np
import polars as pl

import audit

from .curate import jaccard, keep_count, select
from .subsets import curate_pool, pool_heldout

RATE, SEED, OVERLAP_RATES = 0.25, 0, (0.1, 0.25, 0.5)
VALUE_BINS, CHAR_BINS = 40, 30
OVERLAP_SCHEMA = {"rate": pl.Float64, "format_a": pl.String, "format_b": pl.String, "n_a": pl.Int64,
                  "n_b": pl.Int64, "jaccard": pl.Float64}     # train.curate.overlap's
SCHEMA = {"part": pl.String, "set": pl.String, "lo": pl.Float64, "hi": pl.Float64, "n": pl.Int64,
          "cand_idx": pl.Int64, "value": pl.Float64, "json": pl.String, "prompt_id": pl.String,
          "prompt": pl.String, "response": pl.String}


def first_choice(cells: pl.DataFrame) -> tuple[str, str | None, str | None]:
    """(policy, judge, format) the page selects first: judge x format, the first judge and its first
    format (sorted), when the pool has scored cells; else the random baseline."""
    if cells.height == 0:
        return "random", None, None
    judge = sorted(cells["judge"].unique().to_list())[0]
    return "judge", judge, sorted(cells.filter(pl.col("judge") == judge)["format"].unique().to_list())[0]


def view_args(cells: pl.DataFrame, policy: str, judge, fmt, decoding, rate: float, seed: int) -> tuple:
    """The arguments to store a view under: () for the first view (what `judgeaudit derive` stores)."""
    if (policy, judge, fmt, decoding, float(rate), int(seed)) == (*first_choice(cells), None, RATE, SEED):
        return ()
    return policy, judge, fmt, decoding, float(rate), int(seed)


def bins(values: np.ndarray, kept: np.ndarray, most: int) -> pl.DataFrame:
    """set, lo, hi, n: `most` equal-width bins over the values' range (one per distinct value when
    there are at most `most` of them, each from its value to the next), counted for kept and dropped."""
    schema = {"set": pl.String, "lo": pl.Float64, "hi": pl.Float64, "n": pl.Int64}
    if values.size == 0:
        return pl.DataFrame(schema=schema)
    lo, hi, levels = float(values.min()), float(values.max()), np.unique(values)
    if hi == lo:
        edges = np.array([lo, lo + 1.0])
    elif levels.size <= most:          # distinct levels: a bin each, from it to the next (the last as wide as the narrowest)
        edges = np.append(levels, hi + np.diff(levels).min())
    else:
        edges = np.linspace(lo, hi, most + 1)
    rows = []
    for name, mask in (("kept", kept), ("dropped", ~kept)):
        counts, _ = np.histogram(values[mask], bins=edges)
        rows += [{"set": name, "lo": float(a), "hi": float(b), "n": int(c)}
                 for a, b, c in zip(edges[:-1], edges[1:], counts) if c]
    return pl.DataFrame(rows, schema=schema)


def curation_view(db: str | os.PathLike | None, pool: str, policy: str | None = None, judge: str | None = None,
                  fmt: str | None = None, decoding: str | None = None, rate: float = RATE, seed: int = SEED
                  ) -> pl.DataFrame:
    """The preview of one curation as parts (module docstring); policy None: the page's first choice."""
    if policy is None:
        policy, judge, fmt = first_choice(audit.scored_cells(db, pool))
    picks, summary, _ = curate_pool(db, pool, policy, rate, seed, judge, fmt, decoding=decoding)
    kept = picks["kept"].to_numpy()
    lengths = audit.baseline_values(db, pool, "length").select("cand_idx", pl.col("value").alias("chars"))
    chars = picks.select("cand_idx", "kept").join(lengths, on="cand_idx", how="inner")
    examples = pl.concat([picks.filter("kept").tail(3).with_columns(pl.lit("kept").alias("set")),
                          picks.filter(~pl.col("kept")).head(3).with_columns(pl.lit("dropped").alias("set"))])
    texts = audit.candidate_texts(db, pool, examples["cand_idx"].to_list()).select(
        pl.col("cand_idx").cast(pl.Int64), "prompt_id", "prompt", "response")
    examples = examples.join(texts, on="cand_idx", how="left", maintain_order="left")
    parts = [pl.DataFrame({"part": ["summary"], "json": [json.dumps(summary, sort_keys=True)]}),
             bins(picks["value"].to_numpy(), kept, VALUE_BINS).with_columns(pl.lit("value").alias("part")),
             bins(chars["chars"].to_numpy(), chars["kept"].to_numpy(), CHAR_BINS).with_columns(pl.lit("chars").alias("part")),
             examples.select("set", "cand_idx", "value", "prompt_id", "prompt", "response", pl.lit("example").alias("part"))]
    return pl.concat([p.with_columns([pl.lit(None, t).alias(c) for c, t in SCHEMA.items() if c not in p.columns])
                      .select([pl.col(c).cast(t) for c, t in SCHEMA.items()]) for p in parts])


def split_view(view: pl.DataFrame) -> tuple[dict, pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(summary, value bins, length bins, examples) of a curation_view frame."""
    part = lambda name, *cols: view.filter(pl.col("part") == name).select(*cols)   # noqa: E731
    summary = json.loads(view.filter(pl.col("part") == "summary")["json"][0])
    return (summary, part("value", "set", "lo", "hi", "n"), part("chars", "set", "lo", "hi", "n"),
            part("example", "set", "cand_idx", "value", "prompt_id", "prompt", "response"))


def curation_overlap(db: str | os.PathLike | None, pool: str, judge: str | None = None, formats=None,
                     decoding: str | None = None, rates=OVERLAP_RATES, seed: int = SEED) -> pl.DataFrame:
    """train.curate.overlap's table (Jaccard overlap of the kept examples between each pair of the
    judge's formats, at each rate) from one out-of-core curation per format (curate_pool's, at rate 1):
    a pick's rank does not depend on the rate, so the kept at rate r are the first keep_count(r,
    eligible) by rank. The pool's held-out prompts and extent are read once, and its blocks once for
    every format's cell (audit.cells_values); the overlaps are counted on marks by cand_idx. judge None:
    the page's first judge and every format it scored."""
    cells = audit.scored_cells(db, pool)
    if judge is None:
        judge = first_choice(cells)[1]
    if formats is None:
        formats = sorted(cells.filter(pl.col("judge") == judge)["format"].unique().to_list()) if judge else []
    formats = list(formats)
    ranked = {}
    if formats:
        held, _ = pool_heldout(db, pool)
        n_cands, n_prompts = audit.pool_extent(db, pool)
        mask = np.zeros(max(n_prompts, 1), dtype=bool)
        mask[held.to_numpy()] = True
        for fmt, (values, _) in audit.cells_values(db, pool, judge, formats, decoding).items():
            values = values.filter(pl.Series(~mask[values["prompt_idx"].to_numpy()]))
            ranked[fmt] = select(values, 1.0, seed, n_cands, n_prompts)["cand_idx"].to_numpy()   # by rank
    marks = np.zeros(max((int(r.max()) + 1 for r in ranked.values() if r.size), default=0), dtype=bool)
    rows = []
    for rate in rates:
        kept = {f: r[:keep_count(rate, r.size)] if r.size else r for f, r in ranked.items()}
        for i, a in enumerate(formats):
            marks[kept[a]] = True
            for b in formats[i + 1:]:
                both = int(np.count_nonzero(marks[kept[b]]))
                union = kept[a].size + kept[b].size - both
                rows.append({"rate": float(rate), "format_a": a, "format_b": b, "n_a": int(kept[a].size),
                             "n_b": int(kept[b].size), "jaccard": both / union if union else None})
            marks[kept[a]] = False
    return pl.DataFrame(rows, schema=OVERLAP_SCHEMA)


def top_share(picks: pl.DataFrame, rate: float) -> set:
    """The cand_idx a curation keeps at `rate`: the first keep_count(rate, eligible) by rank (a pick's
    rank does not depend on the rate)."""
    return set(picks.filter(pl.col("rank") < keep_count(rate, picks.height))["cand_idx"].to_list()) \
        if picks.height else set()


STUDENT_OVERLAP_SCHEMA = {"rate": pl.Float64, "n_teacher": pl.Int64, "n_student": pl.Int64, "n_both": pl.Int64,
                          "jaccard": pl.Float64}


def student_overlap(db: str | os.PathLike | None, pool: str, teacher: str, student: str, fmt: str,
                    teacher_decoding: str | None = None, rates=OVERLAP_RATES, seed: int = SEED) -> pl.DataFrame:
    """The teacher's and a student's curations of the pool in one format compared at each rate: the
    examples each keeps, both keep, and the Jaccard overlap of the two selections (the judge policy,
    held-out prompts left out, the same seed)."""
    t = curate_pool(db, pool, "judge", 1.0, seed, teacher, fmt, decoding=teacher_decoding)[0]
    s = curate_pool(db, pool, "judge", 1.0, seed, student, fmt)[0]
    rows = []
    for rate in rates:
        a, b = top_share(t, rate), top_share(s, rate)
        rows.append({"rate": float(rate), "n_teacher": len(a), "n_student": len(b), "n_both": len(a & b),
                     "jaccard": jaccard(a, b)})
    return pl.DataFrame(rows, schema=STUDENT_OVERLAP_SCHEMA)
