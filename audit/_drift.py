"""Drift of a judge between versions (DESIGN.md 'Calibration, probes and drift').

A judge version is (the model id the server reported, the template hash, the decoding settings),
read from the cell run that made each verdict. Drift compares the verdicts of the latest version
with those of a stored earlier version on the same calls (format, decoding, prompt, slot A, slot B,
sample): the share of verdicts changed (the label, or the parse status where none parsed), the mean
absolute change of the normalised score (over calls scored in both), and which items moved.

While the store keeps one verdict per call and judge, an earlier version is compared as another
judge name (`against`: e.g. a re-run stored with --judge-name, or ChatGPT against ChatGPT-0301);
`compare_verdicts` is the pure comparison either way.
"""

from __future__ import annotations

import os

import polars as pl

from ._db import AuditError, connect, pool_id, query

KEY = ["format", "decoding", "prompt_idx", "a_idx", "b_idx", "sample"]
VERSION = ["judge_model", "template_hash", "settings"]
DRIFT_COLUMNS = ["format", "decoding", "n", "n_changed", "share_changed", "n_scored", "mean_abs_change"]
MOVED_COLUMNS = ["format", "decoding", "prompt_id", "a_id", "b_id", "sample", "reading_old", "reading",
                 "s_old", "s", "change"]


def _latest_per_call(verdicts: pl.DataFrame) -> pl.DataFrame:
    return verdicts.sort("run_id").unique(KEY, keep="last", maintain_order=True)


def versions_of(verdicts: pl.DataFrame) -> pl.DataFrame:
    """Pure: one row per judge version in the verdicts, oldest first: version (1, 2, ...),
    judge_model, template_hash, settings, first_run, last_run, n_verdicts, formats."""
    if verdicts.height == 0:
        return pl.DataFrame(schema={"version": pl.Int64, "judge_model": pl.String, "template_hash": pl.String,
                                    "settings": pl.String, "first_run": pl.Int64, "last_run": pl.Int64,
                                    "n_verdicts": pl.Int64, "formats": pl.List(pl.String)})
    out = verdicts.group_by(VERSION).agg(
        pl.col("run_id").min().cast(pl.Int64).alias("first_run"), pl.col("run_id").max().cast(pl.Int64).alias("last_run"),
        pl.len().cast(pl.Int64).alias("n_verdicts"), pl.col("format").unique().sort().alias("formats")).sort("first_run")
    return out.with_row_index("version", offset=1).with_columns(pl.col("version").cast(pl.Int64))


def compare_verdicts(old: pl.DataFrame, new: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Pure: (per-cell drift, moved items) between two sets of verdicts on the same calls.

    Both frames have KEY columns, prompt_id, a_id, b_id, reading, s (and run_id). Cells: format,
    decoding, n (calls in both), n_changed, share_changed, n_scored (calls with a score in both),
    mean_abs_change. Moved: MOVED_COLUMNS, one row per call whose reading or score changed.
    """
    cols = [*KEY, "prompt_id", "a_id", "b_id", "reading", "s"]
    both = _latest_per_call(new).select(cols).join(
        _latest_per_call(old).select(*KEY, pl.col("reading").alias("reading_old"), pl.col("s").alias("s_old")),
        on=KEY, how="inner", nulls_equal=True)
    both = both.with_columns((pl.col("reading") != pl.col("reading_old")).alias("changed"),
                             (pl.col("s") - pl.col("s_old")).alias("change"))
    cells = both.group_by("format", "decoding", maintain_order=True).agg(
        pl.len().cast(pl.Int64).alias("n"), pl.col("changed").sum().cast(pl.Int64).alias("n_changed"),
        pl.col("change").is_not_null().sum().cast(pl.Int64).alias("n_scored"),
        pl.col("change").abs().mean().alias("mean_abs_change")) \
        .with_columns((pl.col("n_changed") / pl.col("n")).alias("share_changed")).sort("format", "decoding")
    moved = both.filter(pl.col("changed") | (pl.col("change").abs() > 1e-12)) \
        .sort("format", "decoding", "prompt_idx", "a_idx", "b_idx", "sample", nulls_last=True)
    return cells.select(DRIFT_COLUMNS), moved.select(MOVED_COLUMNS)


def _judge_verdicts(con, pid: int, judge: str) -> pl.DataFrame:
    row = con.execute("SELECT judge_id FROM judges WHERE name = $n", {"n": judge}).fetchall()
    if not row:
        names = [r[0] for r in con.execute("SELECT name FROM judges ORDER BY name").fetchall()]
        raise AuditError(f"no judge named '{judge}' (known: {', '.join(names) or 'none'})")
    return query(con, "drift_verdicts", pool_id=pid, judge_id=row[0][0])


def drift_sides(db: str | os.PathLike | None, pool: str, judge: str, against: str | None = None,
                baseline_version: int | None = None) -> dict:
    """The two sides of a drift comparison: {"versions", "current", "baseline", "current_version",
    "baseline_version"} — the judge's latest version against `against` (another judge name), or
    against its own earlier version (`baseline_version`, default the one before the latest)."""
    with connect(db) as con:
        pid = pool_id(con, pool)
        mine = _judge_verdicts(con, pid, judge)
        other = _judge_verdicts(con, pid, against) if against else None
    vers = versions_of(mine)
    if vers.height == 0:
        raise AuditError(f"judge '{judge}' has no verdicts on pool '{pool}'")
    latest = vers.sort("last_run").row(-1, named=True)
    tagged = mine.join(vers.select(*VERSION, "version"), on=VERSION, how="left", nulls_equal=True)
    current = tagged.filter(pl.col("version") == latest["version"])
    if other is not None:
        baseline, base_info = other, {"judge": against, "versions": versions_of(other).to_dicts()}
    else:
        earlier = vers.filter(pl.col("version") != latest["version"])
        if baseline_version is not None:
            earlier = earlier.filter(pl.col("version") == baseline_version)
        if earlier.height == 0:
            raise AuditError(f"judge '{judge}' has one stored version on pool '{pool}': nothing to compare "
                             "(re-run it under another --judge-name and pass --against, or pick --baseline-version)")
        base = earlier.sort("last_run").row(-1, named=True)
        baseline, base_info = tagged.filter(pl.col("version") == base["version"]), {"judge": judge, **base}
    return {"versions": vers, "current": current, "baseline": baseline,
            "current_version": {"judge": judge, **latest}, "baseline_version": base_info}


def drift(db: str | os.PathLike | None, pool: str, judge: str, against: str | None = None,
          baseline_version: int | None = None) -> pl.DataFrame:
    """Per (format, decoding) cell: the latest version of `judge` against a stored earlier one (or
    the judge `against`) on the same calls. Columns: format, decoding, n, n_changed, share_changed,
    n_scored, mean_abs_change (normalised score)."""
    sides = drift_sides(db, pool, judge, against, baseline_version)
    return compare_verdicts(sides["baseline"], sides["current"])[0]


def drift_items(db: str | os.PathLike | None, pool: str, judge: str, against: str | None = None,
                baseline_version: int | None = None) -> pl.DataFrame:
    """The calls that moved between the two versions: format, decoding, prompt_id, a_id, b_id (null
    for pointwise), sample, reading_old, reading, s_old, s, change (s - s_old)."""
    sides = drift_sides(db, pool, judge, against, baseline_version)
    return compare_verdicts(sides["baseline"], sides["current"])[1]
