"""The price of being sure (docs/metrics.md#the-price-of-being-sure-plan): per cell, the human labels
still needed for an interval of ±H, by three plans, from the variances estimated so far:

- `classical` (the labels alone, drawn at random): n·(hw_c / H)² − n, hw_c the classical half-width
  now (corrected below); it needs no judge call;
- `ppi` `random` (PPI++ with labels drawn at random): n·(hw_p / H)² − n, hw_p the PPI++ half-width now
  (corrected below);
- `ppi` `active` (PPI++ with an active queue, audit/_label_queue.py): the k labels after which the n
  labels so far and k drawn by the queue give the variance that T = n·(hw_p / H)² random labels give,
  each queued label's rectifier variance being the random one's times the queue's design effect,
  deff = (mean(q)·mean(e²/q) − μ²) / (mean(e²) − μ²) over the cell's items, where e² is the mean
  squared residual (Y − λf)² of the labels in the item's bin of f, q the queue's rate for the item
  and μ the mean residual (a draw with probability ∝ q weighted by 1/q: Hansen–Hurwitz). Below the
  queue's 40 labels of warm-up it draws uniformly (deff = 1), so the plan is `random`'s.

Each starts from the Student-t half-width of the unbiased variance, hw·(t_{n−1}/z)·√(n/(n−1)), not the
estimate's normal one of the population variance, which a plan lands on only about half the time; a
PPI plan keeps apart the part z²·λ²·var(f_u)/N that labels do not narrow (F now, at the N items scored;
F' once the frame is scored): n·(hw² − F)/(H² − F') − n.
Past the queue's warm-up the active plan starts from the wider PPI half-width at the tuned λ and at
λ = 1 (the weighted estimate re-tunes λ, and it drifts towards 1). Each number of labels is rounded up
(0 once the interval is narrow enough). A PPI plan also needs the
judge's verdicts on the items it has not scored yet (`calls_needed`, one call each). Prices: a label's
from judgeaudit.toml's `[prices] human_label`, a call's the cell's cost so far per call (its tokens at
the judge's prices, as the leaderboard counts them). The cheapest plan comes first (by its cost, then
its labels).
"""

from __future__ import annotations

import math
import os

import numpy as np
import polars as pl
from scipy.stats import t as student_t

from ._estimate import classical_mean, ppi_mean, z_value
from ._judges import cell_cost
from ._label_queue import BINS, MIN_PER_BIN, WARM_UP, bins, residual_rates
from ._read import AuditError, reading
from ._worth import TARGETS
from ._worth_cells import cell_arrays

PLAN_TYPE = pl.Struct({"method": pl.String, "queue": pl.String, "half_width": pl.Float64,
                       "labels_needed": pl.Int64, "label_cost_usd": pl.Float64, "calls_needed": pl.Int64,
                       "call_cost_usd": pl.Float64, "cost_usd": pl.Float64, "reachable": pl.Boolean})
PLAN_SCHEMA = {"judge": pl.String, "format": pl.String, "decoding": pl.String, "target": pl.String,
               "system": pl.String, "n_labelled": pl.Int64, "n_items": pl.Int64, "n_frame": pl.Int64,
               "half_width": pl.Float64, "labels_needed": pl.Int64, "cost_usd": pl.Float64, "plan": pl.String,
               "plans": pl.List(PLAN_TYPE), "reason": pl.String}
PLAN_COLUMNS = list(PLAN_SCHEMA)


def small_sample(n: int, alpha: float = 0.05) -> float:
    """(t_{n−1} / z)·√(n / (n − 1)): the factor that takes a half-width of the normal quantile and the
    population variance (ppi-python's, which `estimate` prints) to the Student-t one of the unbiased
    variance, the half-width the plan starts from."""
    if n < 2:
        return 1.0
    return float(student_t.ppf(1 - alpha / 2, n - 1) / z_value(alpha) * math.sqrt(n / (n - 1)))


def labels_to_reach(n: int, now: float | None, target: float, fixed: float = 0.0) -> int | None:
    """⌈n·(now / target)² − n⌉, at least 0: the labels to add so that a half-width falling as 1/√n
    goes from `now` to `target`. `fixed` (a squared half-width) is the part that labels do not
    narrow (PPI's λ²·var(f_u)/N): then now² = fixed + v/n and the labels are n·(now² − fixed) /
    (target² − fixed) − n, None where target² ≤ fixed (no number of labels reaches it)."""
    if now is None or not n:
        return None
    if fixed <= 0:
        return max(0, math.ceil(n * (now / target) ** 2 - n - 1e-9))
    if target ** 2 <= fixed:
        return None
    return max(0, math.ceil(n * (now ** 2 - fixed) / (target ** 2 - fixed) - n - 1e-9))


def active_effect(y: np.ndarray, f_lab: np.ndarray, f_all: np.ndarray, lam: float) -> float:
    """The active queue's design effect on the rectifier's variance (the module's doc), 1 before the
    queue's warm-up or where the residuals do not vary."""
    y, f_lab, f_all = (np.asarray(a, dtype=float) for a in (y, f_lab, f_all))
    if y.size < WARM_UP:
        return 1.0
    r = y - lam * f_lab
    sq, b = r ** 2, bins(f_lab)
    count = np.bincount(b, minlength=BINS)
    total = np.bincount(b, weights=sq, minlength=BINS)
    msr = np.where(count >= MIN_PER_BIN, total / np.maximum(count, 1), sq.mean())
    e2 = msr[bins(f_all)]
    q = residual_rates(f_all, f_lab, y)
    mu2 = r.mean() ** 2
    uniform = e2.mean() - mu2
    active = q.mean() * (e2 / q).mean() - mu2
    return float(active / uniform) if uniform > 0 and active > 0 else 1.0


def active_labels(n: int, random_needed: int, deff: float) -> int:
    """The labels an active queue adds where a random draw would add `random_needed`: with T = n +
    random_needed (n·(hw / H)², the labels a uniform draw needs in all), the k for which n uniform
    labels and k drawn by the queue, each with the rectifier's variance times deff, reach the same
    variance: T·(n + k·deff) = (n + k)², k = ((T·deff − 2n) + √((T·deff − 2n)² − 4(n² − T·n))) / 2
    (k = T − n at deff = 1)."""
    t = n + random_needed
    b = t * deff - 2 * n
    k = (b + math.sqrt(max(b * b - 4 * (n * n - t * n), 0.0))) / 2
    return max(0, math.ceil(k - 1e-9))


def cell_plans(y, f_lab, f_all, w, alpha: float, target: float, n_frame: int, label_price: float | None,
               call_price: float | None) -> list[dict]:
    """The three plans of one cell (pure), cheapest first: [{method, queue, half_width (now),
    labels_needed, label_cost_usd, calls_needed, call_cost_usd, cost_usd, reachable (whether the frame
    holds that many items not yet labelled: n_frame − n)}]."""
    y, f_lab, f_all = (np.asarray(a, dtype=float) for a in (y, f_lab, f_all))
    n = y.size
    wts = None if w is None or np.all(np.asarray(w) == 1) else np.asarray(w, dtype=float)
    c = classical_mean(y, alpha, w=wts)
    p = ppi_mean(y, f_lab, f_all, alpha, w=wts)
    lam = p["lambda"]
    deff = active_effect(y, f_lab, f_all, lam)
    unscored = max(0, n_frame - f_all.size)
    # the half-widths the plan starts from: Student-t with the unbiased variance (small_sample); PPI's
    # part that labels do not narrow, z²·λ²·var(f_u)/N: now at the N scored, after at the frame's N
    grow = small_sample(n, alpha)
    spread = z_value(alpha) ** 2 * float(np.var(f_all)) if f_all.size else 0.0
    now_n, after_n = max(f_all.size, 1), max(f_all.size, n_frame, 1)
    # once the queue's unequal weights are in, the estimate re-tunes λ with them and ppi-python's tuning
    # then drifts towards 1: past the warm-up (where the queue follows the residuals) the active plan
    # starts from the wider of the half-widths at λ̂ and at λ = 1
    start_active = (p["half_width"], lam)
    if y.size >= WARM_UP and p["half_width"] is not None:
        one = ppi_mean(y, f_lab, f_all, alpha, w=wts, lam=1.0)["half_width"]
        start_active = max(start_active, (one, 1.0))
    plans = []
    for method, queue, hw, (start, at) in (("classical", "random", c["half_width"], (c["half_width"], 0.0)),
                                           ("ppi", "random", p["half_width"], (p["half_width"], lam)),
                                           ("ppi", "active", p["half_width"], start_active)):
        calls = 0 if method == "classical" else unscored
        part, after = spread * (at or 0.0) ** 2 / now_n, spread * (at or 0.0) ** 2 / after_n
        need = None if start is None else labels_to_reach(
            n, math.sqrt(after + max(start ** 2 - part, 0.0) * grow ** 2), target, after)
        if queue == "active" and need:
            need = active_labels(n, need, deff)
        label_cost = None if label_price is None or need is None else need * label_price
        call_cost = 0.0 if calls == 0 else None if call_price is None else calls * call_price
        plans.append({"method": method, "queue": queue, "half_width": hw, "labels_needed": need,
                      "label_cost_usd": label_cost, "calls_needed": calls, "call_cost_usd": call_cost,
                      "cost_usd": None if label_cost is None or call_cost is None else label_cost + call_cost,
                      "reachable": need is not None and need <= max(0, n_frame - n)})
    order = {("classical", "random"): 0, ("ppi", "random"): 1, ("ppi", "active"): 2}
    return sorted(plans, key=lambda r: (r["cost_usd"] is None, r["cost_usd"] or 0.0, r["labels_needed"] is None,
                                        r["labels_needed"] or 0, r["calls_needed"], order[r["method"], r["queue"]]))


def call_prices(db, pool: str, prices: dict) -> dict:
    """{(judge, format, decoding): USD per call}: the cell's cost so far over its calls (a jury: over
    its keys, each paid by its members), None without a price or token counts."""
    with reading(db) as read:
        usage = read.frame("judge_usage", pool_id=read.pool_id(pool))
    out = {}
    for (judge, fmt, dec), g in usage.group_by(["judge", "format", "decoding"], maintain_order=True):
        cost, _ = cell_cost(g.to_dicts(), prices) if prices else (None, "no prices")
        out[judge, fmt, dec] = None if cost is None else cost / max(int(g["n_calls"].max()), 1)
    return out


def plan(db: str | os.PathLike | None, pool: str, target: str, half_width: float, baseline: str | None = None,
         alpha: float = 0.05, prices: dict | None = None, label_price: float | None = None,
         arrays: list | None = None) -> pl.DataFrame:
    """One row per cell (and, for `winrate`, per system against the baseline), PLAN_COLUMNS: judge,
    format, decoding, target, system; n_labelled, n_items (the items the cell scored), n_frame (the
    items of the pool: its candidates, or the prompts the system shares with the baseline);
    half_width (H, as asked); labels_needed, cost_usd, plan ("method/queue"): the cheapest plan's;
    plans (each plan: method, queue, half_width now, labels_needed, label_cost_usd, calls_needed,
    call_cost_usd, cost_usd, reachable; cheapest first); reason (why there is no plan: fewer than 2 labels).
    arrays: cell_arrays(db, pool, target, baseline) where the caller read it already."""
    if target not in TARGETS:
        raise AuditError(f"--target {target}: use accept or winrate")
    if not half_width > 0:
        raise AuditError(f"--half-width {half_width}: must be above 0")
    if not 0 < alpha < 1:
        raise AuditError(f"--alpha {alpha}: must be between 0 and 1")
    cells = cell_arrays(db, pool, target, baseline) if arrays is None else arrays
    base = cells[0][0].get("baseline") if cells else baseline
    with reading(db) as read:
        frames = dict(read.frame("plan_items", pool_id=read.pool_id(pool),
                                 baseline=base if target == "winrate" else None).iter_rows())
    per_call = call_prices(db, pool, prices or {})
    rows = []
    for key, a in cells:
        n = int(a["y"].size)
        row = {k: key.get(k) for k in ("judge", "format", "decoding", "target", "system")}
        row |= {"n_labelled": n, "n_items": int(a["f_all"].size), "n_frame": int(frames.get(key.get("system"), 0)),
                "half_width": half_width, "plans": [], "reason": None}
        if n < 2:
            row["reason"] = f"{n} human label{'s' if n != 1 else ''} of this cell's items: no variance to plan from"
        else:
            row["plans"] = cell_plans(a["y"], a["f_lab"], a["f_all"], a["w"], alpha, half_width, row["n_frame"],
                                      label_price, per_call.get((key["judge"], key["format"], key["decoding"])))
            best = row["plans"][0]
            row |= {"labels_needed": best["labels_needed"], "cost_usd": best["cost_usd"],
                    "plan": f"{best['method']}/{best['queue']}"}
        rows.append(row)
    rows.sort(key=lambda r: (r.get("cost_usd") is None, r.get("cost_usd") or 0.0,
                             r.get("labels_needed") is None, r.get("labels_needed") or 0))
    return pl.DataFrame([{c: r.get(c) for c in PLAN_COLUMNS} for r in rows], schema=PLAN_SCHEMA)
