"""Bradley-Terry rankings from comparative verdicts (docs/metrics.md#rankings-bradley-terry).

Strengths p_i by Hunter's MM algorithm, p_i <- W_i / sum_j n_ij / (p_i + p_j), where W_i counts the
wins of i (a tie is half a win to each side) and n_ij the games between i and j, iterated to a
relative change < 1e-10. `strength` = log p_i centred to mean 0; `lo`/`hi` = the 95% percentile
bootstrap over prompts (seeded; drawn as multinomial counts of the prompts' kinds, prompts whose games
are equal; its refits start from the fit and stop at 1e-8); `rank` 1 = strongest. A margin > 0 is a
win for slot A, < 0 for slot B, 0 a tie; its size is not used.

The maximum-likelihood strengths exist only when every item has beaten, or tied, a chain of items
leading to every other one (the win graph is strongly connected: Zermelo, Ford). Where it is not
(an item that never lost, or never won; small per-prompt rankings), every pair that met gets
`prior` virtual games split as a tie (DEFAULT_PRIOR: half a game, a quarter win each way), which
keeps the strengths finite; the `prior` column says which was used. Items outside the largest
connected group of the comparison graph cannot be placed on its scale and are left out.

The single-order ranking uses only the calls in the forward orientation of their item (the
earlier-listed candidate, or the non-anchor, in slot A); the both-order ranking uses every call.
Their difference is what slot bias does to a leaderboard.
"""

from __future__ import annotations

import os

import numpy as np
import polars as pl
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from ._bias import cell_rng
from ._rank_kinds import unit_kinds
from ._read import reading

TOL = 1e-10
BOOT_TOL = 1e-8          # bootstrap refits start from the fit and feed percentiles only
MAX_ITER = 100_000
DRAW_CELLS = 2_000_000   # a bootstrap chunk's draws x max(columns, kinds, items): its memory, not its numbers
DEFAULT_PRIOR = 0.5
RANK_COLUMNS = ["judge", "format", "decoding", "order", "prompt_id", "id", "strength", "lo", "hi", "rank", "games",
                "wins", "n_calls", "n_units", "prior"]
ORDERS = ("both", "single")


def win_matrix(a: np.ndarray, b: np.ndarray, value: np.ndarray, n: int) -> np.ndarray:
    """wins[i, j] = games i won against j: a margin > 0 is a win for slot A (index a), < 0 for slot B,
    0 half a win to each."""
    credit_a = np.where(value > 0, 1.0, np.where(value < 0, 0.0, 0.5))
    wins = np.zeros((n, n))
    np.add.at(wins, (a, b), credit_a)
    np.add.at(wins, (b, a), 1.0 - credit_a)
    return wins


def _edges(wins: np.ndarray):
    """Dense (B, n, n) wins -> the pairs (i < j) that met in any member, and (B, E) wins each way."""
    met = ((wins + np.swapaxes(wins, 1, 2)) > 0).any(axis=0)
    i, j = np.nonzero(np.triu(met, 1))
    return i, j, wins[:, i, j], wins[:, j, i]


def _onto_items(i, j, x_i, x_j, n: int) -> np.ndarray:
    """(B, n): per item, the sum of x_i over the edges where it is i plus x_j where it is j."""
    B = x_i.shape[0]
    off = (np.arange(B) * n)[:, None]
    out = np.bincount((off + i).ravel(), x_i.ravel(), B * n) + np.bincount((off + j).ravel(), x_j.ravel(), B * n)
    return out.reshape(B, n)


def _strong(i, j, wf, wb, n: int) -> np.ndarray:
    """Per member: is the graph (an edge i -> j when i won or tied against j at least once) strongly
    connected among the items with games? Breadth-first reach from one item, forwards and backwards."""
    B = wf.shape[0]
    active = _onto_items(i, j, wf + wb, wf + wb, n) > 0
    first = np.argmax(active, axis=1)
    ok = np.ones(B, bool)
    for fwd, bwd in ((wf > 0, wb > 0), (wb > 0, wf > 0)):   # reach along wins, then along losses
        reach = np.zeros((B, n), bool)
        reach[np.arange(B), first] = True
        while True:
            more = reach | (_onto_items(i, j, (reach[:, j] & bwd).astype(float),
                                        (reach[:, i] & fwd).astype(float), n) > 0)
            if (more == reach).all():
                break
            reach = more
        ok &= (reach | ~active).all(axis=1)
    return ok


def mle_exists(wins: np.ndarray) -> np.ndarray | bool:
    """Whether the maximum-likelihood strengths are finite: among the items with games, the graph
    with an edge i -> j whenever i won (or tied) at least once against j is strongly connected.
    `wins` is (n, n) (returns a bool) or a batch (B, n, n) (returns B bools)."""
    w = np.asarray(wins, dtype=float)
    single = w.ndim == 2
    w = w[None] if single else w
    ok = _strong(*_edges(w), w.shape[1])
    return bool(ok[0]) if single else ok


def _mm_edges(i, j, wf, wb, n: int, tol: float = TOL, max_iter: int = MAX_ITER,
              start: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """The MM iteration on pairs (i, j) with (B, E) wins each way; (B, n) log p centred, iterations."""
    g = wf + wb                                            # n_ij
    total = _onto_items(i, j, wf, wb, n)                   # W_i
    active = _onto_items(i, j, g, g, n) > 0
    B = g.shape[0]
    p = np.ones((B, n)) if start is None else np.exp(np.nan_to_num(np.broadcast_to(start, (B, n)))).copy()
    n_active = np.maximum(active.sum(axis=1, keepdims=True), 1)
    todo = np.arange(B)                                    # members still iterating
    it = 0
    for it in range(1, max_iter + 1):
        pt, act = p[todo], active[todo]
        d = g[todo] / (pt[:, i] + pt[:, j])
        denom = _onto_items(i, j, d, d, n)
        new = np.where(act, total[todo] / np.where(denom > 0, denom, 1.0), 1.0)
        with np.errstate(divide="ignore"):
            logs = np.where(act, np.log(new), 0.0)
        new = new / np.exp(logs.sum(axis=1, keepdims=True) / n_active[todo])
        change = np.max(np.where(act, np.abs(new - pt) / pt, 0.0), axis=1)
        p[todo] = new
        todo = todo[change >= tol]                         # NaN (a zero strength) stops too
        if todo.size == 0:
            break
    with np.errstate(divide="ignore"):
        out = np.where(active, np.log(p), np.nan)
    return out, it


def bt_mm(wins: np.ndarray, tol: float = TOL, max_iter: int = MAX_ITER,
          start: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """Strengths log p (centred to mean 0 over the items with games) by the MM algorithm,
    p_i <- W_i / sum_j n_ij / (p_i + p_j), renormalised each step.

    `wins` is (n, n) or a batch (B, n, n); items without games in a batch member get NaN there.
    Each member stops when its largest relative change of p is below `tol`. Returns (log p, the
    largest number of iterations a member took).
    """
    w = np.asarray(wins, dtype=float)
    single = w.ndim == 2
    w = w[None] if single else w
    out, it = _mm_edges(*_edges(w), w.shape[1], tol, max_iter, start)
    return (out[0] if single else out), it


def _largest_group(games: np.ndarray) -> np.ndarray:
    """Mask of the items in the largest connected group of the comparison graph."""
    _, labels = connected_components(csr_matrix(games > 0), directed=False)
    counts = np.bincount(labels)
    return labels == np.argmax(counts)


def fit_cell(unit: np.ndarray, i: np.ndarray, j: np.ndarray, credit: np.ndarray, n: int,
             n_boot: int, rng: np.random.Generator, prior: float | None = None,
             n_games: np.ndarray | None = None, unit_count: np.ndarray | None = None) -> dict:
    """Bradley-Terry strengths of n items from games (i vs j, credit = i's share of the win), with a
    95% percentile bootstrap that resamples the units (prompts) with replacement. `n_games`: a row
    stands for that many games of one unit and pair, `credit` then i's summed share (None: one each;
    the same numbers as the games one by one, since credits are halves and their sums exact).
    `unit_count`: per unit, how many prompts it stands for (a kind of prompts with equal games;
    None: one each).

    The bootstrap draws the prompts' kinds, not the prompts: resampling N prompts with replacement
    and summing their games is drawing Multinomial(N, count_k / N) prompts of each kind k and summing
    count x the kind's games, the same distribution in B x K draws instead of B x N. The kinds are
    numbered by their first unit, so where every prompt is a kind of its own the draws are those of
    the prompts themselves, number for number.

    Returns strength, lo, hi (arrays of n; NaN outside the largest connected group), games, wins,
    prior (the virtual tie games per met pair that were used: 0 when the MLE exists)."""
    count = np.ones(credit.size) if n_games is None else np.asarray(n_games, float)
    units = int(unit.max()) + 1 if unit.size else 0
    per_prompts = np.ones(units) if unit_count is None else np.asarray(unit_count, float)
    times = per_prompts[unit] if unit.size else np.ones(0)
    wins = (np.bincount(i * n + j, credit * times, n * n)
            + np.bincount(j * n + i, (count - credit) * times, n * n)).reshape(n, n)
    games = wins + wins.T
    keep = _largest_group(games) if n > 1 else np.ones(n, bool)
    idx = np.flatnonzero(keep)
    m = idx.size
    ei, ej, wf, wb = _edges(wins[np.ix_(idx, idx)][None])
    used = prior if prior is not None else (0.0 if _strong(ei, ej, wf, wb, m)[0] else DEFAULT_PRIOR)
    strength = np.full(n, np.nan)
    logs, _ = _mm_edges(ei, ej, wf + used / 2, wb + used / 2, m)
    strength[idx] = logs[0]
    lo, hi = np.full(n, np.nan), np.full(n, np.nan)
    if n_boot > 0 and m > 1:
        # each unit's wins on each edge, each way: (n_units, 2E) sparse; a resample is a weighted sum
        remap = np.full(n, -1)
        remap[idx] = np.arange(m)
        inside = keep[i] & keep[j]
        a, b, u, c, g = remap[i[inside]], remap[j[inside]], unit[inside], credit[inside], count[inside]
        edge_of = np.full((m, m), -1, np.int64)
        edge_of[ei, ej] = np.arange(ei.size)
        lo_first = a < b
        e = edge_of[np.minimum(a, b), np.maximum(a, b)]
        if (e < 0).any():                                  # a system against itself: no edge (as before)
            raise KeyError((int(a[e < 0][0]), int(b[e < 0][0])))
        E = ei.size
        fwd_credit = np.where(lo_first, c, g - c)        # credit of the lower-numbered item ei
        per_unit = csr_matrix((np.concatenate([fwd_credit, g - fwd_credit]),
                               (np.concatenate([u, u]), np.concatenate([e, e + E]))), shape=(units, 2 * E))
        per_kind, kind_count = unit_kinds(per_unit, per_prompts)
        n_prompts = int(round(kind_count.sum()))
        chunk = max(1, DRAW_CELLS // max(2 * E, kind_count.size, m))
        draws = []
        for first in range(0, n_boot, chunk):
            size = min(chunk, n_boot - first)
            weights = rng.multinomial(n_prompts, kind_count / n_prompts, size=size).astype(float)
            bw = np.asarray((per_kind.T @ weights.T).T)
            bf, bb = bw[:, :E], bw[:, E:]
            bprior = np.where(_strong(ei, ej, bf, bb, m), 0.0, DEFAULT_PRIOR) if used == 0 \
                else np.full(size, used)
            met = (bf + bb) > 0
            add = bprior[:, None] / 2 * met
            logs, _ = _mm_edges(ei, ej, bf + add, bb + add, m, tol=BOOT_TOL, start=strength[idx])
            draws.append(logs)
        draws = np.concatenate(draws)
        with np.errstate(all="ignore"):
            lo[idx], hi[idx] = np.nanpercentile(draws, [2.5, 97.5], axis=0)
    return {"strength": strength, "lo": lo, "hi": hi, "games": games.sum(axis=1),
            "wins": wins.sum(axis=1), "prior": used}


def _ranks(strength: np.ndarray, ids: list[str]) -> np.ndarray:
    """1 = strongest; equal strengths by id; NaN strengths get no rank (0)."""
    order = sorted((k for k in range(len(ids)) if not np.isnan(strength[k])),
                   key=lambda k: (-round(float(strength[k]), 12), ids[k]))
    ranks = np.zeros(len(ids), dtype=int)
    ranks[order] = np.arange(1, len(order) + 1)
    return ranks


def _rank_group(calls: pl.DataFrame, n_boot: int, rng: np.random.Generator, prior: float | None,
                unit_col: str) -> pl.DataFrame:
    ids = sorted(set(calls["a_id"].to_list()) | set(calls["b_id"].to_list()))
    code = {c: k for k, c in enumerate(ids)}
    a = np.array([code[x] for x in calls["a_id"].to_list()], dtype=np.int64)
    b = np.array([code[x] for x in calls["b_id"].to_list()], dtype=np.int64)
    v = calls["value"].to_numpy()
    credit = np.where(v > 0, 1.0, np.where(v < 0, 0.0, 0.5))
    units = calls[unit_col].to_numpy() if unit_col in calls.columns else np.arange(calls.height)
    _, unit = np.unique(units, return_inverse=True)
    fit = fit_cell(unit.astype(np.int64), a, b, credit, len(ids), n_boot, rng, prior)
    strength = fit["strength"]
    return pl.DataFrame({
        "id": ids, "strength": strength, "lo": fit["lo"], "hi": fit["hi"],
        "rank": _ranks(strength, ids), "games": fit["games"], "wins": fit["wins"],
        "n_calls": calls.height, "n_units": int(unit.max()) + 1 if unit.size else 0,
        "prior": fit["prior"]}).with_columns(pl.col("rank").replace(0, None))


def _largest_groups(ei, ej, met: np.ndarray, n: int) -> np.ndarray:
    """(B, n) mask of each member's largest connected group (ties: the one holding the lowest
    item), by propagating the lowest group id over the met pairs; items without games are outside."""
    B = met.shape[0]
    group = np.tile(np.arange(n), (B, 1))
    rows = np.nonzero(met)
    while True:
        old = group.copy()
        li, lj = group[rows[0], ei[rows[1]]], group[rows[0], ej[rows[1]]]
        low = np.minimum(li, lj)
        np.minimum.at(group, (rows[0], ei[rows[1]]), low)
        np.minimum.at(group, (rows[0], ej[rows[1]]), low)
        if (group == old).all():
            break
    active = np.zeros((B, n), bool)
    active[rows[0], ei[rows[1]]] = True
    active[rows[0], ej[rows[1]]] = True
    counts = np.zeros((B, n), int)
    np.add.at(counts, (np.nonzero(active)[0], group[active]), 1)
    return active & (group == counts.argmax(axis=1)[:, None])


def _nan_percentiles(draws: np.ndarray, q=(2.5, 97.5)) -> tuple[np.ndarray, np.ndarray]:
    """Percentiles (linear interpolation, as numpy's default) along axis 1 of (P, B, n), ignoring
    NaN; NaN where a slice has no value."""
    srt = np.sort(draws, axis=1)                           # NaN sort last
    valid = (~np.isnan(draws)).sum(axis=1)                 # (P, n)
    out = []
    for quantile in q:
        pos = quantile / 100 * np.maximum(valid - 1, 0)
        below = np.floor(pos).astype(int)
        above = np.minimum(below + 1, np.maximum(valid - 1, 0))
        v_lo = np.take_along_axis(srt, below[:, None, :], axis=1)[:, 0]
        v_hi = np.take_along_axis(srt, above[:, None, :], axis=1)[:, 0]
        out.append(np.where(valid > 0, v_lo + (pos - below) * (v_hi - v_lo), np.nan))
    return out[0], out[1]


def _rank_within_prompts(calls: pl.DataFrame, n_boot: int, rng: np.random.Generator,
                         prior: float | None) -> pl.DataFrame:
    """One ranking per prompt, all prompts of a cell at once: each prompt is a member of one
    batched MM fit over its candidates (local indices), and its bootstrap resamples its own calls."""
    cands = pl.concat([calls.select("prompt_id", pl.col("a_id").alias("id")),
                       calls.select("prompt_id", pl.col("b_id").alias("id"))]).unique().sort("prompt_id", "id") \
        .with_columns(pl.int_range(pl.len()).over("prompt_id").alias("k"),
                      pl.col("prompt_id").rank("dense").cast(pl.Int64).alias("p") - 1)
    local = cands.select("prompt_id", "id", "k", "p")
    calls = calls.join(local.rename({"id": "a_id", "k": "ka"}), on=["prompt_id", "a_id"]) \
        .join(local.select("prompt_id", pl.col("id").alias("b_id"), pl.col("k").alias("kb")), on=["prompt_id", "b_id"]) \
        .sort("p", maintain_order=True)
    n_prompts, k_max = int(cands["p"].max()) + 1, int(cands["k"].max()) + 1
    ka, kb, p = calls["ka"].to_numpy(), calls["kb"].to_numpy(), calls["p"].to_numpy()
    # the pairs of local indices that met in some prompt (not every pair: star designs stay small)
    pairs = np.unique(np.minimum(ka, kb) * k_max + np.maximum(ka, kb))
    ei, ej = pairs // k_max, pairs % k_max
    eid = np.full((k_max, k_max), -1)
    eid[ei, ej] = np.arange(ei.size)
    E = ei.size
    v = calls["value"].to_numpy()
    credit_a = np.where(v > 0, 1.0, np.where(v < 0, 0.0, 0.5))
    e = eid[np.minimum(ka, kb), np.maximum(ka, kb)]
    credit = np.where(ka < kb, credit_a, 1.0 - credit_a)     # the lower-numbered item's share
    # calls outside their prompt's largest connected group cannot be placed on its scale: left out
    met = np.zeros((n_prompts, E), bool)
    met[p, e] = True
    keep_item = _largest_groups(ei, ej, met, k_max)
    inside = keep_item[p, ka] & keep_item[p, kb]
    wf = np.zeros((n_prompts, E))
    wb = np.zeros((n_prompts, E))
    np.add.at(wf, (p[inside], e[inside]), credit[inside])
    np.add.at(wb, (p[inside], e[inside]), 1.0 - credit[inside])
    credit = np.where(inside, credit, 0.0)                   # resampled calls outside count for nothing
    lost = ~inside
    used = np.where(_strong(ei, ej, wf, wb, k_max), 0.0, DEFAULT_PRIOR) if prior is None else np.full(n_prompts, prior)
    add = used[:, None] / 2 * ((wf + wb) > 0)
    logs, _ = _mm_edges(ei, ej, wf + add, wb + add, k_max)
    lo, hi = np.full(logs.shape, np.nan), np.full(logs.shape, np.nan)
    n_calls = np.bincount(p, minlength=n_prompts)
    if n_boot > 0:
        starts = np.concatenate([[0], np.cumsum(n_calls)])
        per = max(1, 2_000_000 // max(n_boot * E, 1))       # prompts per batch
        for first in range(0, n_prompts, per):
            last = min(first + per, n_prompts)
            c = slice(starts[first], starts[last])
            # each prompt's calls resampled with replacement, n_boot times: (n_boot, calls in block)
            weights = np.concatenate([rng.multinomial(m, np.full(m, 1.0 / m), size=n_boot)
                                      for m in n_calls[first:last]], axis=1).astype(float)
            member = (p[c] - first)[None, :] * n_boot + np.arange(n_boot)[:, None]     # (n_boot, calls)
            index = (member * E + e[c][None, :]).ravel()
            size = (last - first) * n_boot * E
            bf = np.bincount(index, (weights * credit[c]).ravel(), size).reshape(-1, E)
            bb = np.bincount(index, (weights * np.where(lost[c], 0.0, 1.0 - credit[c])).ravel(), size).reshape(-1, E)
            owner = np.repeat(np.arange(first, last), n_boot)
            bprior = np.where(_strong(ei, ej, bf, bb, k_max), 0.0, DEFAULT_PRIOR) if prior is None \
                else np.full(owner.size, prior)
            badd = bprior[:, None] / 2 * ((bf + bb) > 0)
            draws, _ = _mm_edges(ei, ej, bf + badd, bb + badd, k_max, tol=BOOT_TOL, start=logs[owner])
            lo[first:last], hi[first:last] = _nan_percentiles(draws.reshape(last - first, n_boot, k_max))
    games = _onto_items(ei, ej, wf + wb, wf + wb, k_max)
    wins = _onto_items(ei, ej, wf, wb, k_max)
    pk = (cands["p"].to_numpy(), cands["k"].to_numpy())
    out = cands.with_columns(pl.Series("strength", logs[pk]).fill_nan(None), pl.Series("lo", lo[pk]), pl.Series("hi", hi[pk]),
                             pl.Series("games", games[pk]), pl.Series("wins", wins[pk]),
                             pl.Series("n_calls", n_calls[pk[0]]), pl.Series("prior", used[pk[0]]))
    out = out.sort("p", pl.col("strength").round(12), "id", descending=[False, True, False], nulls_last=True) \
        .with_columns(pl.when(pl.col("strength").is_not_null())
                      .then(pl.int_range(pl.len()).over("p") + 1).alias("rank"))
    return out.with_columns(pl.col("n_calls").alias("n_units")).select(
        "prompt_id", "id", "strength", "lo", "hi", "rank", "games", "wins", "n_calls", "n_units", "prior")


def rank_calls(calls: pl.DataFrame, by: str = "candidate_id", n_boot: int = 1000, seed: int = 0,
               prior: float | None = None) -> pl.DataFrame:
    """Pure: rankings from calls (columns judge, format, [decoding,] prompt_id, a_id, b_id, swapped,
    value); one cell per (judge, format, decoding).

    by='candidate_id': one ranking of systems per (judge, format, order), resampling prompts;
    by='prompt': one ranking of candidates per prompt, resampling that prompt's calls.
    Columns: RANK_COLUMNS (prompt_id null for by='candidate_id'; `n_units` = prompts or calls).
    """
    if by not in ("candidate_id", "prompt"):
        raise ValueError(f"by must be 'candidate_id' or 'prompt', not {by!r}")
    frames = []
    if "decoding" not in calls.columns:
        calls = calls.with_columns(pl.lit("greedy").alias("decoding"))
    cells = calls.select("judge", "format", "decoding").unique().sort("judge", "format", "decoding")
    for judge, fmt, decoding in cells.iter_rows():
        cell = calls.filter((pl.col("judge") == judge) & (pl.col("format") == fmt) & (pl.col("decoding") == decoding))
        for order in ORDERS:
            part = cell if order == "both" else cell.filter(~pl.col("swapped"))
            if part.height == 0:
                continue
            rng = cell_rng(seed, judge, fmt, decoding, order)   # by identity: other cells change no interval
            if by == "candidate_id":
                out = _rank_group(part, n_boot, rng, prior, "prompt_id") \
                    .with_columns(pl.lit(None, pl.String).alias("prompt_id"))
            else:
                out = _rank_within_prompts(part, n_boot, rng, prior)
            frames.append(out.with_columns(pl.lit(judge).alias("judge"), pl.lit(fmt).alias("format"),
                                           pl.lit(decoding).alias("decoding"), pl.lit(order).alias("order")))
    return ranking_frame(frames)


def ranking_frame(frames: list[pl.DataFrame]) -> pl.DataFrame:
    """The cells' rankings as one frame of RANK_COLUMNS (NaN as null; typed and empty without any)."""
    if not frames:
        return pl.DataFrame(schema={"judge": pl.String, "format": pl.String, "decoding": pl.String,
                                    "order": pl.String,
                                    "prompt_id": pl.String, "id": pl.String, "strength": pl.Float64,
                                    "lo": pl.Float64, "hi": pl.Float64, "rank": pl.Int64,
                                    "games": pl.Float64, "wins": pl.Float64, "n_calls": pl.Int64,
                                    "n_units": pl.Int64, "prior": pl.Float64})
    return pl.concat(frames, how="vertical_relaxed").select(RANK_COLUMNS) \
        .with_columns(pl.selectors.float().fill_nan(None))


def rank(db: str | os.PathLike | None, pool: str, by: str = "candidate_id", n_boot: int = 1000,
         seed: int = 0, prior: float | None = None) -> pl.DataFrame:
    """Bradley-Terry rankings per (judge, comparative format, decoding) cell of the pool, from both orders
    (every parsed call; order='both') and from the forward order alone (order='single').

    Columns: judge, format, decoding, order, prompt_id (by='prompt' only), id (candidate_id), strength,
    lo, hi, rank, games, wins (ties as halves), n_calls, n_units (prompts resampled; calls for
    by='prompt'), prior (virtual tie games per met pair; 0 = the plain MLE).
    """
    with reading(db) as read:
        calls = read.frame("rank_calls", pool_id=read.pool_id(pool))
    return rank_calls(calls, by=by, n_boot=n_boot, seed=seed, prior=prior)
