"""Pure metric functions on numpy arrays (docs/metrics.md#the-audit-audit).

Within-prompt statistics take flat arrays sorted so that each group (one prompt of one cell) is
contiguous, plus a dense group index; everything is vectorised across all groups at once.
"""

from __future__ import annotations

import math

import numpy as np

ROUND = 12  # scores are rounded to 12 decimals before any comparison


def renyi_levels(p: np.ndarray, alpha: float) -> float:
    """Effective number of levels D_alpha = exp(H_alpha) of a probability vector.

    alpha = 0: the count of values; 1: exp(Shannon entropy); 2: 1 / sum p^2; inf: 1 / max p.
    """
    p = np.asarray(p, dtype=float)
    p = p[p > 0]
    if p.size == 0:
        return float("nan")
    if alpha == 0:
        return float(p.size)
    if alpha == 1:
        return float(np.exp(-np.sum(p * np.log(p))))
    if np.isinf(alpha):
        return float(1.0 / p.max())
    return float(np.sum(p ** alpha) ** (1.0 / (1.0 - alpha)))


def group_starts(group: np.ndarray) -> np.ndarray:
    """Start offsets of the runs of equal values in a sorted group array."""
    if group.size == 0:
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(np.concatenate(([True], group[1:] != group[:-1])))


def pair_counts(group: np.ndarray, s: np.ndarray, r: np.ndarray, n_groups: int):
    """Per group: n0 pairs, C - D, n1 pairs tied in s, n2 pairs tied in r.

    Pairs are enumerated by offset d = 1, 2, ... within each contiguous group, so the work is the
    number of pairs, done as a few whole-array operations per offset.
    """
    n = group.size
    cd = np.zeros(n_groups)
    n1 = np.zeros(n_groups)
    n2 = np.zeros(n_groups)
    sizes_per_group = np.bincount(group, minlength=n_groups)
    n0 = sizes_per_group * (sizes_per_group - 1) / 2.0
    if n == 0:
        return n0, cd, n1, n2
    starts = group_starts(group)
    sizes = np.diff(np.append(starts, n))
    after = np.repeat(starts + sizes, sizes) - np.arange(n) - 1  # members after i in its group
    active = np.flatnonzero(after > 0)
    d = 1
    while active.size:
        j = active + d
        ds = np.sign(s[active] - s[j])
        dr = np.sign(r[active] - r[j])
        g = group[active]
        cd += np.bincount(g, weights=ds * dr, minlength=n_groups)
        n1 += np.bincount(g, weights=(ds == 0), minlength=n_groups)
        n2 += np.bincount(g, weights=(dr == 0), minlength=n_groups)
        d += 1
        active = active[after[active] >= d]
    return n0, cd, n1, n2


def kendall_variants(n0, cd, n1, n2):
    """tau_a, tau_b, Somers' D (reference independent) per group; NaN where undefined."""
    with np.errstate(divide="ignore", invalid="ignore"):
        tau_a = np.where(n0 > 0, cd / n0, np.nan)
        denom_b = (n0 - n1) * (n0 - n2)
        tau_b = np.where(denom_b > 0, cd / np.sqrt(np.where(denom_b > 0, denom_b, 1)), np.nan)
        somers = np.where(n0 - n2 > 0, cd / np.where(n0 - n2 > 0, n0 - n2, 1), np.nan)
    return tau_a, tau_b, somers


SMALL_GROUP = 64  # groups up to this size are handled as (size x groups) matrices


class PromptStats:
    """Within-prompt statistics for one fixed set of candidates, reusable across cells.

    `group` gives each element's dense, contiguous group (one prompt); `r` the references and
    `key` a seeded random number per element (the tie-break). Groups are bucketed by size and
    each bucket is laid out as a (size x groups) matrix; everything that depends only on r is
    computed once here, so `compute(s)` costs a few whole-row operations per bucket.
    """

    def __init__(self, group: np.ndarray, r: np.ndarray, key: np.ndarray):
        self.n_groups = int(group[-1]) + 1 if group.size else 0
        starts = group_starts(group)
        sizes = np.diff(np.append(starts, group.size))
        self.buckets = []
        for k in np.unique(sizes):
            gids = np.flatnonzero(sizes == k)
            idx = starts[gids][None, :] + np.arange(k)[:, None]        # k x G member indices
            R = r[idx]
            rt = R == R.max(axis=0)
            bucket = {"gids": gids, "k": int(k), "idx": idx, "K": key[idx], "rt": rt,
                      "n_rt": rt.sum(axis=0)}
            if k <= SMALL_GROUP:
                bucket["dr"] = [np.sign(R[i] - R[i + 1:]) for i in range(k - 1)]
                bucket["n2"] = sum(((d == 0).sum(axis=0) for d in bucket["dr"]), np.zeros(len(gids)))
            else:
                bucket["local"] = np.repeat(np.arange(len(gids)), k)
                bucket["members"] = idx.T.ravel()
                bucket["r_members"] = r[bucket["members"]]
            self.buckets.append(bucket)

    def compute(self, s: np.ndarray) -> dict:
        """Per group: n, n0, C - D, n1 (pairs tied in s), n2 (tied in r), top1, top1_expected,
        top1_uniform, top_tied (the maximum score held by two or more members).

        judge-top = members holding the group's max s; reference-top = those holding max r.
        top1_expected = |judge-top AND reference-top| / |judge-top|; top1_uniform =
        |reference-top| / n; top1 = whether the judge-top member with the largest key is
        reference-top. s may be level codes (level_codes): only order and ties matter.
        """
        parts = [self._bucket(b, s) for b in self.buckets]
        if len(parts) == 1 and parts[0][0].size == self.n_groups:  # one size: already in group order
            return parts[0][1]
        out = {name: np.zeros(self.n_groups) for name in parts[0][1]} if parts else {}
        for gids, values in parts:
            for name, v in values.items():
                out[name][gids] = v
        return out

    @staticmethod
    def _bucket(b: dict, s: np.ndarray) -> tuple[np.ndarray, dict]:
        gids, k, n_g = b["gids"], b["k"], len(b["gids"])
        S = s[b["idx"]]
        if k <= SMALL_GROUP:
            cd, n1 = np.zeros(n_g), np.zeros(n_g)
            for i in range(k - 1):
                ds = np.sign(S[i] - S[i + 1:])
                cd += (ds * b["dr"][i]).sum(axis=0)
                n1 += (ds == 0).sum(axis=0)
            n0, n2 = np.full(n_g, k * (k - 1) / 2.0), b["n2"]
        else:  # few, large groups: enumerate pairs by offset instead of by row
            n0, cd, n1, n2 = pair_counts(b["local"], s[b["members"]], b["r_members"], n_g)
        jt, rt, K = S == S.max(axis=0), b["rt"], b["K"]
        n_jt = jt.sum(axis=0)
        top1 = judge_top_is_reference_top(jt, K, rt)
        return gids, {"n": np.full(n_g, float(k)), "n0": n0, "cd": cd, "n1": n1, "n2": n2,
                      "top1": top1.astype(float), "top1_expected": (jt & rt).sum(axis=0) / n_jt,
                      "top1_uniform": b["n_rt"] / k, "top_tied": (n_jt >= 2).astype(float)}


def judge_top_is_reference_top(jt: np.ndarray, K: np.ndarray, rt: np.ndarray) -> np.ndarray:
    """Per group (column) of k x G matrices: whether the judge-top member (jt) with the largest key K
    is a reference top (rt), row by row (an argmax over axis 0 of a k x G matrix is far slower for
    small k); a group with no judge-top member reads row 0's rt."""
    best = np.where(jt[0], K[0], -1.0)
    top1 = rt[0].copy()
    for i in range(1, jt.shape[0]):
        better = jt[i] & (K[i] > best)
        best = np.where(better, K[i], best)
        top1 = np.where(better, rt[i], top1)
    return top1


class PromptMatrix:
    """PromptStats for any subset of a fixed set of candidates, laid out once.

    `group` gives each element's dense, contiguous group (one prompt), `r` its reference and `key`
    its tie-break key, as for PromptStats. Groups are bucketed by their full size k, each bucket a
    (k x G) matrix; `compute(s, present)` gives PromptStats(...).compute(s) of the groups that the
    elements in `present` form, without laying them out again: a pair counts where both its members
    are present, and the tops are taken among the present members. Every count is an integer, so
    each group's values are PromptStats' exactly, and the groups come in the same (group) order.
    For groups of at most SMALL_GROUP elements (PromptStats enumerates larger ones by offset).

    Laid out once per bucket: the pairs' (i < j) reference order sign(r_i - r_j), the tops of r, each member's
    rank by key (the largest key highest, of two equal keys the earlier member, as judge_top_is_reference_top
    picks). A cell then costs a few integer operations: its pairs' code differences, and one maximum of
    code * 2k + 2 * rank + (reference top) per group (the judge top's member with the largest key; top1)."""

    def __init__(self, group: np.ndarray, r: np.ndarray, key: np.ndarray):
        self.n_groups = int(group[-1]) + 1 if group.size else 0
        starts = group_starts(group)
        sizes = np.diff(np.append(starts, group.size))
        if sizes.size and sizes.max() > SMALL_GROUP:
            raise ValueError(f"PromptMatrix: groups of at most {SMALL_GROUP} elements")
        self.buckets = []
        for k in np.flatnonzero(np.bincount(sizes)).tolist():        # the sizes that occur (at most 64)
            gids = np.flatnonzero(sizes == k)
            idx = starts[gids][None, :] + np.arange(k)[:, None]        # k x G member indices
            R, K = r[idx], key[idx]
            dr = _pairwise(np.greater, R, bool).astype(np.int8) - _pairwise(np.less, R, bool)
            rank = np.zeros((k, len(gids)), dtype=np.int16)           # members with a smaller key, and
            for j in range(k):                                        # later members with the same key
                rank += K[j] < K
                rank[:j] += K[j] == K[:j]
            rt, rank2 = R == R.max(axis=0), 2 * rank                  # rt: the tops when all are present
            lo, hi = (int(R.min()), int(R.max())) if R.dtype.kind in "iu" and R.size else (0, 1 << 15)
            n2 = (dr == 0).sum(axis=0, dtype=np.int16).astype(float)
            n2.flags.writeable = False                                # compute returns it as it is
            self.buckets.append({"gids": gids, "k": k, "idx": idx, "R": R, "dr": dr,
                                 "rank2": rank2, "rank2_rt": rank2 + rt, "rt": rt, "n2": n2, "n_rt": rt.sum(axis=0),
                                 "r1": R.astype(np.int16) - (lo - 1) if hi - lo < (1 << 14) else None})   # r >= 1

    def compute(self, s: np.ndarray, present: np.ndarray) -> tuple[int, dict]:
        """(how many groups have >= 2 present members; per such group, in group order,
        PromptStats.compute's values over its present members). s: level codes (level_codes': int8, int16
        or int32, >= 0) or values (coded here: order and ties); r and s of absent members are never compared."""
        if s.dtype not in (np.int8, np.int16, np.int32):
            s = level_codes(s, np.unique(s[present]))
        parts = [(b["gids"], self._bucket(b, s, None if present.all() else present)) for b in self.buckets]
        if len(parts) == 1 and parts[0][0].size == self.n_groups:    # one size: already in group order
            out = parts[0][1]
        else:
            out = {name: np.zeros(self.n_groups) for name in
                   ("n", "n0", "cd", "n1", "n2", "top1", "top1_expected", "top1_uniform", "top_tied")}
            for gids, values in parts:
                for name, v in values.items():
                    out[name][gids] = v
        kept = out["n"] >= 2
        n_kept = int(np.count_nonzero(kept))
        return n_kept, out if n_kept == self.n_groups else {name: v[kept] for name, v in out.items()}

    def top_tied(self, s: np.ndarray, present: np.ndarray) -> tuple[int, int]:
        """Over the groups with >= 2 present members: how many have their highest s held by >= 2 of
        them, and how many there are (top_tied's sum and count, as compute gives them)."""
        tied = groups = 0
        for b in self.buckets:
            S, P = s[b["idx"]], present[b["idx"]]
            n = P.sum(axis=0)
            n_jt = (P & (S == np.where(P, S, _lowest(S.dtype)).max(axis=0))).sum(axis=0)
            tied += int(np.count_nonzero((n >= 2) & (n_jt >= 2)))
            groups += int(np.count_nonzero(n >= 2))
        return tied, groups

    @staticmethod
    def _bucket(b: dict, s: np.ndarray, present: np.ndarray | None) -> dict:
        """One bucket's values (present None: every member is present)."""
        k, n_g, S = b["k"], len(b["gids"]), s[b["idx"]]
        d = _pairwise(np.subtract, S, S.dtype)    # s_i - s_j of the pairs (codes >= 0: fits their type)
        tied, d = d == 0, np.sign(d, out=d)
        d *= b["dr"]                              # +1 concordant, -1 discordant, 0 tied
        width = 2 * k                             # code * 2k + 2 * rank + (reference top)
        C = np.multiply(S, width, dtype=np.int16 if S.dtype == np.int8 else np.int64)
        if present is None:
            rt, n_rt, n2, n = b["rt"], b["n_rt"], b["n2"], np.full(n_g, k, dtype=np.int16)
            C += b["rank2_rt"]
        else:
            P = present[b["idx"]]
            n, both = P.sum(axis=0, dtype=np.int16), _pairwise(np.logical_and, P, bool)
            tied &= both
            d *= both
            n2 = (both & (b["dr"] == 0)).sum(axis=0, dtype=np.int16).astype(float)
            r = b["r1"] * P if b["r1"] is not None else np.where(P, b["R"], _lowest(b["R"].dtype))  # (np.where: slow)
            rt = (r == r.max(axis=0)) & P         # the tops among the present (r1 >= 1: 0 where absent)
            n_rt = rt.sum(axis=0, dtype=np.int16)
            C += b["rank2"] + rt + 1
            C *= P                                # -1 where absent (below every present member)
            C -= 1
        top = C.max(axis=0)                       # the judge top's member with the largest key
        jt = C >= top - top % width               # the members holding the highest code
        n_jt = jt.sum(axis=0, dtype=np.int16)
        jt &= rt
        with np.errstate(divide="ignore", invalid="ignore"):
            return {"n": n.astype(float), "n0": n * (n - 1) / 2.0, "cd": d.sum(axis=0, dtype=np.int16).astype(float),
                    "n1": tied.sum(axis=0, dtype=np.int16).astype(float), "n2": n2, "top1": (top & 1).astype(float),
                    "top1_expected": jt.sum(axis=0, dtype=np.int16) / n_jt, "top1_uniform": n_rt / n,
                    "top_tied": (n_jt >= 2).astype(float)}


def _pairwise(op, X: np.ndarray, dtype) -> np.ndarray:
    """op(X[i], X[j]) of the pairs of rows i < j of a k x G matrix (i, then j, ascending): pairs x G."""
    k, at = X.shape[0], 0
    out = np.empty((k * (k - 1) // 2, X.shape[1]), dtype=dtype)
    for i in range(k - 1):
        op(X[i], X[i + 1:], out=out[at:at + k - 1 - i])
        at += k - 1 - i
    return out


def _lowest(dtype: np.dtype):
    """A value of `dtype` at or below every other (what an absent member holds when a top is taken)."""
    return np.iinfo(dtype).min if dtype.kind in "iu" else -np.inf


def tiebreak_key(n: int, seed: int) -> np.ndarray:
    """The seeded tie-break key of each of a pool's n candidates, indexed by cand_idx: among
    candidates tied at the top of a prompt, the one with the largest key is picked (the audit's
    top1, its position selection and curation all use this key)."""
    return np.random.default_rng(seed).random(n)


def top_tied(group: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Per group: whether the maximum score is held by two or more members."""
    n_groups = int(group[-1]) + 1 if group.size else 0
    starts = group_starts(group)
    sizes = np.diff(np.append(starts, group.size))
    smax = np.repeat(np.maximum.reduceat(s, starts), sizes) if group.size else s
    return np.bincount(group, weights=(s == smax), minlength=n_groups) >= 2


def selected_member(group: np.ndarray, s: np.ndarray, key: np.ndarray) -> np.ndarray:
    """Per group: the index (into the arrays) of the top-scored member, ties broken by max key."""
    if group.size == 0:
        return np.zeros(0, dtype=np.int64)
    starts = group_starts(group)
    sizes = np.diff(np.append(starts, group.size))
    smax = np.repeat(np.maximum.reduceat(s, starts), sizes)
    masked = np.where(s == smax, key, -1.0)
    best = np.repeat(np.maximum.reduceat(masked, starts), sizes)
    return np.flatnonzero(masked == best)


PROBE = 512          # levels: the elements whose distinct values are tried before sorting
PROBE_LEVELS = 64    # and at most this many of them (64 comparisons cost less than one sort)


def levels(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sorted distinct values of x (no NaN) and how many elements hold each.

    A score takes few values (a label scale's), so the distinct values of the first PROBE elements
    are tried first: when each element equals one of at most PROBE_LEVELS of them (their counts
    add up to x's size: distinct values, so an element equals one at most), those are all of x's
    values, counted by one comparison each; otherwise x is sorted."""
    if x.size > PROBE:
        probe = np.unique(x[:PROBE])
        if probe.size <= PROBE_LEVELS:
            counts = np.array([np.count_nonzero(x == v) for v in probe], dtype=np.int64)
            if int(counts.sum()) == x.size:
                return probe, counts
    xs = np.sort(x)
    if xs.size == 0:
        return xs, np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.concatenate(([True], xs[1:] != xs[:-1])))
    return xs[starts], np.diff(np.append(starts, xs.size))


COMPARE_LEVELS = 127  # up to this many levels (int8 codes), one comparison per level (a binary search costs more)


def level_codes(x: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Each element's index into the sorted array `values` that holds every non-NaN value of x,
    in the smallest signed integer type that fits (comparisons on codes are cheaper than on
    floats and keep order and ties). Codes of NaN elements are meaningless: mask them."""
    n_levels = values.size
    dtype = np.int8 if n_levels <= 127 else np.int16 if n_levels <= 32767 else np.int32
    if n_levels <= COMPARE_LEVELS:
        codes = np.zeros(x.size, dtype=dtype)
        for v in values[1:]:
            np.add(codes, x >= v, out=codes, casting="unsafe")
        return codes
    return np.searchsorted(values, x).astype(dtype, copy=False)


def ranks_of_codes(codes: np.ndarray, n_levels: int) -> np.ndarray:
    """Average ranks 1..n of elements given their level codes (ties share their average rank)."""
    counts = np.bincount(codes, minlength=n_levels)
    below = np.cumsum(counts) - counts
    return (below + (counts + 1) / 2.0)[codes]


def rank_correlation(codes: np.ndarray, n_levels: int, other_ranks: np.ndarray) -> float:
    """Spearman's rho between x, given as level codes, and y, given as its average ranks 1..m:
    the Pearson correlation of the two rank vectors, summed level by level on the x side
    (x's average ranks are constant within a level). NaN when either side is constant."""
    m = codes.size
    if m < 2:
        return float("nan")
    counts = np.bincount(codes, minlength=n_levels)
    x = np.cumsum(counts) - counts + (counts + 1) / 2.0 - (m + 1) / 2.0   # centred level ranks
    y = other_ranks - (m + 1) / 2.0                                         # mean rank is (m+1)/2
    sxy = float(np.dot(x, np.bincount(codes, weights=y, minlength=n_levels)))
    sxx, syy = float(np.dot(x * x, counts)), float(np.dot(y, y))
    if sxx <= 0 or syy <= 0:
        return float("nan")
    return sxy / np.sqrt(sxx * syy)


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson correlation of x and y; NaN when either is constant or there are < 2 points."""
    if x.size < 2:
        return float("nan")
    dx, dy = x - x.mean(), y - y.mean()
    sxx, syy = float(np.dot(dx, dx)), float(np.dot(dy, dy))
    if sxx <= 0 or syy <= 0:
        return float("nan")
    return float(np.dot(dx, dy) / np.sqrt(sxx * syy))


def two_way_shares(table: np.ndarray) -> dict:
    """Two-way ANOVA without replication on a (judge x format) table of one value per cell.

    Returns the shares of the total sum of squares for format (columns), judge (rows) and the
    residual, with the total.
    """
    grand = table.mean()
    ss_total = float(((table - grand) ** 2).sum())
    ss_format = float(table.shape[0] * ((table.mean(axis=0) - grand) ** 2).sum())
    ss_judge = float(table.shape[1] * ((table.mean(axis=1) - grand) ** 2).sum())
    ss_resid = ss_total - ss_format - ss_judge
    if ss_total <= table.size * (1e-12 * float(np.abs(table).max())) ** 2:   # constant up to rounding
        return {"share_format": float("nan"), "share_judge": float("nan"),
                "share_residual": float("nan"), "ss_total": ss_total}
    return {"share_format": ss_format / ss_total, "share_judge": ss_judge / ss_total,
            "share_residual": max(ss_resid, 0.0) / ss_total, "ss_total": ss_total}


def bootstrap_means(values: np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """Column means of `n_boot` resamples of the rows of `values` (n x m), with replacement.

    One set of resampled rows serves every column. Done in chunks to bound memory.
    """
    values = np.asarray(values, dtype=float).reshape(len(values), -1)
    n = values.shape[0]
    out = np.empty((n_boot, values.shape[1]))
    chunk = max(1, int(2e7 // max(n * values.shape[1], 1)))
    for lo in range(0, n_boot, chunk):
        hi = min(lo + chunk, n_boot)
        idx = rng.integers(0, n, size=(hi - lo, n))
        out[lo:hi] = values[idx].mean(axis=1)
    return out


def distinct_counts(columns: list[np.ndarray], sizes: list[int]) -> list[np.ndarray]:
    """The distinct rows of the integer columns (each in 0..size-1), in lexicographic order, and how many
    times each occurs: the columns as one mixed-radix key, counted by np.bincount where the key's range
    is small, else sorted (np.unique); a range beyond 63 bits sorts the rows themselves."""
    space = math.prod(max(1, s) for s in sizes)
    if space >= 1 << 63:
        rows, n = np.unique(np.column_stack(columns), axis=0, return_counts=True)
        return [*rows.T, n]
    key = columns[0].astype(np.int64)
    for column, size in zip(columns[1:], sizes[1:]):
        key *= size                                        # in place: no array more than the key
        key += column
    if space <= max(1 << 22, 4 * key.size):
        n = np.bincount(key, minlength=1)
        key = np.flatnonzero(n)
        n = n[key]
    else:
        key, n = np.unique(key, return_counts=True)
    out = []
    for size in reversed(sizes):
        out.append(key % size)
        key = key // size
    return [*reversed(out), n]
