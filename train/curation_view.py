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

from ingest import Database

from .curate import POLICIES, jaccard, keep_count, select, summarise
from .subsets import curate_pool, held_mask, outside, pool_heldout, select_outside

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


HELDOUT_SCHEMA = {"part": pl.String, "prompt_idx": pl.Int64, "json": pl.String}


def heldout_frame(db: str | os.PathLike | None, pool: str) -> pl.DataFrame:
    """The pool's held-out prompts under the default rule (train.subsets.pool_heldout: the marked ones,
    else heldout.SHARE of them by their ids' keys) as the derived result 'curation_heldout' (basis
    'pool': it depends on the prompt ids alone, so it is computed once per pool, not per judging):
    part 'heldout' (one row per prompt_idx) and part 'rule' (one row, the rule as JSON)."""
    held, rule = pool_heldout(db, pool)
    rows = pl.DataFrame({"prompt_idx": held.cast(pl.Int64)}).select(pl.lit("heldout").alias("part"), "prompt_idx",
                                                                    pl.lit(None, pl.String).alias("json"))
    return pl.concat([rows, pl.DataFrame({"part": ["rule"], "prompt_idx": [None], "json": [json.dumps(rule)]},
                                         schema=HELDOUT_SCHEMA)])


def _stored(db, pool: str, name: str) -> pl.DataFrame | None:
    """The derived result `name` of the pool's candidates alone (basis 'pool') as stored when current, else
    None: read here, never computed or stored (that is the derived layer's, at the pool's refresh)."""
    whole = Database(Database.of(db).path)
    mark = whole.derived_mark(pool, "pool")
    return None if mark is None else whole.derived_result(mark, name)[0]


def held_out(db, pool: str) -> tuple[pl.Series, dict]:
    """pool_heldout(db, pool) (the default rule): the stored 'curation_heldout' where current, else computed."""
    frame = _stored(db, pool, "curation_heldout")
    if frame is None:
        return pool_heldout(db, pool)
    return frame.filter(pl.col("part") == "heldout")["prompt_idx"], \
        json.loads(frame.filter(pl.col("part") == "rule")["json"][0])


def lengths(db, pool: str) -> pl.DataFrame:
    """cand_idx, chars (a float) of every candidate: the stored 'style_counts' where current (its chars,
    Python's len of the response, as DuckDB's length counts: code points), else audit.baseline_values'."""
    counts = _stored(db, pool, "style_counts")
    if counts is None:
        return audit.baseline_values(db, pool, "length").select("cand_idx", pl.col("value").alias("chars"))
    return counts.select(pl.col("cand_idx").cast(pl.Int64), pl.col("chars").cast(pl.Float64))


def preview_picks(db, pool: str, policy: str, rate: float, seed: int, judge, fmt, decoding
                  ) -> tuple[pl.DataFrame, dict]:
    """train.subsets.curate_pool's (picks, summary) at the default held-out share and score 'label', with
    the held-out prompts read stored (held_out): per judging only its cell is read and selected from."""
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r} (known: {', '.join(POLICIES)})")
    if policy == "full":
        rate = 1.0
    held, _ = held_out(db, pool)
    if policy == "judge":
        if judge is None or fmt is None:
            raise ValueError("policy 'judge' needs a judge and a format")
        values, decoding = audit.cell_values(db, pool, judge, fmt, decoding, "label")
    else:
        values = audit.baseline_values(db, pool, policy).sort("cand_idx")
    picks = select_outside(db, pool, values, held, rate, seed)
    return picks, summarise(picks, held.len(), policy, judge, fmt, decoding, "label", rate, seed)


def curation_view(db: str | os.PathLike | None, pool: str, policy: str | None = None, judge: str | None = None,
                  fmt: str | None = None, decoding: str | None = None, rate: float = RATE, seed: int = SEED
                  ) -> pl.DataFrame:
    """The preview of one curation as parts (module docstring); policy None: the page's first choice."""
    if policy is None:
        policy, judge, fmt = first_choice(audit.scored_cells(db, pool))
    picks, summary = preview_picks(db, pool, policy, rate, seed, judge, fmt, decoding)
    kept = picks["kept"].to_numpy()
    chars = picks.select("cand_idx", "kept").join(lengths(db, pool), on="cand_idx", how="inner")
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
    every format's cell (audit.cells_values, which also lists the cells); the overlaps are counted on marks
    by cand_idx. judge None: the page's first judge (first_choice's) and every format it scored."""
    formats = None if formats is None else list(formats)
    cells = audit.cells_values(db, pool, judge, formats, decoding)
    formats = list(cells) if formats is None else formats
    ranked = {}
    if formats:
        held, _ = held_out(db, pool)
        n_cands, n_prompts = audit.pool_extent(db, pool)
        mask = held_mask(held, n_prompts)
        for fmt, (values, _) in cells.items():
            picks = select(outside(values, mask), 1.0, seed, n_cands, n_prompts)
            ranked[fmt] = picks["cand_idx"].to_numpy()                 # by rank
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
