"""The audit's cells computed faster (audit/_metrics.py PromptMatrix, levels, level_codes; audit/_cells.py
PoolView, cell_parts, _sum; audit/_scores.py normalised_scores) give the numbers of the implementation they
replaced, kept here verbatim as the reference (`_old_*`), bit for bit: on pools full of ties (scores and
references on a few levels, tie-break keys on a few values), unparsed calls (NaN), missing references,
0-100 scales, prompts of 1 to 64 candidates, tournaments with self-matches and repeated samples, each pool
cut into blocks of several sizes."""

from __future__ import annotations

import numpy as np
import pytest

from audit import _metrics as m
from audit._cells import PoolView, _sum, cell_parts, dense_groups, joint_counts
from audit._scores import ROUND, Scores, listing_order, normalised_scores, tiebreak_keys


# --- the reference: the implementation before (commit e4fdfb9), verbatim but for names -------------------

def _old_judge_top_is_reference_top(jt, K, rt):
    best = np.where(jt[0], K[0], -1.0)
    top1 = rt[0].copy()
    for i in range(1, jt.shape[0]):
        better = jt[i] & (K[i] > best)
        best = np.where(better, K[i], best)
        top1 = np.where(better, rt[i], top1)
    return top1


class _OldPromptMatrix:
    def __init__(self, group, r, key):
        self.n_groups = int(group[-1]) + 1 if group.size else 0
        starts = m.group_starts(group)
        sizes = np.diff(np.append(starts, group.size))
        self.buckets = []
        for k in np.unique(sizes):
            gids = np.flatnonzero(sizes == k)
            idx = starts[gids][None, :] + np.arange(k)[:, None]
            R = r[idx]
            self.buckets.append({"gids": gids, "k": int(k), "idx": idx, "K": key[idx], "R": R,
                                 "dr": [np.sign(R[i] - R[i + 1:]) for i in range(k - 1)]})

    def compute(self, s, present):
        out = {name: np.zeros(self.n_groups) for name in
               ("n", "n0", "cd", "n1", "n2", "top1", "top1_expected", "top1_uniform", "top_tied")}
        for b in self.buckets:
            self._bucket(b, s, present, out)
        kept = out["n"] >= 2
        n_kept = int(np.count_nonzero(kept))
        if n_kept == self.n_groups:
            return n_kept, out
        return n_kept, {name: v[kept] for name, v in out.items()}

    def top_tied(self, s, present):
        tied = groups = 0
        for b in self.buckets:
            S, P = s[b["idx"]], present[b["idx"]]
            n = P.sum(axis=0)
            n_jt = (P & (S == np.where(P, S, m._lowest(S.dtype)).max(axis=0))).sum(axis=0)
            tied += int(np.count_nonzero((n >= 2) & (n_jt >= 2)))
            groups += int(np.count_nonzero(n >= 2))
        return tied, groups

    @staticmethod
    def _bucket(b, s, present, out):
        gids, k, n_g = b["gids"], b["k"], len(b["gids"])
        S, P, R = s[b["idx"]], present[b["idx"]], b["R"]
        n = P.sum(axis=0)
        cd, n1, n2 = np.zeros(n_g), np.zeros(n_g), np.zeros(n_g)
        for i in range(k - 1):
            both = P[i] & P[i + 1:]
            ds = np.sign(S[i] - S[i + 1:])
            cd += np.where(both, ds * b["dr"][i], 0).sum(axis=0)
            n1 += (both & (ds == 0)).sum(axis=0)
            n2 += (both & (b["dr"][i] == 0)).sum(axis=0)
        jt = P & (S == np.where(P, S, m._lowest(S.dtype)).max(axis=0))
        rt = P & (R == np.where(P, R, m._lowest(R.dtype)).max(axis=0))
        K, n_jt, n_rt = b["K"], jt.sum(axis=0), rt.sum(axis=0)
        top1 = _old_judge_top_is_reference_top(jt, K, rt)
        with np.errstate(divide="ignore", invalid="ignore"):
            values = {"n": n.astype(float), "n0": n * (n - 1) / 2.0, "cd": cd, "n1": n1, "n2": n2,
                      "top1": top1.astype(float), "top1_expected": (jt & rt).sum(axis=0) / n_jt,
                      "top1_uniform": n_rt / n, "top_tied": (n_jt >= 2).astype(float)}
        for name, v in values.items():
            out[name][gids] = v


def _old_levels(x):
    if x.size > 512:
        probe = np.unique(x[:512])
        if probe.size <= 16:
            counts = np.array([np.count_nonzero(x == v) for v in probe], dtype=np.int64)
            if int(counts.sum()) == x.size:
                return probe, counts
    xs = np.sort(x)
    if xs.size == 0:
        return xs, np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.concatenate(([True], xs[1:] != xs[:-1])))
    return xs[starts], np.diff(np.append(starts, xs.size))


def _old_level_codes(x, values):
    n_levels = values.size
    dtype = np.int8 if n_levels <= 127 else np.int16 if n_levels <= 32767 else np.int32
    if n_levels <= 48:
        codes = np.zeros(x.size, dtype=dtype)
        for v in values[1:]:
            np.add(codes, x >= v, out=codes, casting="unsafe")
        return codes
    return np.searchsorted(values, x).astype(dtype, copy=False)


def _old_normalised_scores(pairing, lo, hi, a, b, swapped, value, n, weight=None):
    if pairing == "tournament":
        match = a != b
        if not match.all():
            a, b, value = a[match], b[match], value[match]
            weight = None if weight is None else weight[match]
        sig = 1.0 / (1.0 + np.exp(-value))
        w = np.ones(a.size) if weight is None else weight
        count = np.bincount(a, weights=w, minlength=n) + np.bincount(b, weights=w, minlength=n)
        total = np.bincount(a, weights=w * sig, minlength=n) + np.bincount(b, weights=w * (1.0 - sig), minlength=n)
    else:
        keep = ~swapped if pairing == "anchored" else slice(None)
        idx, val = a[keep], (value[keep] - lo) / (hi - lo)
        if weight is not None:
            w = weight[keep]
            count, total = np.bincount(idx, weights=w, minlength=n), np.bincount(idx, weights=w * val, minlength=n)
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.round(total / count, ROUND)
        count = np.bincount(idx, minlength=n)
        if count.max(initial=0) <= 1:
            out = np.full(n, np.nan)
            out[idx] = np.round(val, ROUND)
            return out
        total = np.bincount(idx, weights=val, minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.round(total / count, ROUND)


def _old_sum(values):
    values = values[~np.isnan(values)]
    return float(values.sum()) if values.size else 0.0, int(values.size)


class _OldView(PoolView):
    """PoolView as it was: its prompts through dense_groups, references through the old levels and codes,
    the old PromptMatrix."""

    def __init__(self, sc, seed, key=None):
        super().__init__(sc, seed, key)
        _, gid = dense_groups(self.prompt, 1)
        assert np.array_equal(gid, self.gid) and gid.dtype == self.gid.dtype
        assert np.array_equal(m.group_starts(gid), self.starts) and self.n_prompts == (int(gid[-1]) + 1 if gid.size else 0)
        r = sc.reference[sc.order]
        self.r_values, _ = _old_levels(r[self.has_r])
        self.r_code = _old_level_codes(r, self.r_values)

    def matrix(self):
        if self._matrix is False:
            sizes = np.diff(np.append(self.starts, self.gid.size))
            self._matrix = (_OldPromptMatrix(self.gid, self.r_code, self.key)
                            if not sizes.size or sizes.max() <= m.SMALL_GROUP else None)
        return self._matrix


def _old_cell_parts(view, s):
    valid = ~np.isnan(s)
    all_valid = bool(valid.all())
    sv = s if all_valid else s[valid]
    parts = {"n_candidates": int(sv.size)}
    if sv.size == 0:
        return parts
    pv = view.prompt if all_valid else view.prompt[valid]
    parts["n_prompts"] = view.n_prompts if all_valid else int(np.count_nonzero(pv[1:] != pv[:-1]) + 1)
    values, counts = _old_levels(sv)
    parts["levels"] = (values, counts)
    code = _old_level_codes(s, values)
    both = view.has_r if all_valid else valid & view.has_r
    every_scored_has_r = bool(both.all()) if all_valid else np.array_equal(both, valid)
    if not every_scored_has_r:
        tied = view.top_tied(valid, code)
        if tied[1]:
            parts["top_tied"] = tied
    if both.any():
        parts["joint"] = joint_counts(code[both], values, view.r_code[both], view.r_values)
        ranked = view.ranked_stats(both, code)
        if ranked is not None:
            n_ranked, st = ranked
            tau_a, tau_b, somers = m.kendall_variants(st["n0"], st["cd"], st["n1"], st["n2"])
            if every_scored_has_r:
                parts["top_tied"] = _old_sum(st["top_tied"])
            parts.update(tau_a=_old_sum(tau_a), tau_b=_old_sum(tau_b), somers_d=_old_sum(somers),
                         top1=_old_sum(st["top1"]), top1_expected=_old_sum(st["top1_expected"]),
                         top1_uniform=_old_sum(st["top1_uniform"]), n_ranked_prompts=n_ranked)
    return parts


# --- the comparisons ----------------------------------------------------------------------------------

def _same(got, want):
    """Equal bit for bit (NaN where NaN), arrays or nested tuples and dicts of them."""
    if isinstance(want, dict):
        assert got.keys() == want.keys()
        for name in want:
            _same(got[name], want[name])
    elif isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
    else:
        assert type(got) is type(want)
        g, w = np.atleast_1d(np.asarray(got)), np.atleast_1d(np.asarray(want))
        assert g.shape == w.shape and g.dtype == w.dtype, (g.dtype, w.dtype)
        if g.dtype.kind == "f":               # the same bits where not NaN (0.0 and -0.0 differ)
            assert np.array_equal(np.isnan(g), np.isnan(w))
            g, w = g[~np.isnan(g)].view(np.uint64), w[~np.isnan(w)].view(np.uint64)
        assert np.array_equal(g, w)


def _groups(rng, n_prompts, sizes):
    size = rng.choice(sizes, n_prompts)
    return np.repeat(np.arange(n_prompts), size)


SIZES = [(1, 2, 3, 4, 5, 8), (4,), (2, 3, 64, 17), (1,)]


@pytest.mark.parametrize("seed", range(8))
def test_the_matrix_is_the_old_matrix(seed):
    rng = np.random.default_rng(seed)
    group = _groups(rng, 300, SIZES[seed % len(SIZES)])
    n = group.size
    r = rng.integers(0, 4, n).astype(np.int8)                              # references on 4 levels
    key = rng.integers(0, 3, n) / 2.0 if seed % 2 else rng.random(n)      # keys tied within prompts, or not
    new, old = m.PromptMatrix(group, r, key), _OldPromptMatrix(group, r, key)
    for share in (1.0, 0.9, 0.5, 0.0):
        present = rng.random(n) < share
        for s in (rng.integers(0, 3, n).astype(np.int8),                  # 3 levels: ties everywhere
                  rng.integers(0, 300, n).astype(np.int16),               # codes past int8
                  np.round(rng.integers(0, 7, n) / 6, ROUND)):            # values (coded by compute)
            got, want = new.compute(s, present), old.compute(s, present)
            assert got[0] == want[0]
            _same(got[1], want[1])
            assert new.top_tied(s, present) == old.top_tied(s, present)


def test_the_matrix_of_float_references_with_nan_where_absent():
    rng = np.random.default_rng(5)
    group = _groups(rng, 200, (1, 2, 3, 6))
    n = group.size
    r = rng.integers(0, 3, n).astype(float)
    r[rng.random(n) < 0.2] = np.nan                  # missing references: never present
    key = rng.random(n)
    present = ~np.isnan(r) & (rng.random(n) < 0.9)
    s = rng.integers(0, 4, n).astype(np.int8)
    got, want = m.PromptMatrix(group, r, key).compute(s, present), _OldPromptMatrix(group, r, key).compute(s, present)
    assert got[0] == want[0]
    _same(got[1], want[1])


def test_an_empty_matrix():
    group = np.zeros(0, np.int64)
    got = m.PromptMatrix(group, np.zeros(0), np.zeros(0)).compute(np.zeros(0, np.int8), np.zeros(0, bool))
    want = _OldPromptMatrix(group, np.zeros(0), np.zeros(0)).compute(np.zeros(0, np.int8), np.zeros(0, bool))
    assert got[0] == want[0] == 0
    _same(got[1], want[1])


@pytest.mark.parametrize("n_levels", [1, 2, 5, 16, 17, 25, 48, 49, 64, 65, 101, 127, 128, 300])
def test_levels_and_codes_are_the_old_ones(n_levels):
    rng = np.random.default_rng(n_levels)
    for n in (3, 600, 20_000):
        x = np.round(rng.integers(0, n_levels, n) / max(n_levels - 1, 1), ROUND)
        x[rng.random(n) < 0.01] = -0.0 if n_levels > 1 else x[0]         # -0.0: equal to 0.0
        if n > 600:
            x[-1] = 0.123456789                                           # a value the probe does not see
        want_values, want_counts = _old_levels(x)
        values, counts = m.levels(x)
        assert np.array_equal(values, want_values) and np.array_equal(counts, want_counts)
        assert counts.dtype == want_counts.dtype == np.int64
        with_nan = x.copy()
        with_nan[rng.random(n) < 0.1] = np.nan
        codes, want = m.level_codes(with_nan, values), _old_level_codes(with_nan, values)
        keep = ~np.isnan(with_nan)                                        # NaN codes are meaningless
        assert codes.dtype == want.dtype and np.array_equal(codes[keep], want[keep])


def _calls(rng, n, pairing, lo, hi, repeats):
    """Calls of one cell: pointwise (a, -1), anchored (a, anchor) with reversed calls, or a tournament's
    matches (some self-matches); `repeats` calls per candidate at most, in shuffled or in candidate order."""
    per = rng.integers(0 if repeats > 1 else 1, repeats + 1, n)
    a = np.repeat(np.arange(n), per).astype(np.int32)
    if rng.random() < 0.5:
        rng.shuffle(a)
    b = (np.full(a.size, -1, np.int32) if pairing == "pointwise" else
         np.where(rng.random(a.size) < 0.1, a, rng.integers(0, n, a.size)).astype(np.int32))
    swapped = rng.random(a.size) < (0.3 if pairing == "anchored" else 0.0)
    value = rng.integers(lo, hi + 1, a.size).astype(float)
    value[rng.random(a.size) < 0.05] = lo + (hi - lo) * rng.random()       # a value off the scale's steps
    return a, b, swapped, value


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("pairing,lo,hi", [("pointwise", 0, 1), ("pointwise", 1, 5), ("pointwise", 0, 100),
                                           ("anchored", -2, 2), ("tournament", -2, 2)])
def test_normalised_scores_are_the_old_ones(seed, pairing, lo, hi):
    rng = np.random.default_rng(seed)
    n = 500
    for repeats in (1, 3):
        a, b, swapped, value = _calls(rng, n, pairing, lo, hi, repeats)
        weight = None if repeats == 1 else 1.0 / rng.integers(1, 4, a.size)
        for w in (None, weight):
            got = normalised_scores(pairing, lo, hi, a, b, swapped, value, n, w)
            _same(got, _old_normalised_scores(pairing, lo, hi, a, b, swapped, value, n, w))
    empty = np.zeros(0, np.int32)
    _same(normalised_scores(pairing, lo, hi, empty, empty, np.zeros(0, bool), np.zeros(0), 3),
          _old_normalised_scores(pairing, lo, hi, empty, empty, np.zeros(0, bool), np.zeros(0), 3))


def test_sums_are_the_old_sums():
    rng = np.random.default_rng(1)
    x = rng.random(100_003)
    for values in (x, np.where(rng.random(x.size) < 0.1, np.nan, x), np.full(5, np.nan), np.zeros(0),
                   np.array([np.inf, 1.0]), np.array([np.inf, -np.inf, np.nan]), x[::3]):
        with np.errstate(invalid="ignore"):          # inf - inf is NaN (numpy warns, either way)
            got, want = _sum(values), _old_sum(values)
        assert got[1] == want[1] and (got[0] == want[0] or np.isnan(got[0]) and np.isnan(want[0]))


def _scores(rng, n_prompts, sizes, n_cells):
    """A pool's Scores (candidates in cand_idx order, listed prompt by prompt or shuffled): references on
    10 levels (some missing), cells of every kind of score: binary, likert, 0-100 (multiples of 5 and not),
    tournament-like means, continuous, unparsed calls, a cell scored only where referenced, and one with
    no score."""
    group = _groups(rng, n_prompts, sizes)
    n = group.size
    position = np.arange(n) - np.repeat(m.group_starts(group), np.bincount(group))
    if rng.random() < 0.5:
        shuffle = rng.permutation(n)
        group, position = group[shuffle], position[shuffle]
    reference = rng.integers(0, 10, n).astype(float)
    reference[rng.random(n) < 0.1] = np.nan
    scales = [np.round(rng.integers(0, 2, n) / 1.0, ROUND), np.round(rng.integers(0, 5, n) / 4, ROUND),
              np.round(5 * rng.integers(0, 21, n) / 100, ROUND), np.round(rng.integers(0, 101, n) / 100, ROUND),
              np.round(rng.integers(0, 35, n) / 34, ROUND), np.round(rng.random(n), ROUND)]
    S = np.stack([scales[c % len(scales)] for c in range(n_cells)])
    for c in range(1, n_cells, 3):
        S[c, rng.random(n) < 0.2] = np.nan                                # unparsed
    S[2, np.isnan(reference)] = np.nan                                    # scored where referenced alone
    S[-1] = np.nan                                                        # a cell without a score
    return Scores(None, S, group, position, reference, listing_order(group, position))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("blocks", [1, 3, 7])
def test_cell_parts_are_the_old_parts_block_by_block(seed, blocks):
    rng = np.random.default_rng(seed)
    sizes = SIZES[seed % len(SIZES)] if seed % 3 else (1, 2, 4, m.SMALL_GROUP + 3)   # a prompt too large
    sc = _scores(rng, 240, sizes, 8)
    prompts = np.unique(sc.prompt)
    for part in np.array_split(prompts, blocks):                          # blocks of whole prompts
        rows = np.flatnonzero(np.isin(sc.prompt, part))
        prompt, position = sc.prompt[rows], sc.position[rows]
        block = Scores(None, sc.S[:, rows], prompt, position, sc.reference[rows], listing_order(prompt, position))
        key = tiebreak_keys(rows, seed)
        new, old = PoolView(block, seed, key), _OldView(block, seed, key)
        assert np.array_equal(new.r_code, old.r_code) and new.r_code.dtype == old.r_code.dtype
        for c in range(block.S.shape[0]):
            _same(cell_parts(new, new.scores(block.S[c])), _old_cell_parts(old, old.scores(block.S[c])))
