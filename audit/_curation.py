"""What curation reads from a pool, out of core (`curate` at 10M candidates): one row per
prompt for the held-out rule, and per candidate only (prompt_idx, cand_idx, value) of the one cell
or baseline it selects by, never the pool's texts, ids or other cells. The selection itself is
train.curate's."""

from __future__ import annotations

import contextlib
import os

import numpy as np
import polars as pl

from ._read import reading
from ._scores import BLOCK_CANDIDATES, read_blocks, read_cells

VALUES = {"prompt_idx": pl.Int64, "cand_idx": pl.Int64, "value": pl.Float64}


def curation_prompts(db: str | os.PathLike | None, pool: str) -> pl.DataFrame:
    """One row per prompt with candidates, in the order of its first candidate (as
    pool_candidates' rows give them). Columns: prompt_idx, prompt_id, marked_heldout."""
    with reading(db) as read:
        return read.frame("curation_prompts", pool_id=read.pool_id(pool))


def pool_extent(db: str | os.PathLike | None, pool: str) -> tuple[int, int]:
    """(candidates, prompt_hi + 1): the sizes of the pool's tie-break key streams."""
    with reading(db) as read:
        ext = read.numpy("pool_extent", pool_id=read.pool_id(pool))
    return int(ext["n_candidates"][0]), int(ext["prompt_hi"][0]) + 1


def baseline_values(db: str | os.PathLike | None, pool: str, policy: str) -> pl.DataFrame:
    """prompt_idx, cand_idx, value of every candidate with a value under a baseline policy
    (random: 0; length: characters; full: the reference), unordered."""
    if policy not in ("random", "length", "full"):
        raise ValueError(f"baseline_values: {policy!r} is not a baseline (random, length, full)")
    with reading(db) as read:
        rows = read.frame("curation_values", pool_id=read.pool_id(pool))
    value = {"random": pl.lit(0.0), "length": pl.col("chars"), "full": pl.col("reference")}[policy]
    return rows.select("prompt_idx", "cand_idx", value.cast(pl.Float64).alias("value")) \
        .filter(pl.col("value").is_not_null() & pl.col("value").is_not_nan()).cast(VALUES)


def cell_decoding(cells: pl.DataFrame, judge: str, fmt: str, decoding: str | None, score: str) -> str | None:
    """The decoding curation reads a cell in (train.curate.pick_cell's rule, on the scored cells):
    the one asked, else the cell's only mode, else of several the paper's (greedy)."""
    if decoding is not None:
        return decoding
    modes = sorted(cells.filter((pl.col("judge") == judge) & (pl.col("format") == fmt)
                                & (pl.col("score") == score))["decoding"].unique().to_list())
    return modes[0] if len(modes) == 1 else "greedy"


def cell_values(db: str | os.PathLike | None, pool: str, judge: str, fmt: str, decoding: str | None = None,
                score: str = "label", block: int | None = None) -> tuple[pl.DataFrame, str | None]:
    """(prompt_idx, cand_idx, value = the normalised score s of each scored candidate of the one
    cell, by cand_idx; the cell's decoding as cell_decoding chose it). The same rows as
    candidate_scores' of that cell, read in blocks of whole prompts; no other cell is read."""
    return cells_values(db, pool, judge, [fmt], decoding, score, block)[fmt]


def cells_values(db: str | os.PathLike | None, pool: str, judge: str | None, formats=None, decoding: str | None = None,
                 score: str = "label", block: int | None = None) -> dict[str, tuple[pl.DataFrame, str | None]]:
    """{format: cell_values(db, pool, judge, format, decoding, score)} for several formats of one judge,
    from one reading: the cells listed once and the pool's blocks read once for all of them. judge None:
    the first judge by name with a scored cell (a cell with parsed calls; none: {}); formats None: every
    format that judge scored, sorted (the Curate page's first choice, train.curation_view.first_choice)."""
    with reading(db) as read:
        pid = read.pool_id(pool)
        cells = read_cells(read, pid)
        scored = cells.filter(pl.col("n_parsed") > 0) if cells.height else cells
        if judge is None:
            if scored.height == 0:
                return {}
            judge = scored["judge"].sort()[0]
        if formats is None:
            formats = scored.filter(pl.col("judge") == judge)["format"].unique().sort().to_list()
        formats = list(formats)
        picked, out = [], {}
        for fmt in formats:
            dec = cell_decoding(scored, judge, fmt, decoding, score) if scored.height else decoding
            one = cells.filter((pl.col("judge") == judge) & (pl.col("format") == fmt) & (pl.col("score") == score)
                               & (pl.col("decoding") == dec)) if cells.height else cells
            out[fmt] = (pl.DataFrame(schema=VALUES), dec)
            if one.height:
                picked.append((fmt, one.head(1)))
        if not picked:
            return out
        parts: dict[str, list[pl.DataFrame]] = {fmt: [] for fmt, _ in picked}
        both = pl.concat([one for _, one in picked])
        with contextlib.closing(read_blocks(read, pid, both, block or BLOCK_CANDIDATES)) as blocks:
            for sc, cand_idx, _ in blocks:
                for row, (fmt, _) in enumerate(picked):
                    idx = np.flatnonzero(~np.isnan(sc.S[row]))
                    parts[fmt].append(pl.DataFrame({"prompt_idx": sc.prompt[idx], "cand_idx": cand_idx[idx],
                                                    "value": sc.S[row][idx]}).cast(VALUES))
    for fmt, frames in parts.items():
        frame = pl.concat(frames) if frames else pl.DataFrame(schema=VALUES)
        out[fmt] = (frame if frame["cand_idx"].is_sorted() else frame.sort("cand_idx")), out[fmt][1]
    return out
