"""The units' kinds for the rankings' bootstrap (audit._rank.fit_cell): units (prompts) whose games are
equal, found exactly, so that resampling the prompts is drawing how many of each kind
(docs/metrics.md#rankings-bradley-terry)."""

from __future__ import annotations

import numpy as np
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
