"""The style-controlled fit's numerics (audit._style's model): Newton's method on the pairs, sparse in the
systems, batched over bootstrap resamples, with a ridge penalty when asked and the parameters a design
cannot tell apart held at 0 (held_out)."""

from __future__ import annotations

from typing import Callable

import numpy as np
from scipy.sparse import csr_matrix
from scipy.special import expit

TOL = 1e-10
BOOT_TOL = 1e-8         # bootstrap refits start from the full fit and feed percentiles only
MAX_ITER = 200
BOOT_MAX_ITER = 25
DIVERGING = 1e-4         # a parameter whose last step is larger, in a fit that did not converge, is unbounded
SETTLED = 15.0           # |the slot, a strength or a coefficient| beyond it (e^15 odds): a separation (finite_fit)
RIDGE = 1e-10            # numerical only: keeps a column without information (a system absent
                         # from a resample) from making the Newton system singular


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
    when w is (B, N); `held` (held_out) parameters stay at 0 (their numbers are not the calls'). A
    single fit (w None or (N,)) adds "finite": whether it has a finite maximum (finite_fit; a ridge
    fit that converged always has)."""
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
    out = {"slot": slot, "beta": beta, "gamma": gamma, "theta": theta, "converged": ok}
    if np.ndim(w) < 2:
        out.update(slot=slot[0], beta=beta[0], gamma=gamma[0])
        used = np.ones(np.size(a), bool) if w is None else np.asarray(w) > 0
        z2 = np.asarray(z, float).reshape(len(a), -1)
        out["finite"] = penalty > 0 and bool(ok) or finite_fit(out, lambda: separated(
            np.asarray(a)[used], np.asarray(b)[used], np.asarray(y, float)[used], z2[used], n,
            np.zeros(np.size(theta), bool) if held is None else np.asarray(held, bool)))
    return out


def _boot_fit(a, b, y, z, n, weights: np.ndarray, start: np.ndarray, penalty: float = 0.0,
              held: np.ndarray | None = None) -> dict:
    """fit_style over the rows of `weights` (B, N), in chunks that keep (chunk, k, N) small."""
    chunk = max(1, 4_000_000 // max(1, a.size))          # members a pass: (chunk, N) arrays stay small
    parts = [fit_style(a, b, y, z, n, weights[i:i + chunk], start, BOOT_MAX_ITER, penalty, held)
             for i in range(0, weights.shape[0], chunk)]
    return {key: np.concatenate([p[key] for p in parts]) for key in ("slot", "beta", "gamma", "converged")}


def separated(a: np.ndarray, b: np.ndarray, y: np.ndarray, z: np.ndarray, n: int, held: np.ndarray) -> bool:
    """Whether the rows' outcomes are separated: some direction d of the parameters not held (held_out)
    with x d >= 0 on every row won by slot A (y = 1), <= 0 on every row won by slot B (y = 0), = 0 on
    every tie (worth half a win each way) and not 0 on all of them, so the likelihood grows without bound
    along d and has no finite maximum (Albert and Anderson's condition). A linear programme on the
    distinct rows (weights do not matter): maximise sum_i s_i x_i d (s = +1 where y = 1, -1 where y = 0)
    within the box |d| <= 1; separated when the maximum exceeds 1e-6."""
    from scipy.optimize import linprog
    from scipy.sparse import csr_matrix as sparse, hstack
    rows = np.unique(np.column_stack([a, b, y, z]), axis=0)
    a_, b_, y_, z_ = rows[:, 0].astype(np.int64), rows[:, 1].astype(np.int64), rows[:, 2], rows[:, 3:]
    idx = np.arange(a_.size)
    systems = sparse((np.concatenate([np.ones(a_.size), -np.ones(a_.size)]),
                      (np.concatenate([idx, idx]), np.concatenate([a_, b_]))), shape=(a_.size, n))[:, 1:]
    x = hstack([sparse(np.ones((a_.size, 1))), systems, sparse(z_)]).tocsr()[:, np.flatnonzero(~held)]
    sign = np.where(y_ == 1.0, 1.0, np.where(y_ == 0.0, -1.0, 0.0))
    won, tie = sign != 0, sign == 0
    c = -(x[won].T @ sign[won])
    out = linprog(c, A_ub=-(x[won].multiply(sign[won][:, None])).tocsr() if won.any() else None,
                  b_ub=np.zeros(int(won.sum())) if won.any() else None,
                  A_eq=x[tie] if tie.any() else None, b_eq=np.zeros(int(tie.sum())) if tie.any() else None,
                  bounds=(-1.0, 1.0), method="highs")
    return bool(out.status == 0 and -out.fun > 1e-6)


def finite_fit(fit: dict, separation: Callable[[], bool]) -> bool:
    """Whether a single fit_style fit has a finite maximum: it converged, and where a number (the slot, a
    centred strength, a coefficient) lies beyond SETTLED, `separation()` (separated, on the fit's rows)
    says the outcomes are not separated. Under a separation Newton either keeps moving until MAX_ITER or,
    where the rows stand for many calls, stops once a separating row's chance rounds to 1 (its terms to
    0), some 25-40 log-odds out: where exactly is the rounding's, so such a fit is reported as having
    none, by the calls one by one and by grouped rows alike; a finite maximum beyond 15 (a strong length
    preference on few prompts) keeps its numbers."""
    if not fit["converged"]:
        return False
    numbers = np.concatenate([np.atleast_1d(fit["slot"]), fit["beta"], fit["gamma"]])
    return bool(np.all(np.abs(numbers) <= SETTLED)) or not separation()
