"""The judges' leaderboard (`judgeaudit judges`, the Judges page;
docs/command-line.md#judgeaudit-judges): one row per judge × format × decoding of the pool, juries
included, with what a practitioner weighs when choosing a judge: how often it parses, how well it agrees
with humans, its slot bias, length excess and flips, and what it costs in tokens, dollars and time.

Every quality column is read from the function that prints it for the same cell, with the same
defaults, so the leaderboard never disagrees with its source: parse_rate from `audit_cells` (sample
0; a jury's own cells), agreement / kappa / ece from `calibrate`, b from `bias`, length_excess from
`style_rank` (the judge's length coefficient minus the humans'), flip_rate from `consistency`. The
usage columns come from the stored calls (audit/sql/judge_usage.sql, judge_latency.sql): a jury pays
for its members' sample-0 calls, each at the member's price, and waits for its slowest member.
effective_labels comes from `audit.estimate` when the package has it (_effective_labels).

A missing value is null with its reason in `reasons` (no labels, no prices, no repeats, ...).
"""

from __future__ import annotations

import os

import numpy as np
import polars as pl

from ._bias import bias
from ._calibrate import calibrate, stored_labels
from ._cells import audit_cells
from ._consistency import consistency
from ._read import reading
from ._style_cells import style_rank
from ._worth_cells import estimate

KEY = ["judge", "format", "decoding"]
REASON_FIELDS = ("agreement", "ece", "b", "length_excess", "flip_rate", "tokens", "cost_usd", "latency",
                 "effective_labels")
JUDGES_COLUMNS = ["judge", "format", "decoding", "aggregate", "members", "kind", "n_verdicts", "parse_rate",
                  "n_labelled", "agreement", "kappa", "kappa_lo", "kappa_hi", "ece", "b", "b_lo", "b_hi",
                  "length_excess", "length_excess_lo", "length_excess_hi", "flip_rate", "tokens_in", "tokens_out",
                  "cost_usd", "cost_per_1000", "latency_ms_p50", "latency_ms_p95", "effective_labels", "on_front",
                  "reasons"]


def cell_cost(usage: list[dict], prices: dict) -> tuple[float | None, str | None]:
    """The dollars of a cell's calls: Σ over its payers of tokens_in × input + tokens_out × output
    (USD per million tokens, `prices[payer]`); (None, why) when a payer has no price or a call
    reports no tokens."""
    total = 0.0
    for row in usage:
        price = prices.get(row["payer"])
        if price is None:
            return None, f"no price for {row['payer']} in judgeaudit.toml"
        if row["n_with_tokens"] < row["n_calls"]:
            return None, f"{row['n_calls'] - row['n_with_tokens']} calls of {row['payer']} report no tokens"
        total += (row["tokens_in"] * price["input"] + row["tokens_out"] * price["output"]) / 1e6
    return total, None


def pareto_front(cost: np.ndarray, agreement: np.ndarray) -> np.ndarray:
    """Which points are on the front of high agreement at low cost: no other point has cost <= and
    agreement >= with one of them strict. A point missing either value is off it (False)."""
    ok = ~(np.isnan(cost) | np.isnan(agreement))
    front = np.zeros(cost.size, bool)
    for i in np.flatnonzero(ok):
        others = ok & (cost <= cost[i]) & (agreement >= agreement[i]) & ((cost < cost[i]) | (agreement > agreement[i]))
        front[i] = not others.any()
    return front


def _effective_labels(db, pool: str) -> tuple[dict, str]:
    """{(judge, format, decoding): effective labels} from `estimate`
    (docs/metrics.md#what-human-labels-are-worth-estimate), the mean over its targets and systems for a
    cell; and the reason a cell has none."""
    values: dict = {}
    with reading(db) as read:                 # a target without labels of its kind has no effective labels
        held = read.frame("label_counts", pool_id=read.pool_id(pool)).row(0, named=True)
    for target in ("accept", "winrate"):
        if not held["accepts" if target == "accept" else "pairs"]:
            continue
        try:
            frame = estimate(db, pool, target=target)
        except Exception:        # a target without labels of its kind (e.g. no pairwise labels)
            continue
        if "effective_labels" not in frame.columns:
            continue
        for (judge, fmt, decoding), part in frame.group_by(*KEY):
            got = part["effective_labels"].drop_nulls()
            if got.len():
                values.setdefault((judge, fmt, decoding), []).extend(got.to_list())
    return {k: float(np.mean(v)) for k, v in values.items()}, "no human labels the estimate can use"


def _by_cell(frame: pl.DataFrame) -> dict:
    return {(r["judge"], r["format"], r["decoding"]): r for r in frame.to_dicts()}


def _length_excess(db, pool: str, has_labels: bool, comparative: bool) -> dict:
    if not (has_labels and comparative):
        return {}
    style = style_rank(db, pool).filter((pl.col("part") == "excess") & (pl.col("name") == "length"))
    return _by_cell(style)


def judges(db: str | os.PathLike | None, pool: str, prices: dict | None = None, seed: int = 0,
           cells: pl.DataFrame | None = None, slots: pl.DataFrame | None = None,
           repeats: pl.DataFrame | None = None) -> pl.DataFrame:
    """One row per (judge, format, decoding) of the pool, juries included, ordered so.

    prices: {judge name: {"input": USD per million input tokens, "output": ...}} (the app reads them
    from judgeaudit.toml). Columns: JUDGES_COLUMNS: aggregate (single | jury), members (a jury's),
    kind, n_verdicts and parse_rate (sample 0), n_labelled (judgements on human-labelled pairs),
    agreement, kappa, kappa_lo, kappa_hi, ece (as `calibrate` prints them), b, b_lo, b_hi (`bias`),
    length_excess and its interval (`rank --style`: human excess of the length coefficient),
    flip_rate (`consistency`), tokens_in, tokens_out (summed over the calls paid for), cost_usd,
    cost_per_1000 (per 1,000 verdicts: sample-0 calls), latency_ms_p50/p95, effective_labels,
    on_front (on the Pareto front of agreement against cost per 1,000), reasons (a struct: why a
    value is null, per REASON_FIELDS).

    cells, slots, repeats: audit_cells', bias's and consistency's frames for the pool at `seed` where the
    caller holds them already (the stored derived results, audit/derived/: judges_frame), limited to
    the cells the board is of; None: computed here."""
    prices = prices or {}
    cells = (audit_cells(db, pool, seed=seed) if cells is None else cells).filter(
        (pl.col("score") == "label") & pl.col("aggregate").is_in(["single", "jury"]))
    if "members" not in cells.columns:
        cells = cells.with_columns(pl.lit(None, pl.List(pl.String)).alias("members"))
    has_labels = stored_labels(db, pool).height > 0
    comparative = bool((cells["kind"] == "comparative").any()) if cells.height else False
    calib = _by_cell(calibrate(db, pool, seed=seed)) if has_labels and comparative else {}
    if comparative:
        slots = _by_cell(bias(db, pool, seed=seed) if slots is None else slots)
    else:
        slots = {}
    repeats = _by_cell(consistency(db, pool, seed=seed) if repeats is None else repeats)
    length = _length_excess(db, pool, has_labels, comparative)
    with reading(db) as read:
        pid = read.pool_id(pool)
        usage: dict = {}
        for r in read.frame("judge_usage", pool_id=pid).to_dicts():
            usage.setdefault((r["judge"], r["format"], r["decoding"]), []).append(r)
        latency = _by_cell(read.frame("judge_latency", pool_id=pid))
    effective, effective_reason = _effective_labels(db, pool)
    rows = []
    for cell in cells.to_dicts():
        key = (cell["judge"], cell["format"], cell["decoding"])
        why = dict.fromkeys(REASON_FIELDS)
        row = {k: cell[k] for k in ("judge", "format", "decoding", "aggregate", "members", "kind", "n_verdicts",
                                    "parse_rate")}
        c = calib.get(key)
        if c:
            row.update(n_labelled=c["n"], agreement=c["agreement"], kappa=c["kappa"], kappa_lo=c["kappa_lo"],
                       kappa_hi=c["kappa_hi"], ece=c["ece"])
            if c["ece"] is None:
                why["ece"] = "no label distribution or repeats"
        else:
            why["agreement"] = why["ece"] = ("no labels" if not has_labels else
                                             "pointwise format" if cell["kind"] != "comparative" else
                                             "no verdict on a labelled pair")
        s = slots.get(key)
        if s and s["b"] is not None:
            row.update(b=s["b"], b_lo=s["b_lo"], b_hi=s["b_hi"])
        else:
            why["b"] = "pointwise format" if cell["kind"] != "comparative" else "no pair judged in both orders"
        le = length.get(key)
        if le and le["value"] is not None:
            row.update(length_excess=le["value"], length_excess_lo=le["lo"], length_excess_hi=le["hi"])
        else:
            why["length_excess"] = ("no labels" if not has_labels else "pointwise format"
                                    if cell["kind"] != "comparative" else "no style fit")
        rep = repeats.get(key)
        if rep and rep["n_items"]:
            row["flip_rate"] = rep["flip_rate"]
        else:
            why["flip_rate"] = "no repeats"
        paid = usage.get(key, [])
        if paid and all(p["n_with_tokens"] for p in paid):
            row.update(tokens_in=int(sum(p["tokens_in"] for p in paid)),
                       tokens_out=int(sum(p["tokens_out"] for p in paid)))
        else:
            why["tokens"] = "no token counts"
        cost, why["cost_usd"] = cell_cost(paid, prices) if prices else (None, "no prices")
        if cost is not None:
            row.update(cost_usd=cost, cost_per_1000=cost / cell["n_verdicts"] * 1000 if cell["n_verdicts"] else None)
        lat = latency.get(key)
        if lat:
            row.update(latency_ms_p50=lat["latency_ms_p50"], latency_ms_p95=lat["latency_ms_p95"])
        else:
            why["latency"] = "no latencies"
        row["effective_labels"] = effective.get(key)
        if row["effective_labels"] is None:
            why["effective_labels"] = effective_reason
        row["reasons"] = why
        rows.append(row)
    return _frame(rows)


def _frame(rows: list[dict]) -> pl.DataFrame:
    schema = {c: pl.Float64 for c in JUDGES_COLUMNS}
    schema.update(judge=pl.String, format=pl.String, decoding=pl.String, aggregate=pl.String,
                  members=pl.List(pl.String), kind=pl.String, n_verdicts=pl.Int64, n_labelled=pl.Int64,
                  tokens_in=pl.Int64, tokens_out=pl.Int64, on_front=pl.Boolean,
                  reasons=pl.Struct({f: pl.String for f in REASON_FIELDS}))
    frame = pl.DataFrame([{c: r.get(c) for c in JUDGES_COLUMNS if c != "on_front"} for r in rows],
                         schema={c: t for c, t in schema.items() if c != "on_front"})
    return with_front(frame).select(JUDGES_COLUMNS).with_columns(pl.selectors.float().fill_nan(None))


def with_front(board: pl.DataFrame) -> pl.DataFrame:
    """The leaderboard with `on_front` marked over all its rows: the Pareto front of agreement against
    cost per 1,000 verdicts (a leaderboard put together from judges' parts is marked again whole)."""
    front = pareto_front(board["cost_per_1000"].fill_null(np.nan).to_numpy(),
                         board["agreement"].fill_null(np.nan).to_numpy()) if board.height else np.zeros(0, bool)
    return board.with_columns(pl.Series("on_front", front, pl.Boolean))
