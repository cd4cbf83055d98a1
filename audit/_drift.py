"""Drift of a judge between versions (docs/metrics.md#drift).

A judge version is (the model id the server reported, the template hash, the decoding settings),
read from the cell run that made each verdict. Drift compares the verdicts of the latest version
with those of a stored earlier version on the same calls (format, decoding, prompt, slot A, slot B,
sample): the share of verdicts changed (the label, or the parse status where none parsed), the mean
absolute change of the normalised score (over calls scored in both), and which items moved.

Versions are per format: each format has its own template, so its own version. The store keeps one
verdict per call and judge name (a unique key per pool, judge, format, decoding, prompt, slots,
sample), so two versions of one judge name never share a call: an earlier version is compared as
another judge name (`against`: a re-run of the anchor set stored with --judge-name, or ChatGPT
against ChatGPT-0301). Without `against`, a format with two versions on shared calls is looked for,
and otherwise an AuditError says this. `drift`, `drift_items` and `drift_report` compute in DuckDB a
format at a time (out of core, 10M candidates); `drift_sides` and the pure `compare_verdicts` are the
same comparison in memory, the reference the tests hold them to.
"""

from __future__ import annotations

import contextlib
import os
from typing import Iterator

import polars as pl

from ._read import AuditError, reading

KEY = ["format", "decoding", "prompt_idx", "a_idx", "b_idx", "sample"]
VERSION = ["judge_model", "template_hash", "settings"]
CELL_COLUMNS = ["format", "decoding", "n", "n_changed", "share_changed", "n_scored", "mean_abs_change", "n_moved"]
MASK_JUDGES = 64         # drift_pairs.sql's bits; drift_pairs_joined.sql past them
MOVED_COLUMNS = ["format", "decoding", "prompt_id", "a_id", "b_id", "sample", "reading_old", "reading",
                 "s_old", "s", "change"]


def _latest_per_call(verdicts: pl.DataFrame) -> pl.DataFrame:
    return verdicts.sort("cell_run_id").unique(KEY, keep="last", maintain_order=True)


def versions_of(verdicts: pl.DataFrame) -> pl.DataFrame:
    """Pure: one row per judge version in the verdicts, oldest first: version (1, 2, ...),
    judge_model, template_hash, settings, first_cell_run, last_cell_run, n_verdicts, formats."""
    if verdicts.height == 0:
        return pl.DataFrame(schema={"version": pl.Int64, "judge_model": pl.String, "template_hash": pl.String,
                                    "settings": pl.String, "first_cell_run": pl.Int64, "last_cell_run": pl.Int64,
                                    "n_verdicts": pl.Int64, "formats": pl.List(pl.String)})
    out = verdicts.group_by(VERSION).agg(
        pl.col("cell_run_id").min().cast(pl.Int64).alias("first_cell_run"), pl.col("cell_run_id").max().cast(pl.Int64).alias("last_cell_run"),
        pl.len().cast(pl.Int64).alias("n_verdicts"), pl.col("format").unique().sort().alias("formats")).sort("first_cell_run")
    return out.with_row_index("version", offset=1).with_columns(pl.col("version").cast(pl.Int64))


def compare_verdicts(old: pl.DataFrame, new: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Pure: (per-cell drift, moved items) between two sets of verdicts on the same calls.

    Both frames have KEY columns, prompt_id, a_id, b_id, reading, s (and cell_run_id). Cells: format,
    decoding, n (calls in both), n_changed, share_changed, n_scored (calls with a score in both),
    mean_abs_change, n_moved (calls whose reading or score changed). Moved: MOVED_COLUMNS, one row per
    call whose reading or score changed.
    """
    cols = [*KEY, "prompt_id", "a_id", "b_id", "reading", "s"]
    both = _latest_per_call(new).select(cols).join(
        _latest_per_call(old).select(*KEY, pl.col("reading").alias("reading_old"), pl.col("s").alias("s_old")),
        on=KEY, how="inner", nulls_equal=True)
    both = both.with_columns((pl.col("reading") != pl.col("reading_old")).alias("changed"),
                             (pl.col("s") - pl.col("s_old")).alias("change"))
    moves = pl.col("changed") | (pl.col("change").abs() > 1e-12)
    cells = both.group_by("format", "decoding", maintain_order=True).agg(
        pl.len().cast(pl.Int64).alias("n"), pl.col("changed").sum().cast(pl.Int64).alias("n_changed"),
        pl.col("change").is_not_null().sum().cast(pl.Int64).alias("n_scored"),
        pl.col("change").abs().mean().alias("mean_abs_change"), moves.sum().cast(pl.Int64).alias("n_moved")) \
        .with_columns((pl.col("n_changed") / pl.col("n")).alias("share_changed")).sort("format", "decoding")
    moved = both.filter(moves).sort("format", "decoding", "prompt_idx", "a_idx", "b_idx", "sample", nulls_last=True)
    return cells.select(CELL_COLUMNS), moved.select(MOVED_COLUMNS)


def _judge_id(read, judge: str) -> int:
    row = read.frame("judge_by_name", judge=judge)
    if not row.height:
        names = read.frame("judge_names")["name"].to_list()
        raise AuditError(f"no judge named '{judge}' (known: {', '.join(names) or 'none'})")
    return row["judge_id"][0]


def _judge_verdicts(read, pid: int, judge: str) -> pl.DataFrame:
    return read.frame("drift_verdicts", pool_id=pid, judge_id=_judge_id(read, judge))


def _workflow_error(pool: str, judge: str) -> AuditError:
    return AuditError(
        f"judge '{judge}' has no two versions on the same calls in pool '{pool}': the store keeps one "
        "verdict per call and judge name (a re-run under the same name resumes instead of adding a "
        "version, and each format has its own template, hence its own version). To measure drift, "
        f"re-score the anchor set under another judge name (e.g. `--judge-name {judge}-2026-12`) and "
        f"compare with `judgeaudit drift --pool {pool} --judge {judge}-2026-12 --against {judge}`")


def _tag_versions(verdicts: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(versions per format, verdicts with their format's version number). A version is numbered
    within its format, oldest first (each format has its own template, hence its own version)."""
    tables, tagged = [], []
    for fmt in sorted(verdicts["format"].unique().to_list()):
        rows = verdicts.filter(pl.col("format") == fmt)
        vers = versions_of(rows).drop("formats")
        tables.append(vers.select(pl.lit(fmt).alias("format"), pl.all()))
        tagged.append(rows.join(vers.select(*VERSION, "version"), on=VERSION, how="left", nulls_equal=True))
    if not tables:
        return versions_of(verdicts).drop("formats").select(pl.lit(None, pl.String).alias("format"), pl.all()), \
            verdicts.with_columns(pl.lit(None, pl.Int64).alias("version"))
    return pl.concat(tables), pl.concat(tagged, how="diagonal_relaxed")


def _row(vers: pl.DataFrame, fmt: str, version: int) -> dict:
    row = vers.filter((pl.col("format") == fmt) & (pl.col("version") == version)).row(0, named=True)
    return {k: v for k, v in row.items() if k != "format"}


def version_pairs(verdicts: pl.DataFrame, baseline_version: int | None = None) -> list[dict]:
    """Pure: per format of one judge's verdicts, its latest version and an earlier one that shares
    calls with it (`baseline_version`, numbered within the format, or else the latest such):
    [{"format", "current", "baseline", "current_version", "baseline_version"}]; formats without
    two versions on shared calls are left out."""
    vers, tagged = _tag_versions(verdicts)
    out = []
    for fmt in sorted(vers["format"].drop_nulls().unique().to_list()):
        mine = vers.filter(pl.col("format") == fmt).sort("last_cell_run")
        latest = mine.row(-1, named=True)["version"]
        current = tagged.filter((pl.col("format") == fmt) & (pl.col("version") == latest))
        earlier = mine.filter(pl.col("version") != latest)
        if baseline_version is not None:
            earlier = earlier.filter(pl.col("version") == baseline_version)
        for base in reversed(earlier["version"].to_list()):
            baseline = tagged.filter((pl.col("format") == fmt) & (pl.col("version") == base))
            if current.join(baseline, on=KEY, how="semi", nulls_equal=True).height:
                out.append({"format": fmt, "current": current, "baseline": baseline,
                            "current_version": _row(vers, fmt, latest), "baseline_version": _row(vers, fmt, base)})
                break
    return out


def _latest_versions(vers: pl.DataFrame) -> pl.DataFrame:
    """The latest version of each format (by its last cell run), formats in the order of those runs."""
    return vers.sort("last_cell_run").group_by("format", maintain_order=True).last()


def _current_info(vers: pl.DataFrame, judge: str) -> dict:
    """The current side's description from a judge's versions per format (_tag_versions' first frame,
    or sql/drift_versions.sql): the newest version, and the latest of each format under by_format."""
    by_format = {r["format"]: {k: v for k, v in r.items() if k != "format"} for r in _latest_versions(vers).to_dicts()}
    newest = vers.sort("last_cell_run").row(-1, named=True)
    return {"judge": judge, **{k: v for k, v in newest.items() if k != "format"}, "by_format": by_format}


def drift_sides(db: str | os.PathLike | None, pool: str, judge: str, against: str | None = None,
                baseline_version: int | None = None) -> dict:
    """The two sides of a drift comparison: {"versions", "current", "baseline", "current_version",
    "baseline_version"}. Versions are per format (each format has its own template). `current` is
    the judge's latest version of each format; the baseline is `against` (another judge name: the
    workflow the store supports, since it keeps one verdict per call and judge name), or else the
    judge's own earlier version of a format on the same calls (`baseline_version`, numbered within
    the format; default the latest earlier one). Without `against`, an AuditError explains the
    workflow when no format has two versions on shared calls."""
    with reading(db) as read:
        pid = read.pool_id(pool)
        mine = _judge_verdicts(read, pid, judge)
        other = _judge_verdicts(read, pid, against) if against else None
    if mine.height == 0:
        raise AuditError(f"judge '{judge}' has no verdicts on pool '{pool}'")
    vers, tagged = _tag_versions(mine)
    latest_per_format = _latest_versions(vers)
    current_info = _current_info(vers, judge)
    if other is not None:
        current = tagged.join(latest_per_format.select("format", "version"), on=["format", "version"], how="semi")
        other_versions = _tag_versions(other)[0]
        return {"versions": vers, "current": current.drop("version"), "baseline": other,
                "current_version": current_info,
                "baseline_version": {"judge": against, "versions": other_versions.to_dicts()}}
    pairs = version_pairs(mine, baseline_version)
    if not pairs:
        raise _workflow_error(pool, judge)
    return {"versions": vers,
            "current": pl.concat([p["current"] for p in pairs], how="diagonal_relaxed").drop("version"),
            "baseline": pl.concat([p["baseline"] for p in pairs], how="diagonal_relaxed").drop("version"),
            "current_version": {**current_info, "by_format": {p["format"]: p["current_version"] for p in pairs}},
            "baseline_version": {"judge": judge, "by_format": {p["format"]: p["baseline_version"] for p in pairs}}}


def drift_pairs(db: str | os.PathLike | None, pool: str) -> pl.DataFrame:
    """The pairs of the pool's judges a drift can compare: judge, against (both orders), n_shared (the calls
    both answered: format, decoding, prompt, slots, sample); juries left out. Sorted by judge, against."""
    with reading(db) as read:
        pid = read.pool_id(pool)
        many = read.frame("drift_pair_judges", pool_id=pid)["n"][0] > MASK_JUDGES
        return read.frame("drift_pairs_joined" if many else "drift_pairs", pool_id=pid)


def drift_pair_parts(db: str | os.PathLike | None, pool: str) -> pl.DataFrame:
    """drift_pairs by part (a judging: judge with a format), as the derived results store it: judge, format,
    against, n_shared for each judging the handle is scoped to (every judging of the pool when unscoped)
    and each judge of a lower id that shares calls with it in that format (sql/drift_pair_parts.sql). A
    pair is counted in the part of its judge of the higher id, so a new judge's parts are computed alone;
    pairs_of_parts puts the parts together as drift_pairs. Scoped, a format at a time (its calls alone
    read at once: out of core at 10M candidates). Two judgings are compared by a summary of each (its
    number of calls, sums of hashes of its call keys: one pass over the calls); only those whose summaries
    differ are joined on the call. The scope is the reading's own (its scope_judgings, by id), not found
    by reading every call of it."""
    judgings = getattr(db, "judgings", None)
    formats = sorted({fmt for _, fmt in judgings}) if judgings else [None]
    with reading(db) as read:
        pid = read.pool_id(pool)
        frames = [read.frame("drift_pair_parts", pool_id=pid, format=fmt, scoped=judgings is not None)
                  for fmt in formats]
    return pl.concat(frames).sort("judge", "format", "against")


def pairs_of_parts(parts: pl.DataFrame) -> pl.DataFrame:
    """drift_pairs (judge, against in both orders, n_shared summed over the formats; sorted) from
    drift_pair_parts' rows (each pair once per format)."""
    both = pl.concat([parts.select("judge", "against", "n_shared"),
                      parts.select(pl.col("against").alias("judge"), pl.col("judge").alias("against"), "n_shared")])
    return both.group_by("judge", "against").agg(pl.col("n_shared").sum().cast(pl.Int64)) \
        .filter(pl.col("n_shared") > 0).sort("judge", "against")


def first_pair(pairs: pl.DataFrame) -> tuple[str, str] | None:
    """The pair a drift opens on: the first judge (by name) that shares calls with another, against the
    first such other; None when no two judges share a call."""
    return tuple(pairs.row(0)[:2]) if pairs.height else None


def drift(db: str | os.PathLike | None, pool: str, judge: str, against: str | None = None,
          baseline_version: int | None = None) -> pl.DataFrame:
    """Per (format, decoding) cell: the latest version of `judge` against the judge `against` (or a stored
    earlier version of its own) on the same calls. Columns: CELL_COLUMNS (compare_verdicts' numbers),
    read in DuckDB a format at a time (sql/drift_cells.sql), out of core."""
    with reading(db) as read:
        _, formats = _comparison(read, pool, judge, against, baseline_version, head=False)
        return pl.concat([_cells_of(read, keys) if cells is None else cells for keys, cells in formats])


def _cells_of(read, keys: dict) -> pl.DataFrame:
    """drift_cells.sql's rows of one format (`keys`: its parameters) as drift's rows (CELL_COLUMNS)."""
    return read.frame("drift_cells", **keys).with_columns(
        pl.lit(keys["format"]).alias("format"), (pl.col("n_changed") / pl.col("n")).alias("share_changed")) \
        .select(CELL_COLUMNS)


def drift_items(db: str | os.PathLike | None, pool: str, judge: str, against: str | None = None,
                baseline_version: int | None = None, limit: int | None = None) -> pl.DataFrame:
    """The calls that moved between the two sides of `drift` (the first `limit`, all when None): format,
    decoding, prompt_id, a_id, b_id (null for pointwise), sample, reading_old, reading, s_old, s,
    change (s - s_old); drift's n_moved counts them all. Read in DuckDB a format at a time
    (sql/drift_moved.sql)."""
    moved = []
    with reading(db) as read:
        _, formats = _comparison(read, pool, judge, against, baseline_version, head=False)
        for keys, _ in formats:
            left = None if limit is None else limit - sum(m.height for m in moved)
            if left is None or left > 0:
                moved.append(read.frame("drift_moved", **keys, limit=left)
                             .with_columns(pl.lit(keys["format"]).alias("format")))
    empty = pl.DataFrame(schema={"format": pl.String, "decoding": pl.String, "prompt_id": pl.String,
                                 "a_id": pl.String, "b_id": pl.String, "sample": pl.Int64, "reading_old": pl.String,
                                 "reading": pl.String, "s_old": pl.Float64, "s": pl.Float64, "change": pl.Float64})
    return pl.concat([empty, *(m.select(MOVED_COLUMNS) for m in moved)], how="vertical_relaxed")


_NO_VERSIONS = {"versions": False, **{f"{side}_{part}": None for side in ("new", "old")
                                      for part in ("model", "template", "settings")}}


def _version_keys(row: dict, side: str) -> dict:
    return {f"{side}_model": row["judge_model"], f"{side}_template": row["template_hash"],
            f"{side}_settings": row["settings"]}


def _comparison(read, pool: str, judge: str, against: str | None, baseline_version: int | None,
                head: bool = True) -> tuple[dict | None, list[tuple[dict, pl.DataFrame | None]]]:
    """(head, formats) of a drift: head as drift_sides describes the two sides ({"current_version",
    "baseline_version", "versions"}, the versions read per format in DuckDB, sql/drift_versions.sql), and
    per format compared, in name order, the parameters of drift_cells.sql and drift_moved.sql. Against
    another judge, every format the judge answered; without, the formats where the latest version shares
    calls with an earlier one (version_pairs' choice, each candidate baseline tried in DuckDB), else the
    AuditError that explains the workflow. Each format comes with its drift rows where finding it
    computed them (None elsewhere), so they are not computed twice. No verdict is read into memory.
    Against another judge and without `head` (drift and drift_items, which show no head) the versions
    are not read, and head is None."""
    pid = read.pool_id(pool)
    jid = _judge_id(read, judge)
    other = _judge_id(read, against) if against is not None else jid
    formats = read.frame("drift_formats", pool_id=pid, judge_id=jid, against_id=other)
    if formats.height == 0:          # the formats the judge answered in the pool: none without a verdict there
        raise AuditError(f"judge '{judge}' has no verdicts on pool '{pool}'")
    base = {"pool_id": pid, "judge_id": jid, "against_id": other}
    compared = [({**base, **_NO_VERSIONS, "format": name, "lo": lo, "hi": hi}, None)
                for name, lo, hi in formats.iter_rows()]
    if against is not None and not head:
        return None, compared
    vers = read.frame("drift_versions", pool_id=pid, judge_id=jid)
    current = _current_info(vers, judge)
    if against is not None:
        return {"current_version": current, "versions": vers, "baseline_version": {
            "judge": against, "versions": read.frame("drift_versions", pool_id=pid, judge_id=other).to_dicts()}}, \
            compared
    chosen, by_current, by_baseline = [], {}, {}
    for name, lo, hi in formats.iter_rows():
        mine = vers.filter(pl.col("format") == name).sort("last_cell_run")
        latest = mine.row(-1, named=True)
        earlier = mine.filter(pl.col("version") != latest["version"])
        if baseline_version is not None:
            earlier = earlier.filter(pl.col("version") == baseline_version)
        for older in reversed(earlier.to_dicts()):
            keys = {**base, "versions": True, **_version_keys(latest, "new"), **_version_keys(older, "old"),
                    "format": name, "lo": lo, "hi": hi}
            cells = _cells_of(read, keys)
            if cells.height:                                 # the two versions share calls
                chosen.append((keys, cells))
                by_current[name] = {k: v for k, v in latest.items() if k != "format"}
                by_baseline[name] = {k: v for k, v in older.items() if k != "format"}
                break
    if not chosen:
        raise _workflow_error(pool, judge)
    head = {"current_version": {**current, "by_format": by_current}, "versions": vers,
            "baseline_version": {"judge": judge, "by_format": by_baseline}}
    return head, chosen


MOVED_BATCH = 200_000        # moved calls read at a time by drift_report


@contextlib.contextmanager
def drift_report(db: str | os.PathLike | None, pool: str, judge: str, against: str | None = None,
                 baseline_version: int | None = None,
                 batch_rows: int = MOVED_BATCH) -> Iterator[tuple[dict, Iterator[tuple[dict, Iterator[pl.DataFrame]]]]]:
    """`judgeaudit drift`'s whole document, out of core: (head, cells) while the reading is open.

    head: {"current_version", "baseline_version", "versions"} as drift_sides describes the two sides
    (`versions` a frame; the versions read per format in DuckDB, sql/drift_versions.sql, not from the
    verdicts). cells: per (format, decoding) cell in drift's order, (the cell as drift's row, its moved
    calls as frames of drift_items' columns without format and decoding, in call order), computed a
    format at a time as `drift` and `drift_items` do, the moved calls read `batch_rows` at a time. Each
    cell's frames are read before the next cell is drawn."""
    with reading(db) as read:
        head, formats = _comparison(read, pool, judge, against, baseline_version)

        def cells():
            for keys, per_cell in formats:
                per_cell = _cells_of(read, keys) if per_cell is None else per_cell
                moved = _Runs(pl.from_arrow(batch) for batch in read.batches("drift_moved", batch_rows, **keys,
                                                                            limit=None))
                for cell in per_cell.to_dicts():
                    yield cell, moved.of(cell["decoding"])

        yield head, cells()


class _Runs:
    """Frames sorted by decoding, taken a decoding at a time: the rows of one decoding (without the
    column), then the rest kept for the next."""

    def __init__(self, frames: Iterator[pl.DataFrame]):
        self._frames, self._left = frames, None

    def of(self, decoding: str) -> Iterator[pl.DataFrame]:
        while True:
            frame = self._left if self._left is not None else next(self._frames, None)
            self._left = None
            if frame is None:
                return
            other = (frame["decoding"] != decoding).arg_true()
            n = other[0] if other.len() else frame.height
            if n:
                yield frame.head(n).drop("decoding")
            if n < frame.height:
                self._left = frame.slice(n)
                return
