"""Style-controlled rankings (docs/metrics.md#rankings-bradley-terry, Style control).

Per judge x comparative format x decoding, every parsed call between two different systems
(candidate_ids) is one row with outcome y = 1 (margin > 0, slot A preferred), 0 (< 0) or 0.5 (a
tie). The style of a response is counted once (`style_counts`): its length in characters, and,
after removing fenced code blocks, its header lines, list-item lines and bold spans. A row's
features (`style_features`) are the normalised differences A - B, standardised over the cell's rows
(mean 0, population sd 1; a feature with sd 0 is dropped). The model

    logit P(y) = slot + beta[sys(A)] - beta[sys(B)] + sum_f gamma_f x_f

is fitted by maximum likelihood with soft labels (binary cross-entropy), no penalty (or, asked for, a ridge
penalty: `penalty`, labelled as such wherever shown), by Newton's
method (`newton_pairs`: batched over bootstrap resamples, sparse in the system columns, step
halving where a step lowers the likelihood); beta is centred to mean 0. `strength_raw` is beta of the same model without the style
features. Intervals: 95% percentile bootstrap resampling the cell's prompts (1,000, seeded by the
cell's identity), each resample refitted from the full fit.

Human labels on the pairs the judge compared give the same fit on the human rows (y = 1, 0, 0.5
for A, B, tie; one row per annotator), with the features on the judge cell's scale (its means and
sds), so that judge - human (`excess`) compares like with like; the same prompt resamples serve
both fits, which makes the excess's bootstrap a paired one.

Where the cell's comparisons cannot tell a parameter apart from the others (`held_out`: an anchor
always in slot B makes the slot effect and the anchor's strength one parameter; a feature that is a
combination of the slot and the systems' columns), it is held at 0 and reported null, the rest fitted
without it, and the slot row's `why` says so (audit._style_why.why_held): the systems' columns are
kept first (those of one connected group are always told apart), then the slot, then the features in
FEATURES order, each only where it is not a combination of those kept before it. So an anchored
cell is fitted without the slot effect, which the anchor's strength then includes. The same
parameters are held in every bootstrap resample (a resample's comparisons are a subset of the
cell's, so they cannot tell more apart).

Without a penalty the maximum-likelihood fit is finite only when no system or feature separates the
outcomes (a system that never lost, a length difference that always wins: small cells). Newton's
method then never settles; such a fit is reported as `converged` = false with null numbers, not as
the huge values it wandered to. In a resample without a finite fit (`boot_unconverged` counts them) the
parameters a separation drives away (still moving when Newton stops) count as +-infinity, the
settled ones as they are; an interval end that such draws reach is infinite.

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
from ._read import reading
from ._rank import _ranks       # 1 = strongest, equal strengths by id: as rank orders them
from ._style_why import why_held, why_no_fit

FEATURES = ("length", "headers", "lists", "bold")
COUNTS = ("chars", "headers", "lists", "bold")
STYLE_COLUMNS = ["judge", "format", "decoding", "part", "name", "value", "lo", "hi", "value_raw",
                 "rank", "rank_raw", "n", "converged", "boot_unconverged", "why"]
FENCE = re.compile(r"```.*?```", re.S)                 # a fenced code block (``` to the next ```)
HEADER = re.compile(r"#{1,6}\s")
LIST_ITEM = re.compile(r"\s*([-*+]|\d+\.)\s")
BOLD = re.compile(r"\*\*[^*\n]+\*\*|__[^_\n]+__")
TOL = 1e-10
BOOT_TOL = 1e-8         # bootstrap refits start from the full fit and feed percentiles only
MAX_ITER = 200
BOOT_MAX_ITER = 25
DIVERGING = 1e-4         # a parameter whose last step is larger, in a fit that did not converge, is unbounded
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


def _pair_operators(a: np.ndarray, b: np.ndarray, n: int) -> tuple[csr_matrix, csr_matrix]:
    """S (n - 1, N): row j holds +1 where system j is in slot A and -1 where in slot B (reference
    coding: system 0 has no row), so S @ v sums v over each system's rows with its sign; P
    ((n - 1)^2, N): the same for the outer products d d^T, d = e_A - e_B, so P @ s is the
    system block of X^T diag(s) X."""
    rows = np.arange(a.size)
    full = csr_matrix((np.concatenate([np.ones(a.size), -np.ones(b.size)]),
                       (np.concatenate([a, b]), np.concatenate([rows, rows]))), shape=(n, a.size))[1:]
    idx = np.concatenate([a * n + a, b * n + b, a * n + b, b * n + a])
    val = np.concatenate([np.ones(a.size), np.ones(a.size), -np.ones(a.size), -np.ones(a.size)])
    outer = csr_matrix((val, (idx, np.tile(rows, 4))), shape=(n * n, a.size))
    keep = (np.arange(n * n) // n > 0) & (np.arange(n * n) % n > 0)
    return full, outer[np.flatnonzero(keep)]


def penalty_matrix(n: int, q: int, penalty: float) -> np.ndarray:
    """Lambda of the ridge term theta' Lambda theta / 2 over theta = (slot, beta_1..beta_{n-1}, gamma):
    penalty x (slot^2 + sum_i (beta_i - mean beta)^2 over all n systems (beta_0 = 0) + |gamma|^2), so
    the strengths shrink toward their mean, not toward system 0."""
    m = n - 1
    lam = np.zeros((1 + m + q, 1 + m + q))
    lam[0, 0] = 1.0
    lam[1:1 + m, 1:1 + m] = np.eye(m) - 1.0 / n
    lam[1 + m:, 1 + m:] = np.eye(q)
    return penalty * lam


def gram(a: np.ndarray, b: np.ndarray, z: np.ndarray, n: int, w: np.ndarray | None) -> np.ndarray:
    """X^T diag(w) X of the design X = [1, e_A - e_B (reference coding), z] of the rows, each counted w
    times (None: once), without forming X."""
    w = np.ones(np.size(a)) if w is None else np.asarray(w, float)
    S, P = _pair_operators(np.asarray(a), np.asarray(b), n)
    m, q = n - 1, z.shape[1]
    g = np.empty((1 + m + q, 1 + m + q))
    g[0, 0] = w.sum()
    g[0, 1:1 + m] = g[1:1 + m, 0] = S @ w
    g[0, 1 + m:] = g[1 + m:, 0] = w @ z
    g[1:1 + m, 1:1 + m] = (P @ w).reshape(m, m)
    for c in range(q):
        g[1:1 + m, 1 + m + c] = g[1 + m + c, 1:1 + m] = S @ (w * z[:, c])
    g[1 + m:, 1 + m:] = (z * w[:, None]).T @ z
    return g


ALIASED = 1e-9      # a column whose share not explained by the columns kept before it (1 - R^2) is below it: held


def held_out(a: np.ndarray, b: np.ndarray, z: np.ndarray, n: int, w: np.ndarray | None) -> np.ndarray:
    """(k,) bool over theta = (slot, beta_1..beta_{n-1}, gamma): the parameters the rows (each counted w
    times) cannot tell apart from those kept before them, in the order system columns, slot, features.
    A column is kept where 1 - R^2 of its regression on the kept columns (in the weighted Gram matrix
    scaled to unit diagonal) exceeds ALIASED; a column of zeros is held. Weights scale the Gram matrix
    but not which columns are combinations of others: the calls one by one and grouped rows standing
    for them hold the same parameters."""
    g = gram(a, b, z, n, w)
    k = g.shape[0]
    d = np.sqrt(np.diag(g))
    held = d <= 0
    scaled = g / np.outer(np.where(held, 1.0, d), np.where(held, 1.0, d))
    kept: list[int] = []
    chol = np.zeros((0, 0))                                 # Cholesky factor of scaled[kept][:, kept]
    for j in [*range(1, n), 0, *range(n, k)]:
        if held[j]:
            continue
        v = np.linalg.solve(chol, scaled[kept, j]) if kept else np.zeros(0)     # triangular: L v = G[K, j]
        rest = scaled[j, j] - v @ v
        if rest <= ALIASED:
            held[j] = True
            continue
        chol = np.block([[chol, np.zeros((len(kept), 1))], [v[None, :], np.array([[np.sqrt(rest)]])]])
        kept.append(j)
    return held


def newton_pairs(a: np.ndarray, b: np.ndarray, n: int, z: np.ndarray, y: np.ndarray,
                 w: np.ndarray | None = None, start: np.ndarray | None = None, tol: float = TOL,
                 max_iter: int = MAX_ITER, penalty: float = 0.0,
                 held: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Maximum-likelihood theta = (slot, beta_1..beta_{n-1}, gamma) of logit P(y) = slot +
    beta[a] - beta[b] + z gamma (beta_0 = 0) with soft labels y in [0, 1] and row weights w ((B, N):
    one fit per member; None: one fit, weight 1): Newton's method with step halving, each member
    until its largest step is below tol, without forming the design matrix: the system columns have two non-zeros a
    row, so the gradient and the Hessian's blocks are sparse sums (O(N) a member, not O(N k^2)).
    Same steps, step halving and result as the plain dense Newton on the design matrix [1, e_A -
    e_B (reference coding), z] (tests/audit/test_style.py: newton(design(...)), which it must equal).
    Also returns, per member and parameter, whether it was still moving
    (last step > DIVERGING) when the member stopped unconverged: the parameters a separation
    drives to infinity, while the others have settled. penalty > 0 maximises the likelihood minus
    theta' Lambda theta / 2 (penalty_matrix): a ridge fit, finite under separation too. `held` ((k,)
    bool, held_out): parameters kept at their start (0 without one): their gradient and Hessian rows
    are zeroed (the Hessian's diagonal 1), so the step moves the others alone."""
    single = w is None or np.ndim(w) == 1                 # (N,): one fit of rows that stand for w rows each
    w = np.ones((1, y.size)) if w is None else np.atleast_2d(np.asarray(w, float))
    q, m = z.shape[1], n - 1
    k = 1 + m + q
    S, P = _pair_operators(np.asarray(a), np.asarray(b), n)
    n_fit = w.shape[0]
    theta = np.zeros((n_fit, k)) if start is None else np.array(np.broadcast_to(start, (n_fit, k)), float)

    def eta_of(th):                                        # (B, N): x theta
        sys_full = np.column_stack([np.zeros(th.shape[0]), th[:, 1:1 + m]])
        return th[:, :1] + sys_full[:, a] - sys_full[:, b] + th[:, 1 + m:] @ z.T

    lam = penalty_matrix(n, q, penalty)

    def pen(th):                                           # (B,): theta' Lambda theta / 2
        return 0.5 * np.einsum("bi,ij,bj->b", th, lam, th)

    eta = eta_of(theta)
    ll = (w * (y * eta - np.logaddexp(0.0, eta))).sum(axis=1) - pen(theta)
    todo = np.arange(n_fit)
    done = np.zeros(n_fit, bool)
    last = np.zeros((n_fit, k))
    ridge = RIDGE * np.eye(k)
    held = np.zeros(k, bool) if held is None else np.asarray(held, bool)
    for _ in range(max_iter):
        ww, et = w[todo], eta[todo]
        p = expit(et)
        r, s = ww * (y - p), ww * p * (1 - p)
        grad = np.column_stack([r.sum(axis=1), (S @ r.T).T, r @ z]) - theta[todo] @ lam
        hess = np.empty((todo.size, k, k))
        hess[:, 0, 0] = s.sum(axis=1)
        hess[:, 0, 1:1 + m] = hess[:, 1:1 + m, 0] = (S @ s.T).T
        hess[:, 0, 1 + m:] = hess[:, 1 + m:, 0] = s @ z
        hess[:, 1:1 + m, 1:1 + m] = (P @ s.T).T.reshape(todo.size, m, m)
        for c in range(q):
            block = (S @ (s * z[:, c]).T).T
            hess[:, 1:1 + m, 1 + m + c] = hess[:, 1 + m + c, 1:1 + m] = block
        hess[:, 1 + m:, 1 + m:] = np.matmul(z.T[None] * s[:, None, :], z)
        hess = hess + ridge + lam
        if held.any():
            grad[:, held] = 0.0
            hess[:, held, :] = 0.0
            hess[:, :, held] = 0.0
            hess[:, held, held] = 1.0
        step = _newton_step(hess, grad)
        move = eta_of(step)                                  # x step
        scale = np.ones(todo.size)
        old = ll[todo]
        for _ in range(40):                                 # halve a step that lowers the likelihood
            trial = et + scale[:, None] * move
            new = (ww * (y * trial - np.logaddexp(0.0, trial))).sum(axis=1) - pen(theta[todo] + scale[:, None] * step)
            worse = new < old - 1e-12 * np.maximum(1.0, np.abs(old))
            if not worse.any():
                break
            scale = np.where(worse, scale / 2, scale)
        theta[todo] += scale[:, None] * step
        last[todo] = scale[:, None] * step
        eta[todo], ll[todo] = trial, new
        finished = np.abs(scale[:, None] * step).max(axis=1) < tol
        done[todo[finished]] = True
        todo = todo[~finished]
        if todo.size == 0:
            break
    moving = ~done[:, None] & (np.abs(last) > DIVERGING)
    return (theta[0] if single else theta), (done[0] if single else done), (moving[0] if single else moving)


def _newton_step(hess: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """Each member's Newton step, hess (B, k, k) against grad (B, k). Where the Hessian is singular in
    floating point, the least-squares step of smallest norm: a direction the calls cannot tell apart (an
    anchor always in slot B moves with the slot effect) keeps RIDGE's 1e-10 only while the counts are
    small, and a grouped row standing for millions of calls rounds it away (found at 10M candidates)."""
    try:
        return np.linalg.solve(hess, grad[..., None])[..., 0]
    except np.linalg.LinAlgError:
        return np.stack([np.linalg.lstsq(h, g, rcond=None)[0] for h, g in zip(hess, grad)])


def _split(theta: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """theta (B, k) -> slot (B,), beta centred (B, n), gamma (B, q)."""
    beta = np.column_stack([np.zeros(theta.shape[0]), theta[:, 1:n]])
    return theta[:, 0], beta - beta.mean(axis=1, keepdims=True), theta[:, n:]


def fit_style(a: np.ndarray, b: np.ndarray, y: np.ndarray, z: np.ndarray, n: int,
              w: np.ndarray | None = None, start: np.ndarray | None = None,
              max_iter: int = MAX_ITER, penalty: float = 0.0, held: np.ndarray | None = None) -> dict:
    """The style-controlled Bradley-Terry fit of n systems (codes a, b) on features z (N, q):
    {"slot", "beta" (centred), "gamma", "theta", "converged"}, each with a leading member axis
    when w is (B, N); `held` (held_out) parameters stay at 0 (their numbers are not the calls')."""
    theta, ok, moving = newton_pairs(np.asarray(a), np.asarray(b), n, np.asarray(z, float).reshape(len(a), -1),
                                     np.asarray(y, float), w, start, tol=BOOT_TOL if np.ndim(w) == 2 else TOL,
                                     max_iter=max_iter, penalty=penalty, held=held)
    slot, beta, gamma = _split(np.atleast_2d(theta), n)
    moving = np.atleast_2d(moving)
    # +-inf where a separation drives a parameter to infinity (its sign: the way it was moving);
    # one unbounded strength makes every centred strength unbounded
    direction = np.sign(np.atleast_2d(theta) - (0 if start is None else np.broadcast_to(start, moving.shape)))
    with np.errstate(invalid="ignore"):                    # 0 x inf where nothing moves: not used
        inf = np.where(moving, direction * np.inf, 0.0)
    slot = np.where(moving[:, 0], inf[:, 0], slot)
    beta = np.where(moving[:, 1:n].any(axis=1, keepdims=True),
                    np.where(beta >= 0, np.inf, -np.inf), beta)
    gamma = np.where(moving[:, n:], inf[:, n:], gamma)
    if np.ndim(w) < 2:
        slot, beta, gamma = slot[0], beta[0], gamma[0]
    return {"slot": slot, "beta": beta, "gamma": gamma, "theta": theta, "converged": ok}


def _boot_fit(a, b, y, z, n, weights: np.ndarray, start: np.ndarray, penalty: float = 0.0,
              held: np.ndarray | None = None) -> dict:
    """fit_style over the rows of `weights` (B, N), in chunks that keep (chunk, k, N) small."""
    chunk = max(1, 4_000_000 // max(1, a.size))          # members a pass: (chunk, N) arrays stay small
    parts = [fit_style(a, b, y, z, n, weights[i:i + chunk], start, BOOT_MAX_ITER, penalty, held)
             for i in range(0, weights.shape[0], chunk)]
    return {key: np.concatenate([p[key] for p in parts]) for key in ("slot", "beta", "gamma", "converged")}


def _codes(a_ids: list[str], b_ids: list[str]) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """Systems of the largest connected group, the rows inside it, and their codes."""
    ids = sorted(set(a_ids) | set(b_ids))
    code = {s: i for i, s in enumerate(ids)}
    a = np.array([code[s] for s in a_ids], np.int64)
    b = np.array([code[s] for s in b_ids], np.int64)
    graph = csr_matrix((np.ones(a.size), (a, b)), shape=(len(ids), len(ids)))
    _, group = connected_components(graph, directed=False)
    big = np.argmax(np.bincount(group))
    keep_sys = group == big
    remap = np.cumsum(keep_sys) - 1
    inside = keep_sys[a] & keep_sys[b]
    return [s for s, k in zip(ids, keep_sys) if k], inside, remap[a[inside]], remap[b[inside]]


def _outcome(value: np.ndarray) -> np.ndarray:
    return np.where(value > 0, 1.0, np.where(value < 0, 0.0, 0.5))


def _counts(frame: pl.DataFrame, side: str) -> np.ndarray:
    return frame.select([f"{side}_{c}" for c in COUNTS]).to_numpy().astype(float)


def _interval(draws: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """95% percentile interval (numpy's linear interpolation) of draws that may hold +-inf (a
    resample whose fit has no finite maximum in that parameter): an end whose interpolation
    touches an infinite draw is infinite. NaN without draws."""
    if draws.shape[0] == 0:
        nan = np.full(draws.shape[1:], np.nan)
        return nan, nan
    with np.errstate(invalid="ignore"):                    # an excess of two infinite draws is NaN: left out
        ends = np.nanpercentile(np.clip(draws, -1e300, 1e300), [2.5, 97.5], axis=0)
    ends = np.where(ends >= 1e200, np.inf, np.where(ends <= -1e200, -np.inf, ends))
    return ends[0], ends[1]


def _coefficient_rows(part: str, kept: np.ndarray, gamma: np.ndarray | None, draws: np.ndarray | None,
                      ok: np.ndarray | None, rows_n: int, converged: bool, held: np.ndarray | None = None) -> list[dict]:
    """One row per feature: gamma (null where the feature was dropped, held (held_out, per column of
    gamma) or the fit has no finite maximum) with its interval."""
    out, col = [], 0
    failed = int((~ok).sum()) if ok is not None else 0
    for f, keep in zip(FEATURES, kept):
        value = lo = hi = None
        if keep:
            if converged and not (held is not None and held[col]):
                value = float(gamma[col])
                if draws is not None:
                    lo, hi = (float(v) for v in _interval(draws[:, col]))
            col += 1
        out.append({"part": part, "name": f, "value": value, "lo": lo, "hi": hi, "n": rows_n,
                    "converged": converged, "boot_unconverged": failed})
    return out


def held_parameters(a: np.ndarray, b: np.ndarray, z: np.ndarray, n: int, w: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """held_out of the fit with the style features and of the one without (its slot alone)."""
    return held_out(a, b, z, n, w), held_out(a, b, z[:, :0], n, w)


def slot_why(ids: list[str], a: np.ndarray, b: np.ndarray, y: np.ndarray, w: np.ndarray | None, kept: np.ndarray,
             ok_fit: bool, held: np.ndarray) -> str | None:
    """The slot row's `why`: why the fit has no finite maximum (why_no_fit, over the rows each counted
    w times) and what was held (why_held); None when neither."""
    n = len(ids)
    names = [f for f, k in zip(FEATURES, kept) if k]
    words = []
    if not ok_fit:
        rep = np.ones(a.size, np.int64) if w is None else np.asarray(w).astype(np.int64)
        words.append(why_no_fit(ids, np.repeat(a, rep), np.repeat(b, rep), np.repeat(y, rep),
                                [f for f, k in zip(FEATURES, kept) if not k]))
    if held.any():
        words.append(why_held(ids, a, b, bool(held[0]), [f for f, h in zip(names, held[n:]) if h]))
    return " ".join(words) or None


def _style_cell(cell: pl.DataFrame, labels: pl.DataFrame | None, n_boot: int,
                rng: np.random.Generator, penalty: float = 0.0) -> list[dict]:
    """The rows of STYLE_COLUMNS (without the cell's identity) for one cell."""
    ids, inside, a, b = _codes(cell["a_id"].to_list(), cell["b_id"].to_list())
    cell = cell.filter(pl.Series(inside))
    n, big_n = len(ids), cell.height
    y = _outcome(cell["value"].to_numpy())
    raw = style_features(_counts(cell, "a"), _counts(cell, "b"))
    mean, sd, kept = standardise(raw)
    z = ((raw - mean) / sd)[:, kept]
    held, held_plain = held_parameters(a, b, z, n, None)
    fit = fit_style(a, b, y, z, n, penalty=penalty, held=held)
    plain = fit_style(a, b, y, np.zeros((big_n, 0)), n, penalty=penalty, held=held_plain)
    ok_fit = bool(fit["converged"])
    prompts, unit = np.unique(cell["prompt_id"].to_numpy().astype(str), return_inverse=True)
    counts = rng.multinomial(prompts.size, np.full(prompts.size, 1.0 / prompts.size), size=n_boot) \
        .astype(float) if n_boot > 0 else np.zeros((0, prompts.size))
    boot = _boot_fit(a, b, y, z, n, counts[:, unit], fit["theta"], penalty, held) if n_boot > 0 and ok_fit else None
    human = _human_rows(cell, labels, prompts, mean, sd, kept)
    return _cell_rows(ids, a, b, y, None, kept, fit, plain, boot, held, big_n, human, mean, sd, counts, n_boot,
                      penalty)


def _cell_rows(ids: list[str], a, b, y, w, kept, fit: dict, plain: dict, boot: dict | None, held: np.ndarray,
               big_n: int, human, mean, sd, counts: np.ndarray, n_boot: int, penalty: float) -> list[dict]:
    """A cell's rows from its fits, per call (_style_cell, w None) or grouped (_style_cells.style_fit,
    each row standing for w calls): the slot, the coefficients, the systems and the human parts."""
    n, ok_fit = len(ids), bool(fit["converged"])
    ok = boot["converged"] if boot else None
    slot_lo, slot_hi = _interval(boot["slot"]) if boot and not held[0] else (np.nan, np.nan)
    failed = int((~ok).sum()) if boot else 0
    rows = [{"part": "coefficient", "name": "slot", "value": float(fit["slot"]) if ok_fit and not held[0] else None,
             "lo": float(slot_lo), "hi": float(slot_hi), "n": big_n, "converged": ok_fit, "boot_unconverged": failed,
             "why": slot_why(ids, a, b, y, w, kept, ok_fit, held)}]
    rows += _coefficient_rows("coefficient", kept, fit["gamma"], boot["gamma"] if boot else None, ok, big_n, ok_fit,
                              held[n:])
    return rows + _system_and_human_rows(ids, fit, plain, boot, ok, failed, big_n, human, mean, sd, kept, counts,
                                         n_boot, penalty, held[n:])


def _system_and_human_rows(ids: list[str], fit: dict, plain: dict, boot: dict | None, ok, failed: int, big_n: int,
                           human, mean, sd, kept, counts: np.ndarray, n_boot: int, penalty: float,
                           held_f: np.ndarray) -> list[dict]:
    """The end of a cell's rows (_cell_rows): the systems, and the coefficients fitted to the humans and the
    judge's excess where `human` (_human_rows') is not None; held_f: the judge fit's features held (their
    excess is null too)."""
    n, ok_fit, ok_plain = len(ids), bool(fit["converged"]), bool(plain["converged"])
    lo, hi = _interval(boot["beta"]) if boot else (np.full(n, np.nan), np.full(n, np.nan))
    rank, rank_raw = _ranks(fit["beta"], ids), _ranks(plain["beta"], ids)
    rows = [{"part": "system", "name": s, "value": float(fit["beta"][i]) if ok_fit else None,
             "lo": float(lo[i]), "hi": float(hi[i]), "value_raw": float(plain["beta"][i]) if ok_plain else None,
             "rank": int(rank[i]) if ok_fit else None, "rank_raw": int(rank_raw[i]) if ok_plain else None,
             "n": big_n, "converged": ok_fit, "boot_unconverged": failed} for i, s in enumerate(ids)]
    if human is not None:
        h_cell, h_unit = human
        h_ids, h_in, ha, hb = _codes(h_cell["a_id"].to_list(), h_cell["b_id"].to_list())
        h_cell, h_unit = h_cell.filter(pl.Series(h_in)), h_unit[h_in]
        hz = ((style_features(_counts(h_cell, "a"), _counts(h_cell, "b")) - mean) / sd)[:, kept]
        hy = h_cell["y"].to_numpy()
        h_held = held_out(ha, hb, hz, len(h_ids), None)
        h_fit = fit_style(ha, hb, hy, hz, len(h_ids), penalty=penalty, held=h_held)
        ok_h = bool(h_fit["converged"])
        h_boot = _boot_fit(ha, hb, hy, hz, len(h_ids), counts[:, h_unit], h_fit["theta"], penalty, h_held) \
            if n_boot > 0 and ok_h else None
        h_ok = h_boot["converged"] if h_boot else None
        h_held_f = h_held[len(h_ids):]
        rows += _coefficient_rows("human", kept, h_fit["gamma"], h_boot["gamma"] if h_boot else None, h_ok,
                                  h_cell.height, ok_h, h_held_f)
        both = boot is not None and h_boot is not None
        with np.errstate(invalid="ignore"):                # inf - inf: NaN, left out of the interval
            excess = boot["gamma"] - h_boot["gamma"] if both else None
        rows += _coefficient_rows("excess", kept, fit["gamma"] - h_fit["gamma"], excess,
                                  ok & h_ok if both else None, h_cell.height, ok_fit and ok_h, held_f | h_held_f)
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
                     seed: int = 0, penalty: float = 0.0) -> pl.DataFrame:
    """Pure: the style-controlled fit per (judge, format, decoding) of `calls` (columns judge,
    format, [decoding,] prompt_id, a_id, b_id, value, and a_chars, a_headers, a_lists, a_bold,
    b_chars, ... from `style_counts`); `labels` (prompt_id, a_id, b_id, label, and the same count
    columns) gives the `human` and `excess` parts. Columns: STYLE_COLUMNS, one row per
    part = 'coefficient' (name slot, length, headers, lists, bold: gamma, null where dropped),
    'system' (name = the system: value = strength, value_raw = strength_raw, rank, rank_raw),
    'human' and 'excess' (judge - human) per feature; `n` = rows fitted (the human rows for
    'human' and 'excess'); lo, hi = 95% bootstrap interval over prompts; `converged` = the fit of
    the row's part has a finite maximum (else its numbers are null); `boot_unconverged` =
    resamples without one (their unbounded parameters count as +-inf in the interval); `why` (the
    slot row of a cell without a finite fit) = the reasons in words (audit._style_why.why_no_fit).
    penalty > 0: the ridge fit (newton_pairs), labelled as such by whoever shows it."""
    if "decoding" not in calls.columns:
        calls = calls.with_columns(pl.lit("greedy").alias("decoding"))
    frames = []
    for (judge, fmt, decoding), cell in calls.group_by("judge", "format", "decoding", maintain_order=True):
        rng = cell_rng(seed, judge, fmt, decoding, "style")
        rows = _style_cell(cell, labels, n_boot, rng, penalty)
        frames.append(pl.DataFrame(rows, schema={c: t for c, t in _SCHEMA.items() if c not in ("judge", "format", "decoding")})
                      .with_columns(pl.lit(judge).alias("judge"), pl.lit(fmt).alias("format"),
                                    pl.lit(decoding).alias("decoding")))
    if not frames:
        return pl.DataFrame(schema=_SCHEMA)
    return pl.concat(frames).select(STYLE_COLUMNS).with_columns(pl.selectors.float().fill_nan(None)) \
        .sort("judge", "format", "decoding", maintain_order=True)


_SCHEMA = {"judge": pl.String, "format": pl.String, "decoding": pl.String, "part": pl.String,
           "name": pl.String, "value": pl.Float64, "lo": pl.Float64, "hi": pl.Float64,
           "value_raw": pl.Float64, "rank": pl.Int64, "rank_raw": pl.Int64, "n": pl.Int64,
           "converged": pl.Boolean, "boot_unconverged": pl.Int64, "why": pl.String}


def _with_counts(frame: pl.DataFrame, counts: pl.DataFrame) -> pl.DataFrame:
    for side in ("a", "b"):
        frame = frame.join(counts.rename({c: f"{side}_{c}" for c in counts.columns}),
                           left_on=f"{side}_idx", right_on=f"{side}_cand_idx", how="left")
    return frame


def style_rank(db: str | os.PathLike | None, pool: str, n_boot: int = 1000, seed: int = 0,
               cell: tuple[str, str, str] | None = None, penalty: float = 0.0) -> pl.DataFrame:
    """Style-controlled Bradley-Terry fits per (judge, comparative format, decoding) of the pool,
    over systems (candidate_ids), with the pool's stored human labels as the `human` comparison.
    Columns: judge, format, decoding, part (coefficient | system | human | excess), name, value,
    lo, hi, value_raw (strength_raw, systems only), rank, rank_raw, n, converged, boot_unconverged, why
    (see style_rank_calls). `cell` = (judge, format, decoding) fits that cell alone, with the
    numbers it has among all cells (each cell's bootstrap has its own seeded stream)."""
    with reading(db) as read:
        pid = read.pool_id(pool)
        texts = read.frame("style_texts", pool_id=pid)
        labels = read.frame("style_labels", pool_id=pid)
        cells = read.frame("style_cells", pool_id=pid)
    if cell is not None:
        cells = cells.filter((pl.col("judge") == cell[0]) & (pl.col("format") == cell[1])
                             & (pl.col("decoding") == cell[2]))
    counts = np.array([style_counts(t) for t in texts["response"].to_list()], dtype=np.int64).reshape(-1, 4)
    table = pl.DataFrame({"cand_idx": texts["cand_idx"], **{c: counts[:, i] for i, c in enumerate(COUNTS)}})
    labels, frames = _with_counts(labels, table), []
    for judge_id, format_id, _, _, decoding in cells.iter_rows():
        with reading(db) as read:      # a cell's calls at a time, the file let go while they are fitted
            calls = read.frame("style_cell_calls", pool_id=pid, judge_id=judge_id, format_id=format_id, decoding=decoding)
        frames.append(style_rank_calls(_with_counts(calls, table), labels, n_boot=n_boot, seed=seed, penalty=penalty))
    return pl.concat(frames) if frames else pl.DataFrame(schema=_SCHEMA)
