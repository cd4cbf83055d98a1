"""Intransitive tournaments (docs/metrics.md#intransitive-tournaments): how often a tournament cell's
decisive verdicts on three candidates of one prompt go round in a circle.

A pair's verdict is decisive when its sample-0 parsed calls, in one order or both, all prefer the same
candidate; a triad of a prompt's candidates counts when its three pairs all
are. `intransitive_share` = the triads whose verdicts form a cycle (x over y, y over z, z over x) /
the triads that count, pooled over the prompts; its 95% interval is a percentile bootstrap over
prompts (seeded by the cell, as slot bias's), drawn as multinomial counts of the prompts' kinds (a
prompt is its cycles and triads, so resampling n prompts is drawing how many of each kind: the same
distribution in memory of the kinds, not of the prompts times the draws). A judge that decides each
pair by a coin flip makes a cycle of 2 of the 8 orientations of a triad: `intransitive_random` = ¼. A
transitive judge (one that ranks the candidates) makes none.

The kinds are counted in numpy (`prompt_kinds`), not by a three-way self-join of the pairs: DuckDB
hands over the cells' calls as integers (intransitive_calls.sql: cell, the pair's candidates, the
preference's sign), each candidate is placed within its prompt (its rank by cand_idx among the prompt's
candidates, from the pool's candidates), and the prompts with k candidates become a (prompts, k, k)
array of the pairs' verdicts, filled in one pass over the calls; a prompt's triads are then the C(k, 3)
columns of that array (4 for 4 candidates), read for every prompt at once. The counts are the self-join's
(tests/audit/test_intransitive_kinds.py compares them with the per-prompt SQL it replaced).
"""

from __future__ import annotations

import os
from itertools import combinations

import numpy as np
import polars as pl

from . import _metrics as m
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


BLOCK = 1 << 24     # entries of the per-prompt pair (k x k) and triad (C(k, 3)) arrays held at once
_LO, _HI, _UNDECIDED = 1, 2, 4      # a pair's flag: every call preferred lo, every call hi, neither (a tie, or both)


def candidate_places(cand_prompt: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """cand_prompt[cand_idx] = the candidate's prompt_idx -> (k, row, place, of_size): per candidate, the
    number of its prompt's candidates, its prompt's row among the prompts of that many candidates and its
    own rank by cand_idx among its prompt's candidates (0-based); of_size[k] = the prompts of k candidates."""
    cand_prompt = np.asarray(cand_prompt, np.int64)
    sizes = np.bincount(cand_prompt) if cand_prompt.size else np.zeros(0, np.int64)
    order = np.argsort(cand_prompt, kind="stable")       # linear where the pool lists its prompts in order
    place = np.empty(cand_prompt.size, np.int64)
    place[order] = np.arange(cand_prompt.size) - (np.cumsum(sizes) - sizes)[cand_prompt[order]]
    of_size = np.bincount(sizes)
    row = np.zeros(sizes.size, np.int64)
    for k in np.flatnonzero(of_size).tolist():
        row[sizes == k] = np.arange(of_size[k])
    return sizes[cand_prompt], row[cand_prompt], place, of_size


def prompt_kinds(cell: np.ndarray, lo: np.ndarray, hi: np.ndarray, s: np.ndarray, cand_prompt: np.ndarray,
                 n_cells: int) -> np.ndarray:
    """Pure: the prompts' kinds of the cells' calls. A call: its cell (0..n_cells-1), its pair's candidates
    (lo < hi, cand_idx of one prompt) and its preference turned toward lo (s: +1, -1, 0 a tie);
    cand_prompt[cand_idx] = the candidate's prompt_idx. A pair is decisive when its calls all have one
    non-zero s; a triad of a prompt's candidates x < y < z counts when its three pairs are decisive, and
    is a cycle when s_xy = s_yz = -s_xz. Returns rows (cell, n_cycles, n_triads, prompts): how many
    prompts of the cell have n_triads > 0 counted triads, n_cycles of them cycles; in that order.

    The prompts of k candidates (k >= 3) are the rows of a (cells x prompts, k, k) array of their pairs'
    verdicts, filled from the calls in one pass, as many rows at once as BLOCK allows (at 1M candidates
    every cell's prompts at once); their triads are the C(k, 3) columns of that array."""
    lo, hi, cell = np.asarray(lo), np.asarray(hi), np.asarray(cell)
    # s = -1, 0, +1 -> _HI, _UNDECIDED, _LO (1 shifted by (s + 2) mod 3)
    flag = np.left_shift(np.uint8(1), ((np.asarray(s, np.int8) + 2) % 3).view(np.uint8))
    k_cand, row_cand, place, of_size = candidate_places(cand_prompt)
    base = (row_cand * k_cand + place) * k_cand           # lo's row and place in its k's array, less the cell
    sizes = np.flatnonzero(of_size).tolist()
    k_call = k_cand[lo] if len(sizes) > 1 else None
    found: dict[tuple[int, int, int], int] = {}
    for k in [k for k in sizes if k >= 3]:
        if k_call is None:
            calls = slice(None)                            # every prompt has k candidates
        else:
            calls = np.flatnonzero(k_call == k)
            if calls.size == 0:
                continue
        n_rows = int(of_size[k])
        triads = np.array(list(combinations(range(k), 3)))
        per_block = max(1, BLOCK // max(k * k, triads.shape[0]))
        # the call's pair in the (cells x prompts, k, k) array: the row (cell, prompt), lo's place, hi's place
        at = cell[calls].astype(np.int64)
        at *= n_rows * k * k
        at += base[lo[calls]]
        at += place[hi[calls]]
        for first, block_at, flags in _blocks(at, flag[calls], per_block * k * k):
            rows = min(per_block, n_cells * n_rows - first // (k * k))
            cycles, counted = _triad_counts(block_at - first, flags, rows, k, triads)
            has = np.flatnonzero(counted)
            kinds, prompts = _tally((first // (k * k) + has) // n_rows, cycles[has], counted[has], n_cells)
            for key, n in zip(map(tuple, kinds.tolist()), prompts.tolist()):
                found[key] = found.get(key, 0) + n
    return np.array([[*key, found[key]] for key in sorted(found)], np.int64).reshape(-1, 4)


def _blocks(at: np.ndarray, flags: np.ndarray, size: int):
    """(first entry, the calls' entries, their flags) of each block of `size` entries that holds a call."""
    if at.size == 0 or int(at.max()) < size:
        yield 0, at, flags
        return
    block = at // size
    counts = np.bincount(block)
    order = np.argsort(block.astype(np.int16) if counts.size <= 1 << 15 else block, kind="stable")  # 16 bits: radix
    ends = np.cumsum(counts)
    for b in np.flatnonzero(counts).tolist():
        part = order[ends[b] - counts[b]:ends[b]]
        yield b * size, at[part], flags[part]


def _triad_counts(at: np.ndarray, flags: np.ndarray, rows: int, k: int, triads: np.ndarray):
    """Per row of a block: how many of its counted triads are cycles, and how many it has. `at` = each
    call's entry in the block's (rows, k, k) array of pairs, `flags` its flag (_LO, _HI, _UNDECIDED)."""
    pair = np.zeros(rows * k * k, np.uint8)
    pair[at] = flags                                       # a pair of several calls keeps one call's flag,
    differ = pair[at] != flags
    pair[at[differ]] = _UNDECIDED                          # or, where they differ, none decisive
    sign = ((pair == _LO).view(np.int8) - (pair == _HI).view(np.int8)).reshape(rows, k, k)     # 0: not decisive
    x, y, z = triads.T
    s_xy, s_yz, s_xz = sign[:, x, y], sign[:, y, z], sign[:, x, z]
    counted = s_xy * s_yz * s_xz != 0
    cycles = np.abs(s_xy + s_yz - s_xz) == 3               # s_xy = s_yz = -s_xz, none 0
    return cycles.sum(axis=1), counted.sum(axis=1)


def _tally(cell: np.ndarray, cycles: np.ndarray, counted: np.ndarray, n_cells: int):
    """The distinct (cell, cycles, counted) rows and how many there are of each (m.distinct_counts)."""
    if cell.size == 0:
        return np.zeros((0, 3), np.int64), np.zeros(0, np.int64)
    t = int(counted.max()) + 1
    *columns, n = m.distinct_counts([cell, cycles, counted], [n_cells, t, t])
    return np.column_stack(columns), n


def intransitivity(db: str | os.PathLike | None, pool: str, seed: int = 0, n_boot: int = N_BOOT) -> pl.DataFrame:
    """One row per tournament cell of the pool with a counted triad, INTRANSITIVE_COLUMNS: judge,
    format, decoding, intransitive_prompts (prompts with a counted triad), intransitive_triads,
    intransitive_cycles, intransitive_share (cycles / triads), intransitive_lo/hi (95% bootstrap over
    prompts), intransitive_random (¼: a judge flipping a coin)."""
    with reading(db) as read:
        pid = read.pool_id(pool)
        cells = read.frame("intransitive_cells", pool_id=pid).with_row_index("cell")
        if cells.height == 0:
            return pl.DataFrame(schema=INTRANSITIVE_SCHEMA)
        with read.frames(tournament_cells=cells.select("judge_id", "format_id", "decoding", "cell")):
            calls = read.numpy("intransitive_calls", pool_id=pid)
        cands = read.numpy("candidates", pool_id=pid)
    cand_prompt = np.zeros(int(cands["cand_idx"].max()) + 1 if cands["cand_idx"].size else 0, np.int64)
    cand_prompt[cands["cand_idx"]] = cands["prompt_idx"]
    kinds = prompt_kinds(calls["cell"], calls["lo_idx"], calls["hi_idx"], calls["s"], cand_prompt, cells.height)
    rows = []
    for c in np.unique(kinds[:, 0]).tolist():
        judge, fmt, dec = (cells[name][c] for name in ("judge", "format", "decoding"))
        g = kinds[kinds[:, 0] == c]
        counts = g[:, 3]
        got = kinds_share(g[:, 1:3], counts, n_boot, cell_rng(seed, judge, fmt, dec))
        rows.append({"judge": judge, "format": fmt, "decoding": dec, "intransitive_prompts": int(counts.sum()),
                     "intransitive_triads": int(counts @ g[:, 2]), "intransitive_cycles": int(counts @ g[:, 1]),
                     "intransitive_share": got["share"], "intransitive_lo": got["lo"], "intransitive_hi": got["hi"],
                     "intransitive_random": RANDOM_SHARE})
    return pl.DataFrame(rows, schema=INTRANSITIVE_SCHEMA)
