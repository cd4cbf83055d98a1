"""Verdicts made elsewhere (DESIGN.md 'Verdict file'): read, checked against the pool, parsed by
their formats, and stored as scoring stores its own answers. The whole file lands or nothing."""

from __future__ import annotations

import json
import os

import polars as pl

from .._errors import UserError
from ..files import first_repeat, first_row, read_verdicts
from ..store import writing
from ._anchor import reference_anchors
from .formats import BUILTIN, Format, load_format_spec, stored_formats
from .judges import public_endpoint


def _lookup(rows: pl.DataFrame, table: pl.DataFrame, on: list[str]) -> pl.DataFrame:
    """`rows` with the other columns of `table` (unique on `on`) beside each row's match, null where
    none; nulls in `on` match nulls. Joins the key columns only, so the wide rows are not copied."""
    found = rows.select(on).join(table, on=on, how="left", nulls_equal=True, maintain_order="left")
    return rows.hstack(found.drop(on))


def _parse_distinct(rows: pl.DataFrame, formats: dict[str, Format]) -> pl.DataFrame:
    """Parse each distinct (format, raw) once: judges repeat themselves, so this is fast."""
    pairs = rows.select("format", "raw").unique()
    parsed = [formats[f].parse(raw) if raw is not None else None for f, raw in pairs.iter_rows()]
    return pairs.with_columns(
        pl.Series("value", [p.value if p else None for p in parsed], pl.Float64),
        pl.Series("label", [p.label if p else None for p in parsed], pl.String),
        pl.Series("status", [p.status if p else "empty" for p in parsed], pl.String))


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
        unknown = [k for k in probs if k not in fmt.label_values()]
        if unknown:
            raise UserError(f"{t.at(int(rows['_row'][i]), 'label_probs')}: {unknown[0]!r} is not a label of "
                            f"format {fmt_name!r}")
        out.append(fmt.expected_value(probs) if fmt.kind == "pointwise" else None)
    return pl.Series("expected", out, pl.Float64)


def known_formats(unit, extra: dict) -> dict:
    """The formats a verdict file may name: the stored ones, the built-in ones and those of its
    --format-spec files ({spec path: Format}); a spec that redefines a stored format is refused."""
    formats = {**stored_formats(unit.format_rows()), **BUILTIN}
    for spec_path, fmt in extra.items():
        if fmt.name in formats and formats[fmt.name].spec_hash != fmt.spec_hash:
            raise UserError(f"{spec_path}: format '{fmt.name}' is already stored with a "
                            "different definition; give this one another name")
        formats[fmt.name] = fmt
    return formats


def import_verdicts(db: str | os.PathLike | None, path: str | os.PathLike, pool: str,
                    format_specs: list[str | os.PathLike] | str | os.PathLike | None = None,
                    capped: bool = True) -> dict:
    """Import verdicts made elsewhere (DESIGN.md 'Verdict file'). The whole file lands or nothing.
    `capped`: the file within the upload limits (files.limits); the command line passes False.

    Rows whose call (judge, format, prompt, candidates, sample) is already stored are skipped, so
    importing the same file twice changes nothing.
    """
    t, rows = read_verdicts(path, capped)
    if isinstance(format_specs, (str, os.PathLike)):
        format_specs = [format_specs]
    extra = {str(p): load_format_spec(p) for p in format_specs or []}
    with writing(db) as unit:
        pid = unit.pool_id(pool)
        formats = known_formats(unit, extra)
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

        prompts = unit.prompt_ids(pid)
        cands = unit.candidate_ids(pid)
        rows = _lookup(rows, prompts, ["prompt_id"])
        row = first_row(rows["prompt_idx"].is_null())
        if row is not None:
            raise UserError(f"{t.at(row, 'prompt_id')}: unknown prompt {rows['prompt_id'][row]!r} in pool '{pool}'")
        rows = rows.with_columns(pl.when(point).then(pl.col("candidate_id")).otherwise(pl.col("a_id"))
                                 .alias("_a"))
        lookup = cands.select("prompt_idx", "candidate_id", "cand_idx", "position")
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

        dup = first_repeat(rows, ["judge", "format", "decoding", "prompt_idx", "a_idx", "b_idx", "sample"])
        if dup:
            raise UserError(f"{t.at(dup[0])}: the same call (judge, format, decoding, prompt, candidates, "
                            f"sample) appears twice; first at line {t.line_of(dup[1])}")
        rows = rows.with_columns(_expected(t, rows, formats))

        rows = _lookup(rows, _parse_distinct(rows, formats), ["format", "raw"])
        rows = rows.with_columns(
            pl.when(pl.col("raw").is_null() & pl.col("error").is_not_null()).then(pl.lit("failed"))
            .otherwise(pl.col("status")).alias("status"))
        rows = _orient(rows, cands)
        endpoints = rows["endpoint"].drop_nulls().unique().to_list()   # stored without credentials
        rows = rows.with_columns(pl.col("endpoint").replace({e: public_endpoint(e) for e in endpoints}))

        judges = {j: unit.ensure_judge(j, "imported") for j in rows["judge"].unique().to_list()}
        fids = {f: unit.ensure_format(formats[f]) for f in rows["format"].unique().to_list()}
        attached = {(j, f) for _, _, j, f in unit.attached_cells(pid)} & \
            set(rows.select("judge", "format").unique().iter_rows())
        if attached:   # one row per call: the attached rows are not in the table the writer checks
            judge, fmt = sorted(attached)[0]
            raise UserError(f"{path}: judge {judge!r}, format {fmt!r} of pool '{pool}' is read from attached files; "
                            "detach them first (judgeaudit detach-verdicts) or attach this file with them")
        rows = rows.with_columns(pl.col("judge").replace_strict(judges, return_dtype=pl.Int32).alias("judge_id"),
                                 pl.col("format").replace_strict(fids, return_dtype=pl.Int32).alias("format_id"))
        # `decoding` comes from the file: greedy (the paper's protocol: generate, then parse) by default.
        n_in_file = rows.height
        names = {(jid, fid): (judge, fmt) for judge, jid in judges.items() for fmt, fid in fids.items()}
        runs = {}   # one cell run per (judge, format) that gets new rows, started in the order of their names

        def cell_runs(cells: list[tuple[int, int]]) -> dict[tuple[int, int], int]:
            for cell in sorted(cells, key=names.get):
                runs[cell] = unit.start_cell_run(pid, cell[0], formats[names[cell][1]], cell[1], "import",
                                                 source_file=str(path))
            return runs
        # calls already stored are left out: importing the same file twice changes nothing
        rows = unit.insert_verdicts(rows.with_columns(pl.lit(pid, pl.Int32).alias("pool_id")), cell_runs)
        for cell_run_id in runs.values():
            unit.finish_cell_run(cell_run_id)
        counts = rows.group_by("status").len().sort("status") if rows.height else None
    return {"pool": pool, "rows_in_file": n_in_file, "imported": rows.height,
            "skipped_existing": n_in_file - rows.height,
            "status_counts": dict(counts.iter_rows()) if counts is not None else {},
            "judges": sorted(judges), "formats": sorted(fids)}


def _orient(rows: pl.DataFrame, cands: pl.DataFrame) -> pl.DataFrame:
    """Mark comparative calls made in the reverse orientation of their item (DESIGN.md 'bias').

    Anchored: reverse when the anchor is in slot A against another candidate. The anchor comes
    from references; for a prompt without complete references it is the candidate shown as B most
    often (forward calls always show the anchor as B). Tournament: reverse when the later-listed
    candidate is in slot A.
    """
    if not (rows["kind"] != "pointwise").any():
        return rows.with_columns(pl.lit(False).alias("swapped"))
    anchors = reference_anchors(cands)
    anch_rows = rows.filter(pl.col("pairing") == "anchored")
    if anch_rows.height:
        missing = anch_rows.join(anchors, on="prompt_idx", how="anti")
        if missing.height:
            mode = missing.group_by("prompt_idx", "b_idx").len() \
                .sort("prompt_idx", "len", "b_idx", descending=[False, True, False]) \
                .group_by("prompt_idx", maintain_order=True).first() \
                .select("prompt_idx", pl.col("b_idx").alias("anchor_idx"))
            anchors = pl.concat([anchors, mode.with_columns(pl.col("anchor_idx").cast(anchors["anchor_idx"].dtype))])
    rows = rows.join(anchors, on="prompt_idx", how="left")
    swapped = (pl.when(pl.col("pairing") == "anchored")
               .then((pl.col("a_idx") == pl.col("anchor_idx")) & (pl.col("b_idx") != pl.col("a_idx")))
               .when(pl.col("pairing") == "tournament").then(pl.col("_pa") > pl.col("_pb"))
               .otherwise(False))
    return rows.with_columns(swapped.fill_null(False).alias("swapped")).drop("anchor_idx")
