"""The units' kinds for the rankings' bootstrap (audit._rank.fit_cell): units (prompts) whose games are
equal, found exactly, so that resampling the prompts is drawing how many of each kind
(docs/metrics.md#rankings-bradley-terry)."""

from __future__ import annotations

import numpy as np
import polars as pl
from scipy.sparse import csr_matrix


def unit_kinds(per_unit: csr_matrix, weight: np.ndarray) -> tuple[csr_matrix, np.ndarray]:
    """The distinct rows of `per_unit` (the units' kinds: units whose rows are equal), in the order of
    each kind's first unit, and how many units each stands for (the sum of `weight` over its units).
    Exact: rows are compared entry by entry (a row's stored columns and values, zeros dropped)."""
    rows = csr_matrix(per_unit, copy=True)
    rows.sum_duplicates()
    rows.eliminate_zeros()
    rows.sort_indices()
    n_units = rows.shape[0]
    nnz = np.diff(rows.indptr)
    width = int(nnz.max()) if n_units and rows.nnz else 0
    at = np.repeat(np.arange(n_units), nnz)
    pos = np.arange(rows.nnz) - np.repeat(rows.indptr[:-1], nnz)
    key = np.full((n_units, 2 * width), -1.0)          # columns then values; -1 pads (no column is -1)
    key[at, pos] = rows.indices
    key[at, width + pos] = rows.data
    # grouped by a 64-bit mix of each row's bits (a sort of n integers, not of n rows), then checked
    # entry by entry against its group's first row; rows compared whole only if two ever collide
    bits = key.view(np.uint64) + np.arange(1, 2 * width + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    bits = (bits ^ (bits >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)      # splitmix64's finaliser
    bits = (bits ^ (bits >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    digest = (bits ^ (bits >> np.uint64(31))).sum(axis=1, dtype=np.uint64)
    _, first, inverse = np.unique(digest, return_index=True, return_inverse=True)
    if not (key == key[first[inverse]]).all():
        _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(first)                          # the kinds by their first unit
    number = np.empty(order.size, np.int64)
    number[order] = np.arange(order.size)
    counts = np.bincount(number[np.ravel(inverse)], np.asarray(weight, float), order.size)
    return rows[first[order]], counts


PACKED_COLUMNS = 8      # the most float64 columns a prompt's vector is packed into (memory: prompts x columns)
PACKED_TABLE = 1 << 22  # the most (slot A, slot B, credit) entries of packed_kinds' table of digits


def prompt_kinds(unit: np.ndarray, a: np.ndarray, b: np.ndarray, credit: np.ndarray) -> dict:
    """The prompts' kinds of one (cell, order) from its calls (audit._rank_cells): per call its prompt
    (`unit`: the prompt's place in prompt_id order), the systems in slots A and B (integer codes) and
    A's credit in halves (2 a win, 1 a tie, 0 a loss). A prompt's vector is, per pair of systems it
    met (lo <= hi), lo's summed credit and its number of calls; prompts with equal vectors are one kind,
    the kinds numbered in the order of their first prompt (with every prompt a kind of its own, the
    kinds are the prompts in prompt_id order). Exact: the vectors are compared whole, never by a
    digest alone.

    Found by packing each prompt's vector into a few integers (packed_kinds) where it fits, else by
    sorting the calls by prompt and pair (sorted_kinds); tests/audit/test_rank_kinds.py holds them
    equal. Returns per (kind, pair) row, sorted by kind and pair: `kind`, `lo`, `hi`, `credit` (lo's
    summed share, a multiple of one half) and `n` (calls); and per kind `prompts`, how many it stands for."""
    unit, a, b, credit = (np.asarray(x, np.int64) for x in (unit, a, b, credit))
    if unit.size == 0:
        empty = np.zeros(0, np.int64)
        return {"kind": empty, "lo": empty, "hi": empty, "credit": np.zeros(0), "n": empty, "prompts": empty}
    n_sys = int(max(a.max(), b.max())) + 1
    found = packed_kinds(unit, a * n_sys + b, credit, n_sys) if 3 * n_sys * n_sys <= PACKED_TABLE else None
    if found is None:
        pair, lo_credit, n_pairs, _ = _by_pair(a, b, credit, n_sys, int(unit.max()) + 1)
        found = sorted_kinds(unit, pair, lo_credit, n_pairs)
    first, prompts = found
    # each kind's rows are those of its first prompt: its calls summed per pair (its places increase with
    # the kind's number, so sorting by prompt sorts by kind)
    chosen = np.zeros(int(unit.max()) + 1, bool)
    chosen[first] = True
    pick = chosen[unit]
    pair, lo_credit, n_pairs, pairs = _by_pair(a[pick], b[pick], credit[pick], n_sys, chosen.size)
    entry_unit, entry_pair, summed, calls = _entries(unit[pick], pair, lo_credit, n_pairs)
    kind_of = np.zeros(chosen.size, np.int64)
    kind_of[first] = np.arange(first.size)
    if pairs is not None:
        entry_pair = pairs[entry_pair]
    return {"kind": kind_of[entry_unit], "lo": entry_pair // n_sys, "hi": entry_pair % n_sys,
            "credit": summed / 2.0, "n": calls, "prompts": prompts}


def _by_pair(a, b, credit, n_sys: int, n_units: int):
    """The calls (slots a, b; A's credit) as (pair, lo's credit, how many pair numbers, the pairs or
    None): a pair is lo * n_sys + hi, or where that keyed with one of n_units prompts would pass 2^62,
    its number among the pairs met (`pairs`, in (lo, hi) order)."""
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    pair, pairs = lo * n_sys + hi, None
    if n_sys * n_sys >= 2 ** 62 // n_units:                  # too many systems to key (prompt, pair) on codes
        pairs, pair = np.unique(pair, return_inverse=True)
        pair = np.ravel(pair)
    n_pairs = n_sys * n_sys if pairs is None else pairs.size
    return pair, np.where(a <= b, credit, 2 - credit), n_pairs, pairs


def _entries(unit: np.ndarray, pair: np.ndarray, credit: np.ndarray, n_pairs: int):
    """The calls summed per (prompt, pair), sorted by prompt, then pair: each entry's prompt, pair,
    summed credit and number of calls."""
    shift = max(n_pairs - 1, 1).bit_length()
    key = (unit << shift) | pair
    order = np.argsort(key, kind="stable")     # calls come in runs of a prompt: a stable sort follows them
    key = key[order]
    start = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    summed = np.add.reduceat(credit[order], start)
    key = key[start]
    return key >> shift, key & ((1 << shift) - 1), summed, np.diff(np.r_[start, order.size])


def _numbered(first: np.ndarray, group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Groups given by their first member (`first`, members in prompt order) and each member's group
    -> the groups in the order of their first member: (its first member, how many members)."""
    order = np.argsort(first)
    number = np.empty(order.size, np.int64)
    number[order] = np.arange(order.size)
    return first[order], np.bincount(number[np.ravel(group)], minlength=order.size)


def packed_kinds(unit: np.ndarray, ab: np.ndarray, credit: np.ndarray, n_sys: int,
                 max_columns: int = PACKED_COLUMNS) -> tuple[np.ndarray, np.ndarray] | None:
    """The kinds (each kind's first prompt, in that order, and its number of prompts) with each
    prompt's vector packed into integers, summed over its calls in any order (one bincount, no sort).
    `ab`: each call's slots as a * n_sys + b. A pair's entry is one digit n + (m + 1) c in base
    (m + 1)(2m + 1), where n <= m calls (m: the most calls of one prompt) and c <= 2n lo's credit in
    halves, so no digit carries into the next; as many pairs per float64 column as keep it below 2^53
    (every partial sum an exact integer). A call's digit is looked up by (ab, A's credit) in a table.
    The prompts grouped by their columns in polars (hashed, exact; groups in the order of their first
    prompt). None where that takes more than `max_columns` columns."""
    slot_a, slot_b = np.divmod(np.arange(n_sys * n_sys), n_sys)
    pair_of = np.minimum(slot_a, slot_b) * n_sys + np.maximum(slot_a, slot_b)
    met = np.unique(pair_of[np.bincount(ab, minlength=n_sys * n_sys) > 0])    # in (lo, hi) order
    per_prompt = np.bincount(unit)
    m = int(per_prompt.max())
    base = (m + 1) * (2 * m + 1)
    per_column = 0
    while base ** (per_column + 1) <= 2 ** 53:
        per_column += 1
    n_col = -(-met.size // per_column) if per_column else max_columns + 1
    if n_col > max_columns:
        return None
    index = np.zeros(n_sys * n_sys, np.int64)                      # per pair its number among those met
    index[met] = np.arange(met.size)
    e = index[pair_of]                                              # per (a, b): its pair's number
    radix = np.array([base ** (k % per_column) for k in range(met.size)], np.float64)[e]   # exact: < 2^53
    digit = np.stack([(1 + (m + 1) * np.where(slot_a <= slot_b, c, 2 - c)) * radix for c in range(3)], axis=1)
    by_call = digit.ravel()[ab * 3 + credit]
    bins = unit if n_col == 1 else unit * n_col + (e // per_column)[ab]
    present = np.flatnonzero(per_prompt)                            # the prompts with calls, in order
    packed = np.bincount(bins, by_call, per_prompt.size * n_col).reshape(-1, n_col)[present].astype(np.int64)
    columns = [f"c{k}" for k in range(n_col)]
    kinds = pl.DataFrame(packed, schema=columns).with_row_index("first") \
        .group_by(columns, maintain_order=True).agg(pl.col("first").first(), pl.len())
    return present[kinds["first"].to_numpy()], kinds["len"].to_numpy().astype(np.int64)


def sorted_kinds(unit: np.ndarray, pair: np.ndarray, credit: np.ndarray, n_pairs: int
                 ) -> tuple[np.ndarray, np.ndarray]:
    """packed_kinds' answer for any number of pairs: the calls summed per (prompt, pair) in sorted
    order, each entry one integer (pair, calls, credit), each prompt's entries a segment grouped
    with the equal ones (equal_segments)."""
    entry_unit, entry_pair, summed, calls = _entries(unit, pair, credit, n_pairs)
    seg = np.flatnonzero(np.r_[True, entry_unit[1:] != entry_unit[:-1]])    # each prompt's entries
    width = np.diff(np.r_[seg, entry_unit.size])
    top = int(calls.max()) + 1                 # credit <= 2 x calls < 2 x top: one integer per entry
    if n_pairs * top * 2 * top < 2 ** 63:
        token = (entry_pair * top + calls) * (2 * top) + summed
    else:
        _, token = np.unique(np.stack([entry_pair, calls, summed], axis=1), axis=0, return_inverse=True)
    first, group = equal_segments(np.ravel(token), seg, width)
    first, prompts = _numbered(first, group)
    return entry_unit[seg[first]], prompts


def _digests(token: np.ndarray, seg: np.ndarray, width: np.ndarray) -> np.ndarray:
    """A 64-bit digest of each segment's tokens (distinct within a segment, which they are: one per
    pair): splitmix64's finaliser of each, summed."""
    bits = token.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    bits = (bits ^ (bits >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    bits = (bits ^ (bits >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return np.add.reduceat(bits ^ (bits >> np.uint64(31)), seg)


def equal_segments(token: np.ndarray, seg: np.ndarray, width: np.ndarray, digests=_digests
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Segments of `token` (segment k: token[seg[k]:seg[k] + width[k]], width >= 1) grouped by equal
    contents: (per group its first segment, per segment its group), the groups in no set order.
    Grouped by a digest of each segment (a sort of one integer per segment), then checked token by
    token against its group's first segment; grouped on the padded segments whole only if two
    different segments ever share a digest."""
    _, first, group = np.unique(digests(token, seg, width), return_index=True, return_inverse=True)
    group = np.ravel(group)
    rep = first[group]
    same = width[rep] == width
    if same.all():
        at = np.repeat(seg[rep] - seg, width) + np.arange(token.size)      # the same place in the first
        same = token[at] == token
    if not same.all():
        padded = np.full((seg.size, int(width.max()) + 1), -1, np.int64)   # the width, then the tokens
        padded[:, 0] = width
        padded[np.repeat(np.arange(seg.size), width), np.arange(token.size) - np.repeat(seg, width) + 1] = token
        _, first, group = np.unique(padded, axis=0, return_index=True, return_inverse=True)
        group = np.ravel(group)
    return first, group
