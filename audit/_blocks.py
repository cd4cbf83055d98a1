"""The audit out of core (DESIGN.md 'Past one machine'): a pool read in blocks of whole prompts, so
that the audit's memory follows the block, not the pool.

Every metric of a cell is either a count, a tally of values, or a mean over prompts, and a prompt
lies in one block; so each block gives each cell its parts (_cells.cell_parts: counts, the tally of
score values, the joint tally of (score, reference) values that Spearman's average ranks need, and
the per-prompt sums) and _cells.finish_cell adds them up. A pool of at most `block` candidates is
one block, and its numbers are those of the in-memory engine (_cells.compute_cells over
_scores.read_scores) bit for bit; over several blocks, a mean's sum is added block by block (equal
to 1e-12; tests/test_audit_blocks.py). This module reads the blocks; _cells.audit_cells adds up. Memory: one block's scores and layouts, the next block being
read meanwhile on a second thread (DuckDB and numpy release the GIL), plus the tallies, which grow
with the number of distinct (score, reference) pairs, not of candidates.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from typing import Iterator

import numpy as np
import polars as pl

from ._db import numpy
from ._scores import Scores, cell_score_rows, listing_order, read_candidates

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


def _read_block(con, pid: int, cells: pl.DataFrame, prompts: tuple[int, int]) -> tuple[Scores, np.ndarray, list]:
    cand = read_candidates(con, pid, prompts)
    S, mult5 = cell_score_rows(con, pid, cells, cand["cand_idx"], prompts)
    prompt, position = cand["prompt_idx"], cand["position"]
    sc = Scores(cells, S, prompt, position, cand["reference"], listing_order(prompt, position))
    return sc, cand["cand_idx"], mult5


def read_blocks(con, pid: int, cells: pl.DataFrame, block: int = BLOCK_CANDIDATES) -> Iterator[tuple]:
    """The pool's blocks of whole prompts, about `block` candidates each, in prompt order: per block
    (Scores of its candidates, sorted by cand_idx; their cand_idx; per cell, the (multiples of 5,
    values) tally of a 0-100 scale, else None). The next block is read on a second thread while
    the caller works on this one."""
    if block < 1:
        raise ValueError("block: at least one candidate")
    extent = numpy(con, "pool_extent", pool_id=pid)
    blocks = prompt_blocks(int(extent["prompt_lo"][0]), int(extent["prompt_hi"][0]),
                           int(extent["n_candidates"][0]), block)
    if not blocks:
        return
    with ThreadPoolExecutor(max_workers=1) as reader:
        pending = reader.submit(_read_block, con, pid, cells, blocks[0])
        for b in range(len(blocks)):
            done = pending.result()
            if b + 1 < len(blocks):
                pending = reader.submit(_read_block, con, pid, cells, blocks[b + 1])
            yield done
            del done
