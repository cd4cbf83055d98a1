"""The per (judge, format, decoding, score, aggregate) diagnostics table: levels, ties and agreement
with the reference."""

from __future__ import annotations

import contextlib
import os

import numpy as np
import polars as pl

from . import _metrics as m
from ._read import reading
from ._jury import juries_of, mark_juries
from ._scores import (BLOCK_CANDIDATES, Scores, merged_levels, mult5_shares, read_blocks, read_cells,
                      tiebreak_keys)

CELL_COLUMNS = [
    "judge", "format", "decoding", "score", "aggregate", "kind", "n_verdicts", "n_candidates", "n_prompts",
    "parse_rate", "nominal_levels", "distinct", "tie_prob", "d1", "d2", "mult5_share", "top_tied",
    "spearman", "tau_a", "tau_b", "somers_d", "top1", "top1_expected", "top1_uniform", "n_ranked_prompts",
    "n_top_prompts",
]


def dense_groups(prompt: np.ndarray, min_size: int) -> tuple[np.ndarray, np.ndarray]:
    """For elements sorted by prompt: a mask of those whose prompt has >= min_size of them, and
    dense, contiguous group ids (0..G-1) for the kept elements."""
    if prompt.size == 0:
        return np.zeros(0, bool), np.zeros(0, np.int64)
    change = np.concatenate(([True], prompt[1:] != prompt[:-1]))
    gid = np.cumsum(change) - 1
    if min_size <= 1:                  # every prompt kept: its ids as they are (no count, no renumbering)
        return np.ones(prompt.size, bool), gid
    keep = np.bincount(gid)[gid] >= min_size
    kept = gid[keep]
    if kept.size == 0:
        return keep, kept
    return keep, np.cumsum(np.concatenate(([True], kept[1:] != kept[:-1]))) - 1


class PoolView:
    """The pool's candidates in (prompt, position) order, with what every cell shares:
    references as level codes, the seeded tie-break keys, and cached prompt layouts."""

    def __init__(self, sc: Scores, seed: int, key: np.ndarray | None = None):
        """key: each candidate's tie-break key, in sc's order (default: m.tiebreak_key, for a
        Scores that holds the whole pool; a block passes its candidates' keys)."""
        self.order = sc.order
        self.identity = bool(np.all(np.diff(sc.order) == 1)) if sc.order.size else True
        self.prompt = sc.prompt[sc.order]
        _, self.gid = dense_groups(self.prompt, 1)         # each element's prompt as 0..n_prompts-1
        self.starts = m.group_starts(self.gid)             # where each prompt's elements begin
        self.n_prompts = self.starts.size
        r = sc.reference[sc.order]
        self.has_r = ~np.isnan(r)
        self.r_values, _ = m.levels(r[self.has_r])
        self.r_code = m.level_codes(r, self.r_values)   # ranks and ties of r, as small integers
        self.key = (m.tiebreak_key(sc.order.size, seed) if key is None else key)[sc.order]
        self._cache: list[tuple[str, np.ndarray, object]] = []
        self._matrix: m.PromptMatrix | None | bool = False     # laid out on first use (matrix)

    def scores(self, row: np.ndarray) -> np.ndarray:
        return row if self.identity else row[self.order]

    def _cached(self, tag: str, mask: np.ndarray, build):
        """build(), reused while cells select the same candidates (the usual case)."""
        for t, seen, value in self._cache:
            if t == tag and np.array_equal(seen, mask):
                return value
        value = build()
        self._cache = [entry for entry in self._cache if entry[0] != tag][-3:]
        self._cache.append((tag, mask, value))
        return value

    def pairs_layout(self, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The elements in `mask` whose prompt has >= 2 of them, with dense group ids: what
        dense_groups(self.prompt[idx], 2) gives, counted on the view's prompt ids (no pass over
        the elements' prompt changes)."""
        idx = np.flatnonzero(mask)
        gid = self.gid[idx]
        kept_prompts = np.bincount(gid, minlength=self.n_prompts) >= 2
        keep = kept_prompts[gid]
        return idx[keep], (np.cumsum(kept_prompts) - 1)[gid[keep]]

    def tie_layout(self, valid: np.ndarray):
        """Groups of >= 2 scored candidates: (element indices, group ids)."""
        return self._cached("tie", valid, lambda: self.pairs_layout(valid))

    def matrix(self) -> m.PromptMatrix | None:
        """The view's prompts laid out once for every cell (m.PromptMatrix: references and keys); None
        where a prompt has more than m.SMALL_GROUP candidates (each cell then lays out its own)."""
        if self._matrix is False:
            sizes = np.diff(np.append(self.starts, self.gid.size))
            self._matrix = (m.PromptMatrix(self.gid, self.r_code, self.key)
                            if not sizes.size or sizes.max() <= m.SMALL_GROUP else None)
        return self._matrix

    def top_tied(self, valid: np.ndarray, code: np.ndarray) -> tuple[float, int]:
        """top_tied's (sum, count) over the prompts with >= 2 scored candidates (`valid`; `code`: their
        scores as level codes, others meaningless): how many of those prompts have their highest score
        held by >= 2 of them, and how many there are: what m.top_tied gives over the groups of
        tie_layout(valid), taken on the view's prompts in place where it can."""
        matrix = self.matrix()
        if matrix is None:
            idx, g = self.tie_layout(valid)
            return _sum(m.top_tied(g, code[idx]).astype(float)) if idx.size else (0.0, 0)
        tied, groups = matrix.top_tied(code, valid)
        return float(tied), groups

    def ranked_stats(self, both: np.ndarray, code: np.ndarray) -> tuple[int, dict] | None:
        """Over the prompts with >= 2 candidates having a score (`code`, level codes) and a reference
        (`both`): how many there are and PromptStats' values for each, in prompt order; None without one."""
        matrix = self.matrix()
        if matrix is None:
            idx, stats = self.ranked(both)
            return (stats.n_groups, stats.compute(code[idx])) if idx.size else None
        n_kept, st = matrix.compute(code, both)
        return (n_kept, st) if n_kept else None

    def ranked(self, both: np.ndarray):
        """Groups of >= 2 candidates with score and reference: (element indices, PromptStats)."""
        def build():
            idx, g = self.pairs_layout(both)
            return idx, m.PromptStats(g, self.r_code[idx], self.key[idx])
        return self._cached("rank", both, build)

    def reference_ranks(self, both: np.ndarray) -> np.ndarray:
        """Average ranks of r over the candidates in `both`."""
        return self._cached("rr", both, lambda: m.ranks_of_codes(self.r_code[both], self.r_values.size))


MEANS = ("tau_a", "tau_b", "somers_d", "top1", "top1_expected", "top1_uniform")


def _sum(values: np.ndarray) -> tuple[float, int]:
    """The sum and count of the non-NaN values (a mean taken later, possibly over several blocks). Without
    a NaN (a NaN sum has one), the array itself is summed: the same numbers, in the same order."""
    total = float(np.ascontiguousarray(values).sum()) if values.size else 0.0
    if not np.isnan(total):
        return total, int(values.size)
    values = values[~np.isnan(values)]
    return float(values.sum()) if values.size else 0.0, int(values.size)


def joint_counts(s_code: np.ndarray, s_values: np.ndarray, r_code: np.ndarray, r_values: np.ndarray):
    """How many elements hold each (s, r) pair of values, given both as level codes: the sorted
    (s value, r value, count) triples of the pairs that occur (all Spearman needs)."""
    n_r = r_values.size
    key = s_code.astype(np.int64) * n_r + r_code
    if s_values.size * n_r <= JOINT_BINCOUNT:
        counts = np.bincount(key, minlength=s_values.size * n_r)
        key = np.flatnonzero(counts)
        counts = counts[key]
    else:
        key, counts = np.unique(key, return_counts=True)
    return s_values[key // n_r], r_values[key % n_r], counts


JOINT_BINCOUNT = 1 << 20  # up to this many (s, r) level pairs, the joint table is counted densely


def cell_parts(view: PoolView, s: np.ndarray) -> dict:
    """One cell's partial results over the candidates of `view` (one block of whole prompts, or
    the whole pool): counts, value tallies and per-prompt sums that add up across blocks
    (finish_cell turns them into the cell's row)."""
    valid = ~np.isnan(s)
    all_valid = bool(valid.all())
    sv = s if all_valid else s[valid]
    parts = {"n_candidates": int(sv.size)}
    if sv.size == 0:
        return parts
    pv = view.prompt if all_valid else view.prompt[valid]
    parts["n_prompts"] = view.n_prompts if all_valid else int(np.count_nonzero(pv[1:] != pv[:-1]) + 1)
    values, counts = m.levels(sv)
    parts["levels"] = (values, counts)
    code = m.level_codes(s, values)  # order and ties of s as small integers (NaN: masked below)
    both = view.has_r if all_valid else valid & view.has_r
    every_scored_has_r = bool(both.all()) if all_valid else np.array_equal(both, valid)
    if not every_scored_has_r:  # otherwise the ranked groups below are the same groups
        tied = view.top_tied(valid, code)
        if tied[1]:
            parts["top_tied"] = tied
    if both.any():
        every = all_valid and every_scored_has_r        # every candidate: no copy of the codes
        parts["joint"] = (joint_counts(code, values, view.r_code, view.r_values) if every else
                          joint_counts(code[both], values, view.r_code[both], view.r_values))
        ranked = view.ranked_stats(both, code)
        if ranked is not None:
            n_ranked, st = ranked
            tau_a, tau_b, somers = m.kendall_variants(st["n0"], st["cd"], st["n1"], st["n2"])
            if every_scored_has_r:
                parts["top_tied"] = _sum(st["top_tied"])
            parts.update(tau_a=_sum(tau_a), tau_b=_sum(tau_b), somers_d=_sum(somers), top1=_sum(st["top1"]),
                         top1_expected=_sum(st["top1_expected"]), top1_uniform=_sum(st["top1_uniform"]),
                         n_ranked_prompts=n_ranked)
    return parts


def spearman_from_joint(s: np.ndarray, r: np.ndarray, n: np.ndarray) -> float:
    """Spearman's rho (average ranks) of the elements tallied as n[i] elements holding (s[i], r[i]):
    m.rank_correlation's sums, taken level by level on both sides. NaN when either side is
    constant or there are fewer than 2 elements."""
    s_values, s_code = np.unique(s, return_inverse=True)
    r_values, r_code = np.unique(r, return_inverse=True)
    total = int(n.sum())
    if total < 2:
        return float("nan")
    c_s = np.bincount(s_code, weights=n, minlength=s_values.size)
    c_r = np.bincount(r_code, weights=n, minlength=r_values.size)
    x = np.cumsum(c_s) - c_s + (c_s + 1) / 2.0 - (total + 1) / 2.0   # centred level ranks of s
    y = np.cumsum(c_r) - c_r + (c_r + 1) / 2.0 - (total + 1) / 2.0   # and of r
    sxy = float(np.dot(x, np.bincount(s_code, weights=n * y[r_code], minlength=s_values.size)))
    sxx, syy = float(np.dot(x * x, c_s)), float(np.dot(y * y, c_r))
    if sxx <= 0 or syy <= 0:
        return float("nan")
    return sxy / np.sqrt(sxx * syy)


def finish_cell(blocks: list[dict]) -> dict:
    """A cell's row from its parts over the blocks (cell_parts); a block without a scored
    candidate adds nothing."""
    blocks = [b for b in blocks if b["n_candidates"]]
    row = {"n_candidates": 0}
    if not blocks:
        return row
    row["n_candidates"] = sum(b["n_candidates"] for b in blocks)
    row["n_prompts"] = sum(b["n_prompts"] for b in blocks)
    _, counts = merged_levels([b["levels"] for b in blocks])
    p = counts / counts.sum()
    row.update(distinct=int(counts.size), tie_prob=float(np.sum(p ** 2)),
               d1=m.renyi_levels(p, 1), d2=1.0 / float(np.sum(p ** 2)))
    for name in ("top_tied",) + MEANS:
        seen = [b[name] for b in blocks if name in b]
        if seen:
            total, count = sum(t for t, _ in seen), sum(c for _, c in seen)
            row[name] = total / count if count else float("nan")
            if name == "top_tied":
                row["n_top_prompts"] = int(count)   # the prompts top_tied is a share of
    joint = [b["joint"] for b in blocks if "joint" in b]
    if joint:
        row["spearman"] = spearman_from_joint(*(np.concatenate(part) for part in zip(*joint)))
    if any("n_ranked_prompts" in b for b in blocks):
        row["n_ranked_prompts"] = sum(b.get("n_ranked_prompts", 0) for b in blocks)
    return row


CELL_SCHEMA = {"n_candidates": pl.Int64, "n_prompts": pl.Int64, "distinct": pl.Int64,
               "tie_prob": pl.Float64, "d1": pl.Float64, "d2": pl.Float64, "top_tied": pl.Float64,
               "spearman": pl.Float64, "tau_a": pl.Float64, "tau_b": pl.Float64,
               "somers_d": pl.Float64, "top1": pl.Float64, "top1_expected": pl.Float64,
               "top1_uniform": pl.Float64, "n_ranked_prompts": pl.Int64, "n_top_prompts": pl.Int64}


def cells_frame(cells: pl.DataFrame, rows: list[dict]) -> pl.DataFrame:
    """The audit's table: the cells (cell_calls.sql rows, with mult5_share) beside their rows."""
    extra = pl.DataFrame(rows, schema=CELL_SCHEMA)
    defaults = {"n_candidates": 0, "n_prompts": 0, "distinct": 0, "n_ranked_prompts": 0, "n_top_prompts": 0}
    cells = cells if "aggregate" in cells.columns else cells.with_columns(pl.lit("single").alias("aggregate"))
    out = pl.concat([cells, extra], how="horizontal").with_columns(
        (pl.col("n_parsed") / pl.col("n_verdicts")).alias("parse_rate"),
        pl.col("nominal_levels").cast(pl.Int64),
        *[pl.col(c).fill_null(v) for c, v in defaults.items()])
    return out.select(CELL_COLUMNS).with_columns(pl.selectors.float().fill_nan(None))


def compute_cells(sc: Scores, seed: int = 0) -> pl.DataFrame:
    """The audit's table from a whole pool's Scores held in memory (one block: the in-memory engine)."""
    view = PoolView(sc, seed)
    return cells_frame(sc.cells, [finish_cell([cell_parts(view, view.scores(sc.S[c]))])
                                  for c in range(sc.S.shape[0])])


def audit_cells(db: str | os.PathLike | None, pool: str, seed: int = 0,
                block: int = BLOCK_CANDIDATES) -> pl.DataFrame:
    """One row per (judge, format, decoding, score, aggregate) cell of the pool, in that order.

    decoding: 'greedy' (the paper's protocol) or 'constrained' (to the format's labels); the same
    judge and format under both are two cells. score: 'label' (the parsed verdicts' values) or
    'expected' (the probability-weighted value over the format's labels, for pointwise calls that
    carry a label distribution; n_verdicts then counts the calls, parse_rate those with one).
    aggregate: 'single' (sample 0 of each call; every cell has it, and its n_verdicts and
    parse_rate count sample-0 calls) or, for a cell with repeated calls, also 'mean' (each call
    scored by the mean of its parsed samples' normalised scores; n_verdicts counts every sample).

    Columns: judge, format, decoding, score, aggregate, kind, n_verdicts, n_candidates, n_prompts, parse_rate,
    nominal_levels, distinct, tie_prob, d1, d2, mult5_share (0-100 scales only), top_tied, spearman,
    tau_a, tau_b, somers_d, top1 (seeded tie-break), top1_expected, top1_uniform, n_ranked_prompts
    (prompts with >= 2 candidates having both a score and a reference), n_top_prompts (the prompts
    with >= 2 scored candidates, top_tied's denominator). Undefined values are null.

    The pool is read `block` candidates at a time (whole prompts; _scores.read_blocks), so memory
    follows the block, not the pool; a pool of one block gets compute_cells' numbers bit for bit.
    """
    with reading(db) as read:
        pid = read.pool_id(pool)
        cells = read_cells(read, pid, repeats=True)
        parts: list[list[dict]] = [[] for _ in range(cells.height)]
        mult5 = [(0, 0) if scale else None for scale in cells["scale_0_100"]]
        with contextlib.closing(read_blocks(read, pid, cells, block)) as blocks:  # on an error, the read
            for sc, cand_idx, block_mult5 in blocks:                             # under way ends first
                view = PoolView(sc, seed, tiebreak_keys(cand_idx, seed))
                for c in range(cells.height):
                    parts[c].append(cell_parts(view, view.scores(sc.S[c])))
                mult5 = [None if t is None else (t[0] + u[0], t[1] + u[1]) for t, u in zip(mult5, block_mult5)]
        found = juries_of(read, pid)
    cells = cells.with_columns(pl.Series("mult5_share", mult5_shares(mult5), dtype=pl.Float64)).drop("scale_0_100")
    return mark_juries(cells_frame(cells, [finish_cell(p) for p in parts]), found)  # a jury's cells: aggregate "jury"
