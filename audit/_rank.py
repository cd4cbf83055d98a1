"""Bradley-Terry rankings from comparative verdicts (DESIGN.md 'Calibration, probes and drift').

Strengths p_i by Hunter's MM algorithm, p_i <- W_i / sum_j n_ij / (p_i + p_j), where W_i counts the
wins of i (a tie is half a win to each side) and n_ij the games between i and j, iterated to a
relative change < 1e-10. `strength` = log p_i centred to mean 0; `lo`/`hi` = the 95% percentile
bootstrap over prompts (seeded); `rank` 1 = strongest. A margin > 0 is a win for slot A, < 0 for
slot B, 0 a tie; its size is not used.

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

from ._db import connect, pool_id, query

TOL = 1e-10
MAX_ITER = 100_000
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
             n_boot: int, rng: np.random.Generator, prior: float | None = None) -> dict:
    """Bradley-Terry strengths of n items from games (i vs j, credit = i's share of the win), with a
    95% percentile bootstrap that resamples the units (prompts) with replacement.

    Returns strength, lo, hi (arrays of n; NaN outside the largest connected group), games, wins,
    prior (the virtual tie games per met pair that were used: 0 when the MLE exists)."""
    wins = np.zeros((n, n))
    np.add.at(wins, (i, j), credit)
    np.add.at(wins, (j, i), 1.0 - credit)
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
        a, b, u, c = remap[i[inside]], remap[j[inside]], unit[inside], credit[inside]
        edge_of = {(x, y): e for e, (x, y) in enumerate(zip(ei.tolist(), ej.tolist()))}
        lo_first = a < b
        e = np.array([edge_of[(min(x, y), max(x, y))] for x, y in zip(a.tolist(), b.tolist())], dtype=np.int64)
        E = ei.size
        fwd_credit = np.where(lo_first, c, 1.0 - c)      # credit of the lower-numbered item ei
        n_units = int(unit.max()) + 1
        per_unit = csr_matrix((np.concatenate([fwd_credit, 1.0 - fwd_credit]),
                               (np.concatenate([u, u]), np.concatenate([e, e + E]))), shape=(n_units, 2 * E))
        chunk = max(1, 2_000_000 // max(2 * E, n_units, m))
        draws = []
        for first in range(0, n_boot, chunk):
            size = min(chunk, n_boot - first)
            weights = rng.multinomial(n_units, np.full(n_units, 1.0 / n_units), size=size).astype(float)
            bw = np.asarray((per_unit.T @ weights.T).T)
            bf, bb = bw[:, :E], bw[:, E:]
            bprior = np.where(_strong(ei, ej, bf, bb, m), 0.0, DEFAULT_PRIOR) if used == 0 \
                else np.full(size, used)
            met = (bf + bb) > 0
            add = bprior[:, None] / 2 * met
            logs, _ = _mm_edges(ei, ej, bf + add, bb + add, m, start=strength[idx])
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
    for c, (judge, fmt, decoding) in enumerate(cells.iter_rows()):
        cell = calls.filter((pl.col("judge") == judge) & (pl.col("format") == fmt) & (pl.col("decoding") == decoding))
        for o, order in enumerate(ORDERS):
            part = cell if order == "both" else cell.filter(~pl.col("swapped"))
            if part.height == 0:
                continue
            rng = np.random.default_rng([seed, c, o])
            if by == "candidate_id":
                out = _rank_group(part, n_boot, rng, prior, "prompt_id") \
                    .with_columns(pl.lit(None, pl.String).alias("prompt_id"))
            else:
                out = pl.concat([_rank_group(g, n_boot, rng, prior, "_call")
                                 .with_columns(pl.lit(pid).alias("prompt_id"))
                                 for (pid,), g in part.group_by("prompt_id", maintain_order=True)])
            frames.append(out.with_columns(pl.lit(judge).alias("judge"), pl.lit(fmt).alias("format"),
                                           pl.lit(decoding).alias("decoding"), pl.lit(order).alias("order")))
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
    with connect(db) as con:
        calls = query(con, "rank_calls", pool_id=pool_id(con, pool))
    return rank_calls(calls, by=by, n_boot=n_boot, seed=seed, prior=prior)
