"""The style fit's calls grouped in numpy (audit._style_cells.candidate_kinds, style_groups, _metrics.distinct_counts)
against polars' group_by on the calls one by one with their candidates' systems and style counts: the
same groups and counts, whichever way the key is counted (np.bincount on a small range, a sort on a
large one, the rows themselves beyond 63 bits) and whether the five numbers of a kind pack into one
integer or not; calls between one system's candidates and candidates without style counts left out."""

import numpy as np
import polars as pl
import pytest

from audit._style import COUNTS
from audit._metrics import distinct_counts
from audit._style_cells import candidate_kinds, style_groups


def _reference(key, a_idx, b_idx, code, counts: pl.DataFrame) -> pl.DataFrame:
    calls = pl.DataFrame({"key": key, "a_idx": a_idx, "b_idx": b_idx})
    for side in ("a", "b"):
        styled = counts.with_columns(pl.Series("code", code[counts["cand_idx"].to_numpy()])) \
            .rename({"cand_idx": f"{side}_idx", "code": f"{side}_code", **{c: f"{side}_{c}" for c in COUNTS}})
        calls = calls.join(styled, on=f"{side}_idx", how="inner")
    cols = ["key", "a_code", *[f"a_{c}" for c in COUNTS], "b_code", *[f"b_{c}" for c in COUNTS]]
    return calls.filter(pl.col("a_code") != pl.col("b_code")).group_by(cols).len("n") \
        .select(*cols, pl.col("n").cast(pl.Int64)).sort(cols)


def _frame(groups: dict) -> pl.DataFrame:
    cols = {"key": groups["key"], "a_code": groups["a_code"],
            **{f"a_{c}": groups["a"][:, i] for i, c in enumerate(COUNTS)}, "b_code": groups["b_code"],
            **{f"b_{c}": groups["b"][:, i] for i, c in enumerate(COUNTS)}, "n": groups["n"]}
    return pl.DataFrame({k: np.asarray(v, np.int64) for k, v in cols.items()}).sort(list(cols)[:-1])


@pytest.mark.parametrize("seed, styles, big", [(0, 3, False), (1, 400, False), (2, 3, True)])
def test_the_groups_equal_a_group_by_of_the_calls(seed, styles, big):
    # 300 candidates of 5 systems, styles drawn from `styles` values (3: many calls alike; 400: nearly
    # every candidate its own kind, so the key's range is large and sorted); big: a length near 2^40, so
    # the five numbers do not pack into 63 bits; 20 candidates without style counts
    rng = np.random.default_rng(seed)
    n_cand = 300
    code = rng.integers(0, 5, n_cand)
    has = np.sort(rng.choice(n_cand, n_cand - 20, replace=False))
    counts = pl.DataFrame({"cand_idx": has, **{c: rng.integers(0, styles, has.size) for c in COUNTS}})
    if big:
        counts = counts.with_columns(pl.col("chars") + (1 << 40))
    counts = counts.with_columns(pl.col(c).cast(pl.Int64 if big else pl.Int32) for c in COUNTS)
    n_calls = 5000
    key = rng.integers(0, 12, n_calls)
    a_idx, b_idx = rng.integers(0, n_cand, n_calls).astype(np.int32), rng.integers(0, n_cand, n_calls).astype(np.int32)
    kind, table = candidate_kinds(np.arange(n_cand), code, counts, n_cand)
    got = _frame(style_groups(key, a_idx, b_idx, kind, table))
    want = _reference(key, a_idx, b_idx, code, counts)
    assert got.height > 10 and got.equals(want)


def test_counted_the_three_ways():
    # the same distinct rows and counts by bincount (range 4 x 5 x 6), by a sort (a range of 2^40) and
    # by the rows themselves (a range beyond 2^63)
    rng = np.random.default_rng(3)
    cols = [rng.integers(0, 4, 1000), rng.integers(0, 5, 1000), rng.integers(0, 6, 1000)]
    rows, n = np.unique(np.column_stack(cols), axis=0, return_counts=True)
    for sizes in ([4, 5, 6], [4, 5, 1 << 38], [4, 1 << 31, 1 << 33]):
        *got, got_n = distinct_counts(cols, sizes)
        assert np.array_equal(np.column_stack(got), rows) and np.array_equal(got_n, n)
