"""Verdicts made elsewhere (docs/files.md#verdict-file): read, checked against the pool, parsed by
their formats, and stored as scoring stores its own answers. The whole file lands or nothing."""

from __future__ import annotations

import itertools
import json
import os

import polars as pl

from .._errors import UserError
from ..files import first_repeat, first_row, verdict_batches
from ..store import CellRunDescription, writing
from ._anchor import reference_anchors
from ._file_import import import_in_place
from ._parsing import known_formats, parse_distinct
from .formats import Format, load_format_spec
from .judges import public_endpoint


def _lookup(rows: pl.DataFrame, table: pl.DataFrame, on: list[str]) -> pl.DataFrame:
    """`rows` with the other columns of `table` (unique on `on`) beside each row's match, null where
    none; nulls in `on` match nulls. Joins the key columns only, so the wide rows are not copied."""
    found = rows.select(on).join(table, on=on, how="left", nulls_equal=True, maintain_order="left")
    return rows.hstack(found.drop(on))


def _expected(t, rows: pl.DataFrame, formats: dict[str, Format]) -> pl.Series:
    """The expected value of each row's `label_probs` (pointwise formats; null otherwise), after
    checking that every label in it is one of its format's labels."""
    if rows["label_probs"].null_count() == rows.height:   # the common case: no distributions at all
        return pl.repeat(None, rows.height, dtype=pl.Float64, eager=True).alias("expected")
    out = []
    for i, (fmt_name, probs) in enumerate(zip(rows["format"].to_list(), rows["label_probs"].to_list())):
        if probs is None:
            out.append(None)
            continue
        fmt = formats[fmt_name]
        probs = json.loads(probs)
        unknown = [k for k in probs if k not in fmt.answer_values()]
        if unknown:
            raise UserError(f"{t.at(int(rows['_row'][i]), 'label_probs')}: {unknown[0]!r} is not an answer of "
                            f"format {fmt_name!r}")
        out.append(fmt.expected_value(probs) if fmt.kind == "pointwise" else None)
    return pl.Series("expected", out, pl.Float64)


KEY = ["judge_id", "format_id", "decoding", "prompt_idx", "a_idx", "b_idx", "sample"]   # one judge call
PARSE_CACHE = 500_000    # distinct (format, raw) answers kept parsed from one batch to the next


def import_verdicts(db: str | os.PathLike | None, path: str | os.PathLike, pool: str,
                    format_specs: list[str | os.PathLike] | str | os.PathLike | None = None,
                    capped: bool = True, batch_rows: int | None = None, in_place: bool = True,
                    decoding_settings: dict | None = None) -> dict:
    """Import verdicts made elsewhere (docs/files.md#verdict-file). The whole file lands or nothing.
    `capped`: the file within the upload limits (files.limits); the command line passes False.

    The file streams: it is read, checked, parsed and stored a batch of about
    `batch_rows` rows at a time (files.batch_rows), all in one transaction, so its memory follows
    the batch, and a problem in any batch rolls back the batches before it. A call repeated across
    batches is found from one hash a row (the file is read again only to name the two lines).

    Uncapped (the command line), a Parquet file is imported where it lies when DuckDB's checks pass
    (_file_import: the same rows stored, read by DuckDB at several times the speed); `in_place=False`
    always takes the batch path.

    Rows whose call (judge, format, prompt, candidates, sample) is already stored are skipped, so
    importing the same file twice changes nothing.

    `decoding_settings`: what each call of the file was sent, where the caller knows it (the bundled
    demo knows its temperatures: ingest/demo); recorded on each cell run the import starts, as a
    scoring run records its own. None: not recorded (the report says so).
    """
    if isinstance(format_specs, (str, os.PathLike)):
        format_specs = [format_specs]
    extra = {str(p): load_format_spec(p) for p in format_specs or []}
    if in_place and not capped:
        done = import_in_place(db, path, pool, extra, decoding_settings)
        if done is not None:
            return done
    batches = verdict_batches(path, capped, batch_rows)
    first = next(batches)                 # the file's own first problems before the database is touched
    with writing(db) as unit:
        file_import = _Import(unit, pool, path, extra, decoding_settings)
        for t, rows in itertools.chain([first], batches):
            file_import.add(t, rows)
        return file_import.finish(lambda: verdict_batches(path, capped, batch_rows))


class _Import:
    """One file's import in one unit of work, batch by batch: what the batches share (the pool's ids,
    the judges, formats and cell runs met so far, the answers parsed so far) and what adds up."""

    def __init__(self, unit, pool: str, path, extra: dict, decoding_settings: dict | None = None):
        self.unit, self.pool, self.path, self.settings = unit, pool, path, decoding_settings
        self.pid = unit.pool_id(pool)
        self.formats = known_formats(unit, extra)
        self.prompts = unit.prompt_ids(self.pid)
        self.cands = unit.candidate_ids(self.pid)
        self.attached = {(j, f) for _, _, j, f in unit.attached_judging_ids(self.pid)}
        self.anchors = None                # (prompt_idx, anchor_idx) from references, once needed
        self.judges, self.fids, self.held = {}, {}, {}          # held: (judge_id, format_id) -> had verdicts
        self.cell_run_of: dict[tuple[int, int], int] = {}     # (judge_id, format_id) -> its cell run
        self.hashes, self.votes, self.parsed = [], [], None
        self.n_in_file, self.imported, self.counts = 0, 0, {}

    def keyed(self, t, rows: pl.DataFrame) -> pl.DataFrame:
        """A batch checked against the pool and its formats, with each row's ids (prompt_idx, a_idx,
        b_idx, judge_id, format_id) and kind; a UserError naming the first row at fault."""
        formats, pool = self.formats, self.pool
        row = first_row(~rows["format"].is_in(list(formats)))
        if row is not None:
            raise UserError(f"{t.at(row, 'format')}: unknown format {rows['format'][row]!r} (known: "
                            f"{', '.join(sorted(formats))}; define others with --format-spec)")
        rows = rows.with_columns(
            pl.col("format").replace_strict({n: f.kind for n, f in formats.items()}, return_dtype=pl.String)
            .alias("kind"),
            pl.col("format").replace_strict({n: f.pairing for n, f in formats.items()}, return_dtype=pl.String)
            .alias("pairing"))
        point = rows["kind"] == "pointwise"
        for name, mask in (("candidate_id", point), ("a_id", ~point), ("b_id", ~point)):
            row = first_row(mask & rows[name].is_null())
            if row is not None:
                kind = "pointwise" if name == "candidate_id" else "comparative"
                raise UserError(f"{t.at(row, name)}: required for the {kind} format {rows['format'][row]!r}")

        rows = _lookup(rows, self.prompts, ["prompt_id"])
        row = first_row(rows["prompt_idx"].is_null())
        if row is not None:
            raise UserError(f"{t.at(row, 'prompt_id')}: unknown prompt {rows['prompt_id'][row]!r} in pool '{pool}'")
        rows = rows.with_columns(pl.when(point).then(pl.col("candidate_id")).otherwise(pl.col("a_id"))
                                 .alias("_a"))
        lookup = self.cands.select("prompt_idx", "candidate_id", "cand_idx", "position")
        if rows.height < lookup.height:   # a file sorted by prompt: each batch looks among its prompts only
            lookup = lookup.filter(pl.col("prompt_idx").is_between(rows["prompt_idx"].min(), rows["prompt_idx"].max()))
        rows = _lookup(rows, lookup.rename({"candidate_id": "_a", "cand_idx": "a_idx", "position": "_pa"}),
                       ["prompt_idx", "_a"])
        b_side = lookup.rename({"candidate_id": "b_id", "cand_idx": "b_idx", "position": "_pb"})
        if rows["b_id"].null_count() < rows.height:
            rows = _lookup(rows, b_side, ["prompt_idx", "b_id"])
        else:                                             # pointwise only: no slot B to look up
            rows = rows.with_columns(pl.lit(None, b_side.schema[c]).alias(c) for c in ("b_idx", "_pb"))
        for fld, col in (("candidate_id", "a_idx"), ("a_id", "a_idx"), ("b_id", "b_idx")):
            mask = rows[col].is_null() & (point if fld == "candidate_id" else ~point)
            if fld == "b_id":
                mask = mask & rows["b_id"].is_not_null()
            row = first_row(mask)
            if row is not None:
                value = rows["_a"][row] if col == "a_idx" else rows["b_id"][row]
                raise UserError(f"{t.at(row, fld)}: unknown candidate {value!r} for prompt "
                                f"{rows['prompt_id'][row]!r} in pool '{pool}'")
        for judge in rows["judge"].unique().to_list():
            if judge not in self.judges:
                self.judges[judge] = self.unit.ensure_judge(judge, "imported")
        for fmt in rows["format"].unique().to_list():
            if fmt not in self.fids:
                self.fids[fmt] = self.unit.ensure_format(formats[fmt])
        attached = self.attached & set(rows.select("judge", "format").unique().iter_rows())
        if attached:   # one row per call: the attached rows are not in the table the writer checks
            judge, fmt = sorted(attached)[0]
            raise UserError(f"{self.path}: judge {judge!r}, format {fmt!r} of pool '{pool}' is read from attached "
                            "files; detach them first (judgeaudit detach-verdicts) or attach this file with them")
        return rows.with_columns(
            pl.col("judge").replace_strict(self.judges, return_dtype=pl.Int32).alias("judge_id"),
            pl.col("format").replace_strict(self.fids, return_dtype=pl.Int32).alias("format_id"))

    def add(self, t, rows: pl.DataFrame) -> None:
        """Check, parse, orient and store one batch (the calls already stored left out)."""
        rows = self.keyed(t, rows)
        hashes = rows.select(pl.struct(KEY).hash()).to_series()
        dup = None if hashes.n_unique() == rows.height else first_repeat(rows, KEY)
        if dup:
            raise UserError(_repeated(t.at(dup[0]), t.line_of(dup[1])))
        self.hashes.append(hashes)
        # the file's `label_probs` is the stored `answer_probs` (docs/files.md#verdict-file)
        rows = rows.with_columns(_expected(t, rows, self.formats)).rename({"label_probs": "answer_probs"})
        rows = _lookup(rows, self.parse(rows), ["format", "raw"])
        rows = rows.with_columns(
            pl.when(pl.col("raw").is_null() & pl.col("error").is_not_null()).then(pl.lit("failed"))
            .otherwise(pl.col("status")).alias("status"))
        rows = self.orient(rows)
        endpoints = rows["endpoint"].drop_nulls().unique().to_list()   # stored without credentials
        rows = rows.with_columns(pl.col("endpoint").replace({e: public_endpoint(e) for e in endpoints}))
        # `decoding` comes from the file: greedy (the paper's protocol: generate, then parse) by default.
        self.n_in_file += rows.height
        # calls already stored are left out: importing the same file twice changes nothing
        # a judging (judge, format) that held no verdict before this import holds none of the batch's calls:
        # the batches before it were checked against it (hashes), so the look at the stored calls is left out
        for judging in rows.select("judge_id", "format_id").unique().iter_rows():
            if judging not in self.held:
                self.held[judging] = self.unit.holds_verdicts(self.pid, *judging)
        rows = rows.with_columns(pl.lit(self.pid, pl.Int32).alias("pool_id"))
        if any(self.held[judging] for judging in rows.select("judge_id", "format_id").unique().iter_rows()):
            rows = rows.filter(self.unit.stored_statuses(rows).is_null())
        # the calls left are new: a judging gets its cell run only when it gets rows
        judgings = rows.select("judge_id", "format_id").unique().rows()
        new = self.unit.insert_verdicts(rows, self.cell_runs_for(judgings), check_stored=False)
        self.imported += new.height
        for status, n in new.group_by("status").len().iter_rows():
            self.counts[status] = self.counts.get(status, 0) + n

    def parse(self, rows: pl.DataFrame) -> pl.DataFrame:
        """Each distinct (format, raw) of the batch parsed: those met in earlier batches from the
        cache (up to PARSE_CACHE of them), the others now."""
        pairs = rows.select("format", "raw").unique()
        if self.parsed is not None:
            pairs = pairs.join(self.parsed.select("format", "raw"), on=["format", "raw"], how="anti",
                               nulls_equal=True)
        table = parse_distinct(pairs, self.formats)
        if self.parsed is not None:
            table = pl.concat([self.parsed, table])
        if table.height <= PARSE_CACHE:
            self.parsed = table
        return table

    def cell_runs_for(self, judgings: list[tuple[int, int]]) -> dict[tuple[int, int], int]:
        """The cell run of each judging (judge_id, format_id) that gets new rows, started on first need,
        in the order of their names."""
        names = {(jid, fid): (judge, fmt) for judge, jid in self.judges.items() for fmt, fid in self.fids.items()}
        for judging in sorted((j for j in judgings if j not in self.cell_run_of), key=names.get):
            how = CellRunDescription("import", source_file=str(self.path), decoding_settings=self.settings)
            self.cell_run_of[judging] = self.unit.start_cell_run(self.pid, *judging, how)
        return {judging: self.cell_run_of[judging] for judging in judgings}

    def orient(self, rows: pl.DataFrame) -> pl.DataFrame:
        """_orient for one batch: an anchored call whose prompt has no reference anchor is oriented at
        the end, from the whole file's votes (finish)."""
        if not (rows["kind"] != "pointwise").any():
            return rows.with_columns(pl.lit(False).alias("swapped"))
        if self.anchors is None:
            self.anchors = reference_anchors(self.cands)
        votes = rows.filter(pl.col("pairing") == "anchored").join(self.anchors, on="prompt_idx", how="anti")
        if votes.height:
            self.votes.append(votes.group_by("prompt_idx", "b_idx").len())
        return _orient(rows, self.anchors)

    def finish(self, again) -> dict:
        """After the last batch: refuse a call the file holds twice (in two batches), orient the
        anchored calls whose anchor the file's votes give, close the cell runs; the summary."""
        hashes = pl.concat(self.hashes)
        if hashes.n_unique() < hashes.len():
            self.repeats(again(), hashes.filter(hashes.is_duplicated()).unique())
        if self.votes:
            mode = pl.concat(self.votes).group_by("prompt_idx", "b_idx").agg(pl.col("len").sum()) \
                .sort("prompt_idx", "len", "b_idx", descending=[False, True, False]) \
                .group_by("prompt_idx", maintain_order=True).first() \
                .select("prompt_idx", pl.col("b_idx").alias("anchor_idx"))
            anchored = [fid for f, fid in self.fids.items() if self.formats[f].pairing == "anchored"]
            self.unit.orient_anchored(self.pid, list(self.cell_run_of.values()), anchored, mode)
        for cell_run_id in self.cell_run_of.values():
            self.unit.finish_cell_run(cell_run_id)
        # the juries with these judges as members see their verdicts
        self.unit.refresh_juries_of(list(self.cell_run_of.values()))
        return {"pool": self.pool, "rows_in_file": self.n_in_file, "imported": self.imported,
                "skipped_existing": self.n_in_file - self.imported,
                "status_counts": dict(sorted(self.counts.items())),
                "judges": sorted(self.judges), "formats": sorted(self.fids)}

    def repeats(self, batches, hashes: pl.Series) -> None:
        """Two rows of different batches share a call's hash: read the file again, keep the rows with
        those hashes, and name the first that repeats an earlier row's call (hashes can meet by
        chance: then nothing is raised)."""
        kept = []
        for t, rows in batches:
            rows = self.keyed(t, rows)
            rows = rows.filter(rows.select(pl.struct(KEY).hash()).to_series().is_in(hashes.implode()))
            kept.append(rows.select(KEY).with_columns(
                pl.Series("_where", [t.at(i) for i in rows["_row"].to_list()], pl.String),
                pl.Series("_line", t.lines[rows["_row"].to_numpy()], pl.Int64)))
        rows = pl.concat(kept).with_row_index("_row")
        dup = first_repeat(rows, KEY)
        if dup:
            raise UserError(_repeated(rows["_where"][dup[0]], rows["_line"][dup[1]]))


def _repeated(at: str, first_line: int) -> str:
    return (f"{at}: the same call (judge, format, decoding, prompt, candidates, sample) appears twice; "
            f"first at line {first_line}")


def _orient(rows: pl.DataFrame, anchors: pl.DataFrame) -> pl.DataFrame:
    """Mark comparative calls made in the reverse orientation of their item (docs/metrics.md#slot-bias-bias).

    Anchored: reverse when the anchor is in slot A against another candidate. The anchor comes
    from references (`anchors`); for a prompt without complete references it is the candidate shown
    as B most often in the file (forward calls always show the anchor as B): _Import.finish sets
    those once the whole file is read. Tournament: reverse when the later-listed candidate is in
    slot A.
    """
    rows = rows.join(anchors, on="prompt_idx", how="left", maintain_order="left")
    swapped = (pl.when(pl.col("pairing") == "anchored")
               .then((pl.col("a_idx") == pl.col("anchor_idx")) & (pl.col("b_idx") != pl.col("a_idx")))
               .when(pl.col("pairing") == "tournament").then(pl.col("_pa") > pl.col("_pb"))
               .otherwise(False))
    return rows.with_columns(swapped.fill_null(False).alias("swapped")).drop("anchor_idx")
