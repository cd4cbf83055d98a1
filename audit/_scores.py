"""The scores of a pool's cells: one family of readers, one meaning each.

A cell is (judge, format, decoding, score): decoding `greedy` or `constrained`, score `label` (the
parsed labels' values) or `expected` (the probability-weighted value over the format's labels; see
_with_expected_cells). A candidate's score in a cell is its normalised score, in [0, 1]. Every cell
reads sample 0 of each call (aggregate `single`); read with repeats=True, a cell whose calls were
asked more than once also comes as aggregate `mean` (each call: the mean of its parsed samples'
normalised scores; see _with_mean_cells).

- `normalised_scores(...)`: pure; one cell's calls in, each candidate's score out (an array).
- `Scores`: the dense matrix of every cell over the pool's candidates; `read_scores(read,
  pool_id)` builds it on an open connection, `pool_scores(db, pool)` opens one (no cache: the
  app's st.cache_data wrappers in app/data.py are the only cache).
- `read_blocks(read, pool_id, cells)`: the same, one block of whole prompts at a time (the audit
  out of core; see the section below).
- `score_values(db, pool)` (public, in _score_values.py): per cell, each distinct score and how
  many candidates hold it (the histograms).
- `candidate_scores(db, pool, judge, fmt)` (public): per cell (of one judge and format, when
  given), each scored candidate with its score and reference (what curation picks from), in blocks.
- `scored_cells(db, pool)` (public): the cells candidate_scores has rows for, from counts alone.
"""

from __future__ import annotations

import contextlib
import math
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Iterator

import numpy as np
import polars as pl

from . import _metrics as m
from ._read import reading
from ._metrics import ROUND

CELL_IDENTITY = {"judge": pl.String, "format": pl.String, "decoding": pl.String, "score": pl.String}


@dataclass
class Scores:
    """S[c, i] = normalised score of candidate i (cand_idx order) in cell c; NaN = no score.

    `cells` lists the cells (row c of S) with their call counts (cell_calls.sql); `order` sorts
    candidates by (prompt, position).
    """
    cells: pl.DataFrame
    S: np.ndarray
    prompt: np.ndarray
    position: np.ndarray
    reference: np.ndarray    # NaN where missing
    order: np.ndarray


def cell_identity(cell: dict) -> dict:
    """The (judge, format, decoding, score) of a row of Scores.cells."""
    return {k: cell[k] for k in CELL_IDENTITY}


def normalised_scores(pairing: str, lo: float, hi: float, a: np.ndarray, b: np.ndarray, swapped: np.ndarray,
                      value: np.ndarray, n: int, weight: np.ndarray | None = None) -> np.ndarray:
    """Each candidate's mean score over its parsed calls in one cell, rounded; NaN without one.

    pointwise: (v - lo) / (hi - lo); anchored: the same over forward calls (candidate in slot A
    against the anchor); tournament: sigma(v) as Response A, 1 - sigma(v) as Response B, over its
    matches against other candidates. weight (optional): each row's weight in its candidate's mean
    (1 / the call's parsed samples: a call then counts once, with the mean of its samples).

    Every sum is taken call by call in the calls' order (np.bincount), so a score is the same
    double whichever way it is counted: a weight of 1 is no weight (counts are whole numbers).
    """
    if pairing == "tournament":   # self-comparisons carry no information about a candidate
        match = a != b
        if not match.all():
            a, b, value = a[match], b[match], value[match]
            weight = None if weight is None else weight[match]
        a, b = a.astype(np.intp, copy=False), b.astype(np.intp, copy=False)   # once, not per bincount
        sig = 1.0 / (1.0 + np.exp(-value))
        if weight is None:
            count = np.bincount(a, minlength=n) + np.bincount(b, minlength=n)
            total = np.bincount(a, weights=sig, minlength=n) + np.bincount(b, weights=1.0 - sig, minlength=n)
        else:
            count = np.bincount(a, weights=weight, minlength=n) + np.bincount(b, weights=weight, minlength=n)
            total = (np.bincount(a, weights=weight * sig, minlength=n)
                     + np.bincount(b, weights=weight * (1.0 - sig), minlength=n))
    else:
        keep = ~swapped if pairing == "anchored" else slice(None)
        idx, val = a[keep], np.subtract(value[keep], lo, dtype=float)
        val /= hi - lo                    # (v - lo) / (hi - lo), in the one array
        if weight is not None:
            w = weight[keep]
            count, total = np.bincount(idx, weights=w, minlength=n), np.bincount(idx, weights=w * val, minlength=n)
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.round(total / count, ROUND)
        ascending = idx.size < 2 or bool((idx[1:] > idx[:-1]).all())    # no candidate twice (no count needed)
        count = None if ascending else np.bincount(idx, minlength=n)
        if ascending or count.max(initial=0) <= 1:  # one call per candidate (the usual case): no mean to take
            np.round(val, ROUND, out=val)
            if ascending and idx.size == n:         # each of the n candidates, in order
                return val
            out = np.full(n, np.nan)
            out[idx] = val
            return out
        total = np.bincount(idx, weights=val, minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.round(total / count, ROUND)


def _with_expected_cells(cells: pl.DataFrame) -> pl.DataFrame:
    """A cell is (judge, format, decoding, score): every (judge, format, decoding) gives a `label`
    cell (the parsed labels' values) and, for a pointwise format whose calls carry a label
    distribution, an `expected` cell (the probability-weighted value over the format's labels),
    with its own distinct values, ties and agreement. The expected cell keeps the format's name."""
    cells = cells.with_columns(pl.lit("label").alias("score"))
    extra = cells.filter((pl.col("kind") == "pointwise") & (pl.col("n_expected") > 0)).with_columns(
        pl.col("n_expected").alias("n_parsed"), pl.col("n_expected_all").alias("n_parsed_all"),
        pl.lit(False).alias("scale_0_100"), pl.lit(None).cast(cells["nominal_levels"].dtype)
        .alias("nominal_levels"), pl.lit("expected").alias("score"))
    return pl.concat([cells, extra]).sort("judge", "format", "decoding", "score",
                                          descending=[False, False, False, True])   # label first


def _with_mean_cells(cells: pl.DataFrame, repeats: bool) -> pl.DataFrame:
    """Every cell reads sample 0 of each call: aggregate `single`, its n_verdicts and n_parsed
    counting sample-0 calls. With repeats, a cell with a call asked more than once also comes as
    aggregate `mean`: each call's score is the mean of its parsed samples' normalised scores, and
    n_verdicts and n_parsed count every sample. Single before mean."""
    cells = cells.with_columns(pl.lit("single").alias("aggregate"))
    if repeats:
        mean = cells.filter(pl.col("repeated")).with_columns(
            pl.col("n_verdicts_all").alias("n_verdicts"), pl.col("n_parsed_all").alias("n_parsed"),
            pl.lit("mean").alias("aggregate"))
        cells = pl.concat([cells, mean]).sort("judge", "format", "decoding", "score", "aggregate",
                                              descending=[False, False, False, True, True], maintain_order=True)
    return cells.drop("n_verdicts_all", "n_parsed_all", "n_expected_all", "repeated")


ALL_PROMPTS = (0, 2 ** 31 - 1)   # the prompt_idx range of a whole pool


def read_cells(read, pool_id: int, repeats: bool = False) -> pl.DataFrame:
    """The pool's cells (cell_calls.sql, with the expected and, with repeats, the mean cells)."""
    return _with_mean_cells(_with_expected_cells(read.frame("cell_calls", pool_id=pool_id)), repeats)


def read_candidates(read, pool_id: int, prompts: tuple[int, int] | None = None) -> dict:
    """cand_idx, prompt_idx, position and reference of the pool's candidates (candidates.sql) or of
    those of the prompts in the range (block_candidates.sql), sorted by cand_idx."""
    cand = (read.numpy("candidates", pool_id=pool_id) if prompts is None else
            read.numpy("block_candidates", pool_id=pool_id, prompt_lo=prompts[0], prompt_hi=prompts[1]))
    if np.any(np.diff(cand["cand_idx"]) < 0):   # unordered rows: place them by cand_idx
        order = np.argsort(cand["cand_idx"])
        cand = {k: v[order] for k, v in cand.items()}
    return cand


def cell_score_rows(read, pool_id: int, cells: pl.DataFrame, cand_idx: np.ndarray,
                    prompts: tuple[int, int] = ALL_PROMPTS) -> tuple[np.ndarray, list]:
    """S (cells x candidates: each cell's normalised scores of the candidates `cand_idx`, sorted,
    which must be every candidate of the prompts in the range) and, per cell, (parsed values that
    are multiples of 5, parsed values) for 0-100 scales, else None."""
    n = cand_idx.size
    contiguous = n == 0 or int(cand_idx[-1]) - int(cand_idx[0]) + 1 == n
    first = int(cand_idx[0]) if n else 0

    def local(idx: np.ndarray) -> np.ndarray:   # cand_idx -> row of S (b_idx -1 stays -1)
        if contiguous:
            return idx if first == 0 else np.where(idx >= 0, idx - first, idx)
        return np.where(idx >= 0, np.searchsorted(cand_idx, idx), idx)

    S = np.full((cells.height, n), np.nan)
    mult5 = []
    for c, cell in enumerate(cells.iter_rows(named=True)):
        mean = cell["aggregate"] == "mean"
        calls = read.numpy("cell_sample_values" if mean else "cell_values", pool_id=pool_id,
                      judge_id=cell["judge_id"], format_id=cell["format_id"], decoding=cell["decoding"],
                      expected=cell["score"] == "expected", prompt_lo=prompts[0], prompt_hi=prompts[1])
        S[c] = normalised_scores(cell["pairing"], cell["value_lo"], cell["value_hi"], local(calls["a_idx"]),
                                 local(calls["b_idx"]), calls["swapped"], calls["value"], n,
                                 calls["weight"] if mean else None)
        mult5.append(multiples_of_5(calls["value"]) if cell["scale_0_100"] else None)
    return S, mult5


def multiples_of_5(values: np.ndarray) -> tuple[int, int]:
    """(how many of the parsed 0-100 values are multiples of 5, how many there are)."""
    fifths = values / 5.0       # exact for multiples of 5 (np.fmod is several times slower)
    return int(np.count_nonzero(fifths == np.floor(fifths))), int(values.size)


def multiples_of_5_share(values: np.ndarray) -> float | None:
    """The share of (parsed, 0-100) values that are multiples of 5; None without any."""
    return mult5_shares([multiples_of_5(values)])[0]


def mult5_shares(tallies: list) -> list:
    """Each cell's share of multiples of 5 from its (multiples, values) tallies; None without one."""
    return [t[0] / t[1] if t is not None and t[1] else None for t in tallies]


def read_scores(read, pool_id: int, repeats: bool = False) -> Scores:
    """The Scores of the pool `pool_id`, read on an open connection; with repeats, the cells of
    repeated calls come a second time, as aggregate `mean` (_with_mean_cells)."""
    cells = read_cells(read, pool_id, repeats)
    cand = read_candidates(read, pool_id)
    S, mult5 = cell_score_rows(read, pool_id, cells, cand["cand_idx"])
    prompt, position, reference = cand["prompt_idx"], cand["position"], cand["reference"]
    cells = cells.with_columns(pl.Series("mult5_share", mult5_shares(mult5), dtype=pl.Float64)).drop("scale_0_100")
    return Scores(cells, S, prompt, position, reference, listing_order(prompt, position))


def listing_order(prompt: np.ndarray, position: np.ndarray) -> np.ndarray:
    """Candidate indices sorted by (prompt, position); a pool imported in listing order already is."""
    dp = np.diff(prompt)
    if np.all((dp > 0) | ((dp == 0) & (np.diff(position) > 0))):
        return np.arange(prompt.size)
    return np.lexsort((position, prompt))


def pool_scores(db: str | os.PathLike | None, pool: str, repeats: bool = False) -> Scores:
    """The Scores of a pool by name (read_scores on a short-lived read-only connection)."""
    with reading(db) as read:
        return read_scores(read, read.pool_id(pool), repeats)


# --- the audit out of core (docs/scale.md#the-audit-at-ten-million-candidates) ---------------
# A pool read in blocks of whole prompts, so that the audit's memory follows the block, not the pool.
#
# Every metric of a cell is either a count, a tally of values, or a mean over prompts, and a prompt
# lies in one block; so each block gives each cell its parts (_cells.cell_parts: counts, the tally of
# score values, the joint tally of (score, reference) values that Spearman's average ranks need, and
# the per-prompt sums) and _cells.finish_cell adds them up. A pool of at most `block` candidates is
# one block, and its numbers are those of the in-memory engine (_cells.compute_cells over
# _scores.read_scores) bit for bit; over several blocks, a mean's sum is added block by block (equal
# to 1e-12; tests/audit/test_audit_blocks.py). read_blocks reads the blocks; _cells.audit_cells adds
# up. Memory: one block's scores and layouts, the next block being read meanwhile on a second
# thread (DuckDB and numpy release the GIL), plus the tallies, which grow with the number of
# distinct (score, reference) pairs, not of candidates. Both engines stay: the in-memory one
# (read_scores, pool_scores) is the tests' reference for the blocks; levels, stability
# (cell_levels), positions and candidate_scores read blocks too.

BLOCK_CANDIDATES = 1 << 20    # candidates per block (whole prompts: a block holds about this many)


def prompt_blocks(prompt_lo: int, prompt_hi: int, n_candidates: int, block: int) -> list[tuple[int, int]]:
    """Ranges of prompt indices (inclusive) cutting prompt_lo..prompt_hi into ceil(n / block)
    blocks of equally many prompts (about `block` candidates each when prompts are alike)."""
    if n_candidates <= 0 or prompt_hi < prompt_lo:
        return []
    n_blocks = max(1, math.ceil(n_candidates / block))
    step = math.ceil((prompt_hi - prompt_lo + 1) / n_blocks)
    return [(lo, min(lo + step - 1, prompt_hi)) for lo in range(prompt_lo, prompt_hi + 1, step)]


def tiebreak_keys(cand_idx: np.ndarray, seed: int) -> np.ndarray:
    """m.tiebreak_key(n, seed)[cand_idx] without drawing the pool's n keys: the generator jumps to
    the smallest cand_idx and draws the span up to the largest (one 64-bit draw per key)."""
    if cand_idx.size == 0:
        return np.zeros(0)
    lo, hi = int(cand_idx.min()), int(cand_idx.max())
    rng = np.random.default_rng(seed)
    rng.bit_generator.advance(lo)
    return rng.random(hi - lo + 1)[cand_idx - lo]


def _read_block(read, pid: int, cells: pl.DataFrame, prompts: tuple[int, int]) -> tuple[Scores, np.ndarray, list]:
    cand = read_candidates(read, pid, prompts)
    S, mult5 = cell_score_rows(read, pid, cells, cand["cand_idx"], prompts)
    prompt, position = cand["prompt_idx"], cand["position"]
    sc = Scores(cells, S, prompt, position, cand["reference"], listing_order(prompt, position))
    return sc, cand["cand_idx"], mult5


def read_blocks(read, pid: int, cells: pl.DataFrame, block: int = BLOCK_CANDIDATES) -> Iterator[tuple]:
    """The pool's blocks of whole prompts, about `block` candidates each, in prompt order: per block
    (Scores of its candidates, sorted by cand_idx; their cand_idx; per cell, the (multiples of 5,
    values) tally of a 0-100 scale, else None). The next block is read on a second thread while
    the caller works on this one."""
    if block < 1:
        raise ValueError("block: at least one candidate")
    extent = read.numpy("pool_extent", pool_id=pid)
    blocks = prompt_blocks(int(extent["prompt_lo"][0]), int(extent["prompt_hi"][0]),
                           int(extent["n_candidates"][0]), block)
    if not blocks:
        return
    with ThreadPoolExecutor(max_workers=1) as reader:
        pending = reader.submit(_read_block, read, pid, cells, blocks[0])
        for b in range(len(blocks)):
            done = pending.result()
            if b + 1 < len(blocks):
                pending = reader.submit(_read_block, read, pid, cells, blocks[b + 1])
            yield done
            del done


def merged_levels(tallies: list) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct values and their counts over several (values, counts) tallies (m.levels of
    the blocks of one cell); one tally is returned as it is."""
    if len(tallies) == 1:
        return tallies[0]
    if not tallies:
        return np.zeros(0), np.zeros(0, dtype=np.int64)
    values, inverse = np.unique(np.concatenate([v for v, _ in tallies]), return_inverse=True)
    return values, np.bincount(inverse, weights=np.concatenate([c for _, c in tallies]),
                               minlength=values.size).astype(np.int64)


def cell_levels(db: str | os.PathLike | None, pool: str, block: int | None = None
                ) -> tuple[pl.DataFrame, list[tuple[np.ndarray, np.ndarray]]]:
    """The pool's cells (read_cells: the rows of pool_scores' cells, in order) and, per cell, its
    distinct scores and how many candidates hold each (m.levels over the cell's scored candidates),
    read in blocks of whole prompts: memory follows the block, not the pool (levels, stability)."""
    with reading(db) as read:
        pid = read.pool_id(pool)
        cells = read_cells(read, pid)
        tallies: list[list] = [[] for _ in range(cells.height)]
        with contextlib.closing(read_blocks(read, pid, cells, block or BLOCK_CANDIDATES)) as blocks:
            for sc, _, _ in blocks:
                for c in range(cells.height):
                    tallies[c].append(m.levels(sc.S[c][~np.isnan(sc.S[c])]))
    return cells, [merged_levels(t) for t in tallies]


def scored_cells(db: str | os.PathLike | None, pool: str) -> pl.DataFrame:
    """One row per (judge, format, decoding, score) cell with parsed calls: what candidate_scores would
    return rows for, from the counts alone (cell_calls.sql), so a page lists cells without scoring.

    Columns: judge, format, decoding, score, n_parsed.
    """
    with reading(db) as read:
        cells = read_cells(read, read.pool_id(pool))
    return cells.filter(pl.col("n_parsed") > 0).select("judge", "format", "decoding", "score", "n_parsed")


def candidate_scores(db: str | os.PathLike | None, pool: str, judge: str | None = None, fmt: str | None = None,
                     block: int | None = None) -> pl.DataFrame:
    """One row per (judge, format, decoding, score, scored candidate); only the cells of `judge`
    and of `fmt` when given (curation reads one cell: the others are never read).

    Columns: judge, format, decoding, score (label | expected), cand_idx, prompt_idx, position,
    s (normalised score), r (reference). Read in blocks of whole prompts: memory follows the rows
    returned and one block, not the pool's whole score matrix.
    """
    schema = {"judge": pl.String, "format": pl.String, "decoding": pl.String, "score": pl.String, "cand_idx": pl.Int64,
              "prompt_idx": pl.Int64, "position": pl.Int64, "s": pl.Float64, "r": pl.Float64}
    with reading(db) as read:
        pid = read.pool_id(pool)
        cells = read_cells(read, pid)
        if cells.height and judge is not None:
            cells = cells.filter(pl.col("judge") == judge)
        if cells.height and fmt is not None:
            cells = cells.filter(pl.col("format") == fmt)
        if cells.height == 0:
            return pl.DataFrame(schema=schema)
        frames: list[list[pl.DataFrame]] = [[] for _ in range(cells.height)]
        with contextlib.closing(read_blocks(read, pid, cells, block or BLOCK_CANDIDATES)) as blocks:
            for sc, cand_idx, _ in blocks:
                for c, cell in enumerate(cells.iter_rows(named=True)):
                    idx = np.flatnonzero(~np.isnan(sc.S[c]))
                    frames[c].append(pl.DataFrame({
                        "judge": pl.repeat(cell["judge"], idx.size, eager=True),
                        "format": pl.repeat(cell["format"], idx.size, eager=True),
                        "decoding": pl.repeat(cell["decoding"], idx.size, eager=True),
                        "score": pl.repeat(cell["score"], idx.size, eager=True),
                        "cand_idx": cand_idx[idx], "prompt_idx": sc.prompt[idx], "position": sc.position[idx],
                        "s": sc.S[c][idx], "r": sc.reference[idx]}).cast(schema))
    # cell by cell, each in candidate order (as the whole-matrix engine gave them); the blocks come
    # in prompt order, which is candidate order in a pool listed prompt by prompt: no sort (no copy)
    out = []
    for parts in frames:
        cell = pl.concat(parts)
        out.append(cell if cell["cand_idx"].is_sorted() else cell.sort("cand_idx"))
    return pl.concat(out, rechunk=False)


def reference_agreement(pairing: str | None, lo: float, hi: float, calls: list[dict], prompt_of: dict[int, int],
                        reference: dict[int, float], seed: int = 0) -> dict:
    """The format's own agreement with the references (docs/metrics.md#the-audit-audit) on a set of
    calls, as the audit computes it for a cell: each candidate's normalised score from the calls
    (`normalised_scores`: pointwise, or tournament's σ(v) as A, 1 − σ(v) as B), then per prompt
    with at least two candidates holding a score and a reference, tau_a and top1 (the audit's
    seeded tie-break key), averaged over those prompts.

    calls: {a_idx, b_idx, value} (value None when unparsed; b_idx None for pointwise). Returns
    {tau_a, top1, n_prompts}; tau_a and top1 are None where no prompt qualifies, and for an
    anchored format (its calls here are not against the anchor)."""
    empty = {"tau_a": None, "top1": None, "n_prompts": 0}
    if pairing == "anchored":
        return empty
    parsed = [c for c in calls if c["value"] is not None]
    if not parsed:
        return empty
    a = np.array([c["a_idx"] for c in parsed], dtype=np.int64)
    b = np.array([c["a_idx"] if c["b_idx"] is None else c["b_idx"] for c in parsed], dtype=np.int64)
    n = int(max(a.max(), b.max())) + 1
    s = normalised_scores(pairing or "pointwise", lo, hi, a, b, np.zeros(a.size, dtype=bool),
                          np.array([float(c["value"]) for c in parsed]), n)
    cands = sorted({k for k in np.concatenate([a, b]).tolist() if not np.isnan(s[k]) and reference.get(k) is not None},
                   key=lambda k: (prompt_of[k], k))
    prompts = [prompt_of[k] for k in cands]
    kept = [k for k, p in zip(cands, prompts) if prompts.count(p) >= 2]
    if not kept:
        return empty
    idx = np.array(kept, dtype=np.int64)
    _, group = np.unique([prompt_of[k] for k in kept], return_inverse=True)
    stats = m.PromptStats(group.astype(np.int64), np.round(np.array([float(reference[k]) for k in kept]), m.ROUND),
                          tiebreak_keys(idx, seed)).compute(s[idx])
    tau_a, _, _ = m.kendall_variants(stats["n0"], stats["cd"], stats["n1"], stats["n2"])
    return {"tau_a": float(np.nanmean(tau_a)), "top1": float(np.mean(stats["top1"])), "n_prompts": int(tau_a.size)}
