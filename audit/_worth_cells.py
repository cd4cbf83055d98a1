"""What the labels are worth, read out of core (the derived results at 10M candidates).

`estimate(db, pool, ...)` (audit.estimate) no longer joins, as audit._worth.estimate does, the pool's candidates, every pointwise score and every
judged pair in polars. DuckDB builds the items (winrate_items.sql, accept_items.sql: the same items
and predictions as audit._worth.winrate_items and accept_items) and returns the labelled ones one by
one and the others as (cell, system, f, how many): the unlabelled items enter the estimate only
through their predictions' mean and variance, so the predictions of every item are those counts
repeated (np.repeat), the labelled items' in prompt order as before. The numbers are those of the
item frame, summed in another order (to 1e-9: tests/audit/test_worth_cells.py, against the per-item
estimate of audit/_worth.py and a hand-worked case).
"""

from __future__ import annotations

import os

import numpy as np
import polars as pl

from ._read import AuditError, reading
from ._estimate import effective_labels
from ._strata import stratified_ppi_mean
from ._worth import CELL, ESTIMATE_COLUMNS, TARGETS, cell_estimate, human_values, share

STRATA = ("score-bin", "category", "model", "split", "candidate_id")     # what `--strata` may split the items by
STRATIFIED_COLUMNS = ["strata", "n_strata", "stratified_value", "stratified_lo", "stratified_hi",
                      "stratified_effective_labels"]


def stratified(f_all, s_all, y, f_lab, s_lab, w, alpha: float, by: str, classical_hw, n: int) -> dict:
    """The stratified columns of one cell's row (audit/_strata.py), null without a label. Like the
    unstratified estimate's, the value and interval ends are clipped to [0, 1] (audit._worth.share);
    stratified_effective_labels compares the half-widths before clipping."""
    est = stratified_ppi_mean(y, f_lab, f_all, s_lab, s_all, alpha, w=w)
    return {"strata": by, "n_strata": len(est["strata"]), "stratified_value": share(est["value"]),
            "stratified_lo": share(est["lo"]), "stratified_hi": share(est["hi"]),
            "stratified_effective_labels": effective_labels(n, classical_hw, est["half_width"])}


def _groups(items: pl.DataFrame, humans: pl.DataFrame, on: list[str], keys: list[str]):
    """Per group of `keys` of the items (is_labelled, the item's `on` columns, f, stratum, n): (its key
    values, {f_all, s_all: every item's prediction and stratum; y, f_lab, s_lab, w: the labelled
    items' human value, prediction, stratum and weight})."""
    items = items.join(humans.select(*on, "y", "w"), on=on, how="left", maintain_order="left")
    if "s_idx" in items.columns:         # winrate: the humans' y is lo_idx's preference; the item's is s's
        items = items.with_columns(pl.when(pl.col("s_idx") == pl.col("lo_idx")).then(pl.col("y"))
                                   .otherwise(1.0 - pl.col("y")).alias("y"))
    for key, g in items.group_by(keys, maintain_order=True):
        n = g["n"].to_numpy()
        lab = g.filter(pl.col("is_labelled") & pl.col("y").is_not_null())
        m = lab["n"].to_numpy()
        yield dict(zip(keys, key)), {
            "f_all": np.repeat(g["f"].to_numpy(), n), "s_all": np.repeat(g["stratum"].to_numpy(), n),
            "y": np.repeat(lab["y"].to_numpy(), m), "f_lab": np.repeat(lab["f"].to_numpy(), m),
            "s_lab": np.repeat(lab["stratum"].to_numpy(), m), "w": np.repeat(lab["w"].to_numpy(), m)}


def cell_arrays(db: str | os.PathLike | None, pool: str, target: str, baseline: str | None,
                strata: str | None = None) -> list[tuple[dict, dict]]:
    """[(the cell's key: judge, format, decoding, target, system (and baseline for winrate), its arrays
    as _groups gives them)], one per cell (and system), sorted."""
    with reading(db) as read:
        pid = read.pool_id(pool)
        if strata == "category" and read.frame("pool_categories", pool_id=pid)["n_with"][0] == 0:
            raise AuditError(f"--strata category: pool '{pool}' has no category of its prompts (a pool file "
                             f"names one in its optional field 'category', an UltraFeedback file in 'source'; "
                             f"import the pool again with it); split by one of: "
                             f"{', '.join(s for s in STRATA if s != 'category')}")
        if target == "accept":
            humans = human_values(read.frame("human_accept_votes", pool_id=pid), ["cand_idx"])
            items = read.frame("accept_items", pool_id=pid, strata=strata)
            return [({**key, "target": "accept", "system": None}, arrays)
                    for key, arrays in _groups(items, humans, ["cand_idx"], CELL)]
        systems = read.frame("rank_systems", pool_id=pid)["candidate_id"].to_list()
        if baseline is None:
            first = read.frame("winrate_baseline", pool_id=pid)["candidate_id"].to_list()
            baseline = first[0] if first else None
        if baseline not in set(systems):
            raise AuditError(f"--baseline {baseline}: not a system (candidate_id) of pool '{pool}'; "
                             f"its systems: {', '.join(systems[:20])}")
        humans = human_values(read.frame("human_pair_votes", pool_id=pid), ["lo_idx", "hi_idx"])
        items = read.frame("winrate_items", pool_id=pid, baseline=baseline, strata=strata)
    out = [({**key, "target": "winrate", "baseline": baseline}, arrays)
           for key, arrays in _groups(items, humans, ["lo_idx", "hi_idx"], [*CELL, "system"])]
    return sorted(out, key=lambda kv: (kv[0]["judge"], kv[0]["format"], kv[0]["decoding"], kv[0]["system"]))


def estimate_cells(db: str | os.PathLike | None, pool: str, target: str, baseline: str | None,
                   alpha: float, strata: str | None = None, arrays: list | None = None) -> list[dict]:
    """audit.estimate's rows (before its frame): the module's doc. arrays: cell_arrays' list for these
    arguments where the caller read it already."""
    rows = []
    for key, a in cell_arrays(db, pool, target, baseline, strata) if arrays is None else arrays:
        est = cell_estimate(a["f_all"], a["y"], a["f_lab"], a["w"], alpha)
        if strata is not None:
            est |= stratified(a["f_all"], a["s_all"], a["y"], a["f_lab"], a["s_lab"], a["w"], alpha, strata,
                              est["classical_half_width"], a["y"].size)
        rows.append({**key, **est})
    return rows


def check_strata(strata: str | None) -> None:
    """Refuse strata no item can be split by, saying which it can (a pool without categories is refused
    `category` where it is read: cell_arrays)."""
    if strata is not None and strata not in STRATA:
        raise AuditError(f"--strata {strata}: use one of {', '.join(STRATA)}")


def estimate(db: str | os.PathLike | None, pool: str, target: str, baseline: str | None = None,
             alpha: float = 0.05, strata: str | None = None, arrays: list | None = None) -> pl.DataFrame:
    """audit.estimate (its doc and columns: audit._worth.estimate), the items built and counted in DuckDB.
    With `strata` (score-bin, category, model, split or candidate_id), also STRATIFIED_COLUMNS: strata
    (as given), n_strata (the strata estimated, after pooling those with few labels),
    stratified_value/lo/hi (stratified PPI++, audit/_strata.py, clipped to [0, 1] as the others are)
    and stratified_effective_labels (n_labelled × (classical half-width / stratified half-width)²).
    arrays: cell_arrays(db, pool, target, baseline, strata) where the caller read it already (the
    decisions read it once for the estimate and the plan)."""
    if target not in TARGETS:
        raise AuditError(f"--target {target}: use accept or winrate")
    if not 0 < alpha < 1:
        raise AuditError(f"--alpha {alpha}: must be between 0 and 1")
    check_strata(strata)
    rows = estimate_cells(db, pool, target, baseline, alpha, strata, arrays)
    cols = ESTIMATE_COLUMNS + (["baseline"] if target == "winrate" else []) \
        + (STRATIFIED_COLUMNS if strata is not None else [])
    schema = {c: pl.Float64 for c in cols} | {c: pl.String for c in ("judge", "format", "decoding", "target",
                                                                      "system", "baseline", "strata")} \
        | {"n_labelled": pl.Int64, "n_unlabelled": pl.Int64, "n_strata": pl.Int64}
    return pl.DataFrame([{c: r.get(c) for c in cols} for r in rows], schema={c: schema[c] for c in cols})
