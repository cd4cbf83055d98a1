"""What the labels are worth, read out of core (the derived results at 10M candidates).

`estimate(db, pool, ...)` (audit.estimate) no longer joins, as audit._worth.estimate does, the pool's
candidates, every pointwise score and every judged pair in polars. The accept items are built and
counted in DuckDB (accept_items.sql: the items and predictions of audit._worth.accept_items). The win
rate's (winrate_items: those of audit._worth.winrate_items) are built in numpy: the pool's candidates
read once, as integer codes, for every cell in scope, then each cell's calls alone (its judge, format
and decoding: a scoped refresh reads only the new judgings') grouped by candidate or by pair with
np.bincount, the ids being 0..n-1; DuckDB no longer groups 10M scores by candidate in a hash table.
In a pool without labels (the estimate is then each cell's count of items) the win rate's items are
only counted, f null, a pointwise cell's scores not read. Either returns the labelled items one by one
and the others as (cell, system, f, stratum, how many):
the unlabelled items enter the estimate only through their predictions' mean and variance, so the
predictions of every item are those counts repeated (np.repeat), the labelled items' in prompt order
as before. The numbers are those of the item frame, summed in another order (to 1e-9:
tests/audit/test_worth_cells.py, against the per-item estimate of audit/_worth.py, a hand-worked case,
and the win rate's items against the SQL that built them before, kept beside the test).
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
        if g["f"].null_count() == g.height:      # counted only (no label, no strata): their number is all
            nothing = np.broadcast_to(np.array(np.nan), (int(n.sum()),))     # that is read: no copy of it
            yield dict(zip(keys, key)), {"f_all": nothing, "s_all": nothing, **{k: np.zeros(0) for k in
                                                                                 ("y", "f_lab", "s_lab", "w")}}
            continue
        yield dict(zip(keys, key)), {
            "f_all": np.repeat(g["f"].to_numpy(), n), "s_all": np.repeat(g["stratum"].to_numpy(), n),
            "y": np.repeat(lab["y"].to_numpy(), m), "f_lab": np.repeat(lab["f"].to_numpy(), m),
            "s_lab": np.repeat(lab["stratum"].to_numpy(), m), "w": np.repeat(lab["w"].to_numpy(), m)}


ITEM_SCHEMA = {"judge": pl.String, "format": pl.String, "decoding": pl.String, "system": pl.String,
               "is_labelled": pl.Boolean, "prompt_idx": pl.Int64, "lo_idx": pl.Int64, "hi_idx": pl.Int64,
               "s_idx": pl.Int64, "f": pl.Float64, "stratum": pl.String, "n": pl.Int64}


def _pairs(read, pid: int, systems: list[str], baseline: str, strata: str | None) -> dict:
    """The win rate's possible items against `baseline`, one per (system s, prompt) both answered:
    numpy arrays s_idx (in cand_idx order), b_idx (the prompt's baseline candidate: a prompt's
    candidate_ids are distinct, the import refuses one named twice), prompt_idx, system (s's place in
    `systems`, rank_systems.sql's rows), lo_idx, hi_idx (the pair ordered); stratum (a Series: s's by
    `strata`; None for none and for score-bin); size (the pool's candidates: ids are 0..size-1),
    is_base (per candidate) and row (per candidate: its item's place, -1 for none)."""
    cands = read.frame("estimate_candidates", pool_id=pid, strata=strata)
    cand = cands["cand_idx"].to_numpy().astype(np.int64)
    size = int(cand.max(initial=-1)) + 1
    prompt, system = np.zeros(size, np.int64), np.full(size, -1, np.int64)
    prompt[cand], system[cand] = cands["prompt_idx"].to_numpy(), cands["system"].to_numpy()
    is_base = system == systems.index(baseline)
    base_of = np.full(int(prompt.max(initial=-1)) + 1, -1, np.int64)
    base_of[prompt[is_base]] = np.flatnonzero(is_base)
    s_idx = np.flatnonzero((system >= 0) & ~is_base & (base_of[prompt] >= 0))
    b_idx = base_of[prompt[s_idx]]
    row = np.full(size, -1, np.int64)
    row[s_idx] = np.arange(s_idx.size)
    stratum = None
    if strata is not None and strata != "score-bin":
        at = np.zeros(size, np.int64)
        at[cand] = np.arange(cand.size)
        stratum = cands["stratum"].gather(at[s_idx]).cast(pl.String)
    return {"size": size, "s_idx": s_idx, "b_idx": b_idx, "prompt_idx": prompt[s_idx], "system": system[s_idx],
            "lo_idx": np.minimum(s_idx, b_idx), "hi_idx": np.maximum(s_idx, b_idx), "stratum": stratum,
            "is_base": is_base, "row": row}


def _columns(frame: pl.DataFrame) -> dict:
    """A frame's columns as numpy arrays (read as Arrow: half the work of a fetch to numpy)."""
    return {c: frame[c].to_numpy() for c in frame.columns}


def _preferences(read, pid: int, cell: dict, sb: dict, counts_only: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """(judged: which of sb's items the cell judged, f: its preference for s, on every item (meaningless
    where not judged; None with `counts_only`, and a pointwise cell's scores are then not read)).
    Pointwise: a candidate's score is the mean over its parsed calls of the normalised score, rounded
    to 12 decimals; f = 1 / 0.5 / 0 as s's is above / equal to / below the baseline's (both scored).
    Comparative: f = the mean over the pair's parsed calls, in either order, of 1 / 0.5 / 0 for a
    margin favouring s / tying / favouring the baseline. The cell's calls are read alone (its judge,
    format and decoding) and grouped by candidate or item with np.bincount (the ids are 0..size-1)."""
    args = {"pool_id": pid, "judge_id": cell["judge_id"], "format_id": cell["format_id"], "decoding": cell["decoding"]}
    size, n_items = sb["size"], sb["s_idx"].size
    with np.errstate(invalid="ignore", divide="ignore"):
        if cell["kind"] == "pointwise" and counts_only:
            scored = np.zeros(size, bool)
            scored[read.frame("estimate_scored", **args)["a_idx"].to_numpy()] = True
            return scored[sb["s_idx"]] & scored[sb["b_idx"]], None
        if cell["kind"] == "pointwise":
            calls = _columns(read.frame("estimate_points", **args))
            points = np.round(np.bincount(calls["a_idx"], weights=calls["x"], minlength=size)
                              / np.bincount(calls["a_idx"], minlength=size), 12)    # NaN: not scored
            ps, pb = points[sb["s_idx"]], points[sb["b_idx"]]
            return ~(np.isnan(ps) | np.isnan(pb)), np.where(ps > pb, 1.0, np.where(ps < pb, 0.0, 0.5))
        calls = _columns(read.frame("estimate_calls", **args))
        lo, hi = calls["lo_idx"].astype(np.int64), calls["hi_idx"].astype(np.int64)
        at = sb["row"][np.where(sb["is_base"][lo], hi, lo)]     # the item of the end that is not the baseline
        hit = at >= 0
        hit[hit] = (sb["lo_idx"][at[hit]] == lo[hit]) & (sb["hi_idx"][at[hit]] == hi[hit])  # s and its baseline
        count = np.bincount(at[hit], minlength=n_items)
        if counts_only:
            return count > 0, None
        f = np.bincount(at[hit], weights=calls["x"][hit], minlength=n_items) / count
        return count > 0, np.where(sb["s_idx"] == sb["lo_idx"], f, 1.0 - f)


def _unlabelled(system: np.ndarray, f: np.ndarray, stratum: pl.Series | None, these: np.ndarray,
                halves: bool, n_systems: int) -> pl.DataFrame:
    """(system, f, stratum, n): the items `these` counted per system, f and stratum. Without strata and
    with f in {0, 0.5, 1} (`halves`: a pointwise cell's), by np.bincount of system·3 + 2f."""
    if stratum is None and halves:
        key = np.where(these, system * 3 + (2 * f).astype(np.int64), 3 * n_systems)
        n = np.bincount(key, minlength=3 * n_systems + 1)[:-1]
        at = np.flatnonzero(n)
        return pl.DataFrame({"system": at // 3, "f": (at % 3) / 2.0, "n": n[at], "stratum": None},
                            schema_overrides={"stratum": pl.String})
    if stratum is None:           # grouped by two numbers, the null stratum added after (5x less work)
        return pl.DataFrame({"system": system[these], "f": f[these]}).group_by("system", "f") \
            .agg(pl.len().alias("n")).with_columns(pl.lit(None, pl.String).alias("stratum"))
    return pl.DataFrame({"system": system[these], "f": f[these], "stratum": stratum.filter(pl.Series(these))}) \
        .group_by("system", "f", "stratum").agg(pl.len().alias("n"))


def _cell_items(read, pid: int, cell: dict, sb: dict, labelled: np.ndarray | None, strata: str | None,
                names: pl.Series) -> pl.DataFrame | None:
    """One cell's rows of winrate_items (None where it judged no item): its labelled items one by one,
    the others counted per (system, f, stratum); `labelled`: which of sb's items have a human label
    (None: the pool has no label of a pair, and with no strata the items are only counted, per system,
    f left null: an estimate without labels reads their number alone), `names`: the systems' names by
    code."""
    counts_only = labelled is None and strata is None
    labelled = np.zeros(sb["s_idx"].size, bool) if labelled is None else labelled
    judged, f = _preferences(read, pid, cell, sb, counts_only)
    if not judged.any():
        return None
    if counts_only:
        n = np.bincount(sb["system"][judged], minlength=names.len())
        at = np.flatnonzero(n)
        return pl.DataFrame({"judge": cell["judge"], "format": cell["format"], "decoding": cell["decoding"],
                             "system": names.gather(at), "is_labelled": False, "n": n[at]}) \
            .with_columns(pl.lit(None).alias(c) for c in ("prompt_idx", "lo_idx", "hi_idx", "s_idx", "f", "stratum")) \
            .select(pl.col(c).cast(t) for c, t in ITEM_SCHEMA.items())
    stratum = sb["stratum"]
    if strata == "score-bin":
        with np.errstate(invalid="ignore"):
            stratum = pl.Series(np.minimum(np.floor(np.round(np.where(judged, f, 0.0), 12) * 5), 4)
                                .astype(np.int64)).cast(pl.String)
    one = np.flatnonzero(judged & labelled)
    lab = pl.DataFrame({**{c: sb[c][one] for c in ("system", "prompt_idx", "lo_idx", "hi_idx", "s_idx")},
                        "f": f[one], "is_labelled": True, "n": 1,
                        "stratum": None if stratum is None else stratum.gather(one)},
                       schema_overrides={"stratum": pl.String})
    rest = _unlabelled(sb["system"], f, stratum, judged & ~labelled, cell["kind"] == "pointwise", names.len())
    both = pl.concat([lab, rest.with_columns(pl.lit(False).alias("is_labelled"))], how="diagonal_relaxed")
    both = both.with_columns(pl.Series("system", names.gather(both["system"].cast(pl.Int64).to_numpy())),
                             pl.lit(cell["judge"]).alias("judge"), pl.lit(cell["format"]).alias("format"),
                             pl.lit(cell["decoding"]).alias("decoding"))
    return both.select(pl.col(c).cast(t) for c, t in ITEM_SCHEMA.items())


def winrate_items(read, pid: int, systems: list[str], baseline: str, strata: str | None,
                  humans: pl.DataFrame) -> pl.DataFrame:
    """The win rate's items against `baseline` (those of audit._worth.winrate_items), as cell_arrays
    groups them (ITEM_SCHEMA): one row per labelled item (cell judge/format/decoding, system s,
    prompt_idx, the pair lo_idx/hi_idx, s_idx, f; n = 1) and one per (cell, system, f, stratum) for the
    items without a human label (n = how many; prompt and pair null); sorted by cell, system,
    is_labelled, prompt. An item is a prompt that s and the baseline both answered and the cell judged,
    f its preference for s (_preferences); labelled: its pair has a human label (`humans`); stratum by
    `strata` (estimate_candidates.sql; 'score-bin': min(floor(5 f), 4)). In a pool without a label of a
    pair and without strata, f is null: the items are only counted per cell and system (_cell_items).
    The pool's candidates are read once for all the cells in scope, each cell's calls by themselves."""
    sb = _pairs(read, pid, systems, baseline, strata)
    labelled = None
    if humans.height:
        keys = humans["lo_idx"].cast(pl.Int64).to_numpy() * sb["size"] + humans["hi_idx"].cast(pl.Int64).to_numpy()
        labelled = np.isin(sb["lo_idx"] * sb["size"] + sb["hi_idx"], keys)
    names = pl.Series("system", systems, pl.String)
    parts = [pl.DataFrame(schema=ITEM_SCHEMA)]
    for judging in read.frame("estimate_judgings", pool_id=pid).iter_rows(named=True):
        for decoding in read.frame("estimate_decodings", pool_id=pid, judge_id=judging["judge_id"],
                                   format_id=judging["format_id"])["decoding"]:
            parts.append(_cell_items(read, pid, {**judging, "decoding": decoding}, sb, labelled, strata, names))
    return pl.concat([p for p in parts if p is not None]).sort(
        "judge", "format", "decoding", "system", "is_labelled", "prompt_idx", "lo_idx",
        "hi_idx", "s_idx", "f", "stratum", nulls_last=True)


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
        items = winrate_items(read, pid, systems, baseline, strata, humans)
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
