"""Style-controlled rankings (DESIGN.md 'Repeats, style and confidence', style control).

Per judge x comparative format x decoding, every parsed call between two different systems
(candidate_ids) is one row with outcome y = 1 (margin > 0, slot A preferred), 0 (< 0) or 0.5 (a
tie). The style of a response is counted once (`style_counts`): its length in characters, and,
after removing fenced code blocks, its header lines, list-item lines and bold spans. A row's
features (`style_features`) are the normalised differences A - B, standardised over the cell's rows
(mean 0, population sd 1; a feature with sd 0 is dropped). The model

    logit P(y) = slot + beta[sys(A)] - beta[sys(B)] + sum_f gamma_f x_f

is fitted by maximum likelihood with soft labels (binary cross-entropy), no penalty, by Newton's
method (`newton`: batched over bootstrap resamples, step halving where a step lowers the
likelihood); beta is centred to mean 0. `strength_raw` is beta of the same model without the style
features. Intervals: 95% percentile bootstrap resampling the cell's prompts (1,000, seeded by the
cell's identity), each resample refitted from the full fit.

Human labels on the pairs the judge compared give the same fit on the human rows (y = 1, 0, 0.5
for A, B, tie; one row per annotator), with the features on the judge cell's scale (its means and
sds), so that judge - human (`excess`) compares like with like; the same prompt resamples serve
both fits, which makes the excess's bootstrap a paired one.

Only systems in the largest connected group of the cell's comparison graph can be placed on one
scale; rows with a system outside it are left out. A system that a resample does not contain keeps
its full-fit strength in that resample (its column has no information there).
"""

from __future__ import annotations

import os
import re

import numpy as np
import polars as pl
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components
from scipy.special import expit

from ._bias import cell_rng
from ._db import connect, pool_id, query

FEATURES = ("length", "headers", "lists", "bold")
COUNTS = ("chars", "headers", "lists", "bold")
STYLE_COLUMNS = ["judge", "format", "decoding", "part", "name", "value", "lo", "hi", "value_raw",
                 "rank", "rank_raw", "n"]
FENCE = re.compile(r"```.*?```", re.S)                 # a fenced code block (``` to the next ```)
HEADER = re.compile(r"#{1,6}\s")
LIST_ITEM = re.compile(r"\s*([-*+]|\d+\.)\s")
BOLD = re.compile(r"\*\*[^*\n]+\*\*|__[^_\n]+__")
TOL = 1e-10
BOOT_TOL = 1e-8         # bootstrap refits start from the full fit and feed percentiles only
MAX_ITER = 200
BOOT_MAX_ITER = 60
RIDGE = 1e-10            # numerical only: keeps a column without information (a system absent
                         # from a resample) from making the Newton system singular


def style_counts(text: str) -> tuple[int, int, int, int]:
    """(chars, headers, lists, bold) of one response: its length in characters; after removing
    fenced code blocks, the lines matching ^#{1,6}\\s, the lines matching ^\\s*([-*+]|\\d+\\.)\\s and
    the matches of \\*\\*[^*\\n]+\\*\\*|__[^_\\n]+__."""
    body = FENCE.sub("", text)
    lines = body.split("\n")
    return (len(text), sum(1 for line in lines if HEADER.match(line)),
            sum(1 for line in lines if LIST_ITEM.match(line)), len(BOLD.findall(body)))


def style_features(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Rows of counts (chars, headers, lists, bold) of slot A and slot B -> (N, 4) raw features:
    length = (chars_A - chars_B) / (chars_A + chars_B) (0 when both are empty); for each markdown
    count, d = count / (chars + 1) and feature = (d_A - d_B) / (d_A + d_B + 1)."""
    a, b = np.asarray(a, float).reshape(-1, 4), np.asarray(b, float).reshape(-1, 4)
    total = a[:, 0] + b[:, 0]
    length = np.divide(a[:, 0] - b[:, 0], total, out=np.zeros(len(a)), where=total > 0)
    da, db = a[:, 1:] / (a[:, :1] + 1), b[:, 1:] / (b[:, :1] + 1)
    return np.column_stack([length, (da - db) / (da + db + 1)])


def standardise(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per column: (mean, population sd, kept); a column with sd 0 is not kept."""
    mean, sd = x.mean(axis=0), x.std(axis=0)
    kept = sd > 1e-12 * np.maximum(1.0, np.abs(mean))
    return mean, np.where(kept, sd, 1.0), kept


def design(a: np.ndarray, b: np.ndarray, n: int, z: np.ndarray) -> np.ndarray:
    """(N, 1 + (n - 1) + q): the slot column of ones, system A minus system B in reference coding
    (system 0 is the reference), the standardised features."""
    rows = np.arange(a.size)
    d = np.zeros((a.size, n))
    np.add.at(d, (rows, a), 1.0)
    np.add.at(d, (rows, b), -1.0)
    return np.column_stack([np.ones(a.size), d[:, 1:], z])


def log_likelihood(theta: np.ndarray, x: np.ndarray, y: np.ndarray, w: np.ndarray | None = None) -> np.ndarray:
    """sum_i w_i (y_i eta_i - log(1 + e^eta_i)), eta = x theta: the soft-label Bernoulli
    log-likelihood (minus the binary cross-entropy). theta (k,) or (B, k); w (N,) or (B, N)."""
    eta = np.atleast_2d(theta) @ x.T
    ll = (1.0 if w is None else w) * (y * eta - np.logaddexp(0.0, eta))
    out = ll.sum(axis=-1)
    return out[0] if np.ndim(theta) == 1 else out


def newton(x: np.ndarray, y: np.ndarray, w: np.ndarray | None = None, start: np.ndarray | None = None,
           tol: float = TOL, max_iter: int = MAX_ITER) -> tuple[np.ndarray, np.ndarray]:
    """Maximum-likelihood theta of logit P(y) = x theta with soft labels y in [0, 1] and row weights
    w ((B, N): one fit per member; None: one fit, weight 1). Newton's method with step halving,
    each member until its largest step is below tol. Returns (theta (B, k) or (k,), converged)."""
    single = w is None
    w = np.ones((1, y.size)) if single else np.asarray(w, float)
    n_fit, k = w.shape[0], x.shape[1]
    theta = np.zeros((n_fit, k)) if start is None else np.array(np.broadcast_to(start, (n_fit, k)), float)
    eta = theta @ x.T
    ll = (w * (y * eta - np.logaddexp(0.0, eta))).sum(axis=1)
    todo = np.arange(n_fit)
    done = np.zeros(n_fit, bool)
    ridge = RIDGE * np.eye(k)
    for _ in range(max_iter):
        ww, et = w[todo], eta[todo]
        p = expit(et)
        grad = (ww * (y - p)) @ x
        hess = np.matmul(x.T[None] * (ww * p * (1 - p))[:, None, :], x) + ridge
        step = np.linalg.solve(hess, grad[..., None])[..., 0]
        move = step @ x.T
        scale = np.ones(todo.size)
        old = ll[todo]
        for _ in range(40):                        # halve a step that lowers the likelihood
            trial = et + scale[:, None] * move
            new = (ww * (y * trial - np.logaddexp(0.0, trial))).sum(axis=1)
            worse = new < old - 1e-12 * np.maximum(1.0, np.abs(old))
            if not worse.any():
                break
            scale = np.where(worse, scale / 2, scale)
        theta[todo] += scale[:, None] * step
        eta[todo], ll[todo] = trial, new
        finished = np.abs(scale[:, None] * step).max(axis=1) < tol
        done[todo[finished]] = True
        todo = todo[~finished]
        if todo.size == 0:
            break
    return (theta[0] if single else theta), (done[0] if single else done)


def _split(theta: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """theta (B, k) -> slot (B,), beta centred (B, n), gamma (B, q)."""
    beta = np.column_stack([np.zeros(theta.shape[0]), theta[:, 1:n]])
    return theta[:, 0], beta - beta.mean(axis=1, keepdims=True), theta[:, n:]


def fit_style(a: np.ndarray, b: np.ndarray, y: np.ndarray, z: np.ndarray, n: int,
              w: np.ndarray | None = None, start: np.ndarray | None = None,
              max_iter: int = MAX_ITER) -> dict:
    """The style-controlled Bradley-Terry fit of n systems (codes a, b) on features z (N, q):
    {"slot", "beta" (centred), "gamma", "theta", "converged"}, each with a leading member axis
    when w is (B, N)."""
    x = design(np.asarray(a), np.asarray(b), n, np.asarray(z, float).reshape(len(a), -1))
    theta, ok = newton(x, np.asarray(y, float), w, start, tol=TOL if w is None else BOOT_TOL, max_iter=max_iter)
    slot, beta, gamma = _split(np.atleast_2d(theta), n)
    if w is None:
        slot, beta, gamma = slot[0], beta[0], gamma[0]
    return {"slot": slot, "beta": beta, "gamma": gamma, "theta": theta, "converged": ok}


def _boot_fit(a, b, y, z, n, weights: np.ndarray, start: np.ndarray) -> dict:
    """fit_style over the rows of `weights` (B, N), in chunks that keep (chunk, k, N) small."""
    k = 1 + (n - 1) + z.shape[1]
    chunk = max(1, 20_000_000 // max(1, k * max(1, a.size)))
    parts = [fit_style(a, b, y, z, n, weights[i:i + chunk], start, BOOT_MAX_ITER)
             for i in range(0, weights.shape[0], chunk)]
    return {key: np.concatenate([p[key] for p in parts]) for key in ("slot", "beta", "gamma")}


def _codes(a_ids: list[str], b_ids: list[str]) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """Systems of the largest connected group, the rows inside it, and their codes."""
    ids = sorted(set(a_ids) | set(b_ids))
    code = {s: i for i, s in enumerate(ids)}
    a = np.array([code[s] for s in a_ids], np.int64)
    b = np.array([code[s] for s in b_ids], np.int64)
    graph = csr_matrix((np.ones(a.size), (a, b)), shape=(len(ids), len(ids)))
    _, label = connected_components(graph, directed=False)
    big = np.argmax(np.bincount(label))
    keep_sys = label == big
    remap = np.cumsum(keep_sys) - 1
    inside = keep_sys[a] & keep_sys[b]
    return [s for s, k in zip(ids, keep_sys) if k], inside, remap[a[inside]], remap[b[inside]]


def _outcome(value: np.ndarray) -> np.ndarray:
    return np.where(value > 0, 1.0, np.where(value < 0, 0.0, 0.5))


def _counts(frame: pl.DataFrame, side: str) -> np.ndarray:
    return frame.select([f"{side}_{c}" for c in COUNTS]).to_numpy().astype(float)


def _ranks(beta: np.ndarray, ids: list[str]) -> np.ndarray:
    order = sorted(range(len(ids)), key=lambda i: (-round(float(beta[i]), 12), ids[i]))
    ranks = np.zeros(len(ids), np.int64)
    ranks[order] = np.arange(1, len(ids) + 1)
    return ranks


def _interval(draws: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if draws.shape[0] == 0:
        nan = np.full(draws.shape[1:], np.nan)
        return nan, nan
    lo, hi = np.percentile(draws, [2.5, 97.5], axis=0)
    return lo, hi


def _style_cell(cell: pl.DataFrame, labels: pl.DataFrame | None, n_boot: int,
                rng: np.random.Generator) -> list[dict]:
    """The rows of STYLE_COLUMNS (without the cell's identity) for one cell."""
    ids, inside, a, b = _codes(cell["a_id"].to_list(), cell["b_id"].to_list())
    cell = cell.filter(pl.Series(inside))
    n, big_n = len(ids), cell.height
    y = _outcome(cell["value"].to_numpy())
    raw = style_features(_counts(cell, "a"), _counts(cell, "b"))
    mean, sd, kept = standardise(raw)
    z = ((raw - mean) / sd)[:, kept]
    fit = fit_style(a, b, y, z, n)
    plain = fit_style(a, b, y, np.zeros((big_n, 0)), n)
    prompts, unit = np.unique(cell["prompt_id"].to_numpy().astype(str), return_inverse=True)
    counts = rng.multinomial(prompts.size, np.full(prompts.size, 1.0 / prompts.size), size=n_boot) \
        .astype(float) if n_boot > 0 else np.zeros((0, prompts.size))
    boot = _boot_fit(a, b, y, z, n, counts[:, unit], fit["theta"]) if n_boot > 0 else None

    def coefficient_rows(part, gamma, draws, rows_n):
        out, col = [], 0
        for f, keep in zip(FEATURES, kept):
            value = lo = hi = None
            if keep:
                value = float(gamma[col])
                if draws is not None:
                    lo, hi = (float(v) for v in _interval(draws[:, col]))
                col += 1
            out.append({"part": part, "name": f, "value": value, "lo": lo, "hi": hi, "n": rows_n})
        return out

    rows = [{"part": "coefficient", "name": "slot", "value": float(fit["slot"]), "n": big_n,
             "lo": float(_interval(boot["slot"])[0]) if boot else None,
             "hi": float(_interval(boot["slot"])[1]) if boot else None}]
    rows += coefficient_rows("coefficient", fit["gamma"], boot["gamma"] if boot else None, big_n)
    lo, hi = _interval(boot["beta"]) if boot else (np.full(n, np.nan), np.full(n, np.nan))
    rank, rank_raw = _ranks(fit["beta"], ids), _ranks(plain["beta"], ids)
    for i, s in enumerate(ids):
        rows.append({"part": "system", "name": s, "value": float(fit["beta"][i]), "lo": float(lo[i]),
                     "hi": float(hi[i]), "value_raw": float(plain["beta"][i]), "rank": int(rank[i]),
                     "rank_raw": int(rank_raw[i]), "n": big_n})
    human = _human_rows(cell, labels, prompts, mean, sd, kept)
    if human is not None:
        h_cell, h_unit = human
        h_ids, h_in, ha, hb = _codes(h_cell["a_id"].to_list(), h_cell["b_id"].to_list())
        h_cell, h_unit = h_cell.filter(pl.Series(h_in)), h_unit[h_in]
        hz = ((style_features(_counts(h_cell, "a"), _counts(h_cell, "b")) - mean) / sd)[:, kept]
        hy = h_cell["y"].to_numpy()
        h_fit = fit_style(ha, hb, hy, hz, len(h_ids))
        h_boot = _boot_fit(ha, hb, hy, hz, len(h_ids), counts[:, h_unit], h_fit["theta"]) if boot else None
        rows += coefficient_rows("human", h_fit["gamma"], h_boot["gamma"] if h_boot else None, h_cell.height)
        rows += coefficient_rows("excess", fit["gamma"] - h_fit["gamma"],
                                 boot["gamma"] - h_boot["gamma"] if h_boot else None, h_cell.height)
    return rows


def _human_rows(cell: pl.DataFrame, labels: pl.DataFrame | None, prompts: np.ndarray, mean, sd, kept):
    """The human labels on the pairs (prompt, two systems, either order) the cell compared, with y
    and each row's prompt unit in the cell's bootstrap; None when there are none (or fewer than
    two systems)."""
    if labels is None or labels.height == 0:
        return None
    pair = pl.concat_str([pl.col("prompt_id"), pl.min_horizontal("a_id", "b_id"),
                          pl.max_horizontal("a_id", "b_id")], separator="\x1f").alias("k")
    judged = cell.select(pair)["k"].unique()
    h = labels.with_columns(pair).filter(pl.col("k").is_in(judged.implode()))
    if h.height == 0 or len(set(h["a_id"]) | set(h["b_id"])) < 2:
        return None
    h = h.with_columns(pl.col("label").str.to_lowercase().replace_strict(
        {"a": 1.0, "b": 0.0, "tie": 0.5}, default=None).alias("y")).filter(pl.col("y").is_not_null())
    if h.height == 0:
        return None
    unit = np.searchsorted(prompts, h["prompt_id"].to_numpy().astype(str))
    return h, unit


def style_rank_calls(calls: pl.DataFrame, labels: pl.DataFrame | None = None, n_boot: int = 1000,
                     seed: int = 0) -> pl.DataFrame:
    """Pure: the style-controlled fit per (judge, format, decoding) of `calls` (columns judge,
    format, [decoding,] prompt_id, a_id, b_id, value, and a_chars, a_headers, a_lists, a_bold,
    b_chars, ... from `style_counts`); `labels` (prompt_id, a_id, b_id, label, and the same count
    columns) gives the `human` and `excess` parts. Columns: STYLE_COLUMNS, one row per
    part = 'coefficient' (name slot, length, headers, lists, bold: gamma, null where dropped),
    'system' (name = the system: value = strength, value_raw = strength_raw, rank, rank_raw),
    'human' and 'excess' (judge - human) per feature; `n` = rows fitted (the human rows for
    'human' and 'excess'); lo, hi = 95% bootstrap interval over prompts."""
    if "decoding" not in calls.columns:
        calls = calls.with_columns(pl.lit("greedy").alias("decoding"))
    frames = []
    for (judge, fmt, decoding), cell in calls.group_by("judge", "format", "decoding", maintain_order=True):
        rng = cell_rng(seed, judge, fmt, decoding, "style")
        rows = _style_cell(cell, labels, n_boot, rng)
        frames.append(pl.DataFrame(rows, schema={c: t for c, t in _SCHEMA.items() if c not in ("judge", "format", "decoding")})
                      .with_columns(pl.lit(judge).alias("judge"), pl.lit(fmt).alias("format"),
                                    pl.lit(decoding).alias("decoding")))
    if not frames:
        return pl.DataFrame(schema=_SCHEMA)
    return pl.concat(frames).select(STYLE_COLUMNS).with_columns(pl.selectors.float().fill_nan(None)) \
        .sort("judge", "format", "decoding", maintain_order=True)


_SCHEMA = {"judge": pl.String, "format": pl.String, "decoding": pl.String, "part": pl.String,
           "name": pl.String, "value": pl.Float64, "lo": pl.Float64, "hi": pl.Float64,
           "value_raw": pl.Float64, "rank": pl.Int64, "rank_raw": pl.Int64, "n": pl.Int64}


def _with_counts(frame: pl.DataFrame, counts: pl.DataFrame) -> pl.DataFrame:
    for side in ("a", "b"):
        frame = frame.join(counts.rename({c: f"{side}_{c}" for c in counts.columns}),
                           left_on=f"{side}_idx", right_on=f"{side}_cand_idx", how="left")
    return frame


def style_rank(db: str | os.PathLike | None, pool: str, n_boot: int = 1000, seed: int = 0) -> pl.DataFrame:
    """Style-controlled Bradley-Terry fits per (judge, comparative format, decoding) of the pool,
    over systems (candidate_ids), with the pool's stored human labels as the `human` comparison.
    Columns: judge, format, decoding, part (coefficient | system | human | excess), name, value,
    lo, hi, value_raw (strength_raw, systems only), rank, rank_raw, n (see style_rank_calls)."""
    with connect(db) as con:
        pid = pool_id(con, pool)
        calls = query(con, "style_calls", pool_id=pid)
        texts = query(con, "style_texts", pool_id=pid)
        labels = query(con, "style_labels", pool_id=pid)
    counts = np.array([style_counts(t) for t in texts["response"].to_list()], dtype=np.int64).reshape(-1, 4)
    table = pl.DataFrame({"cand_idx": texts["cand_idx"], **{c: counts[:, i] for i, c in enumerate(COUNTS)}})
    return style_rank_calls(_with_counts(calls, table), _with_counts(labels, table), n_boot=n_boot, seed=seed)
