"""Verdicts read where they lie (docs/scale.md#verdicts-where-they-lie,
docs/command-line.md#judgeaudit-attach-verdicts): `attach-verdicts` registers Parquet files with the
verdict file's columns as a read-only verdict source of a pool. Nothing is copied: the store keeps each
file's size, modification time and row count, the cells' judges, formats and cell runs, and each distinct
answer parsed once by its format's parser; the audit reads the rows through the store's `verdict_source`
view."""

from __future__ import annotations

import glob
import os
from pathlib import Path
from urllib.parse import unquote

import polars as pl
import pyarrow.parquet as pq

from .._errors import UserError
from ..store import writing
from ._parsing import known_formats, parse_distinct
from .formats import load_format_spec

NEEDED = ("prompt_id", "raw")


def _files(patterns: list[str]) -> list[Path]:
    """The Parquet files the globs name (`**` descends into folders), each once, sorted."""
    found: set[Path] = set()
    for pattern in patterns:
        hits = [Path(h) for h in glob.glob(os.path.expanduser(str(pattern)), recursive=True)]
        hits = [h for h in hits if h.is_file()]
        if not hits:
            raise UserError(f"{pattern}: no file matches")
        bad = [h for h in hits if h.suffix.lower() != ".parquet"]
        if bad:
            raise UserError(f"{bad[0]}: not a Parquet file (attach-verdicts reads .parquet; import-verdicts reads JSONL)")
        found.update(h.resolve() for h in hits)
    return sorted(found)


def _hive(path: Path) -> dict[str, str]:
    """The key=value folders of a path (judge=J/format=F/), values URL-decoded as hive writers encode them."""
    return {k: unquote(v) for k, _, v in (part.partition("=") for part in path.parent.parts if "=" in part)}


def _describe(path: Path, hive: bool) -> dict:
    """What attach records of a file (size, modification time, row count, hive judge and format),
    after checking that it holds the columns a verdict needs."""
    try:
        meta = pq.read_metadata(path)
    except Exception as exc:
        raise UserError(f"{path}: could not read as Parquet ({str(exc).splitlines()[0]})") from None
    names = set(meta.schema.names)
    folders = _hive(path) if hive else {}
    if hive and not ({"judge", "format"} & folders.keys()):
        raise UserError(f"{path}: no judge=J or format=F folder above it (--hive reads them from the path)")
    missing = [c for c in (*NEEDED, "judge", "format") if c not in names and c not in folders]
    if missing:
        raise UserError(f"{path}: missing required field(s) {', '.join(repr(m) for m in missing)} "
                        f"(found: {', '.join(sorted(names))})")
    if not names & {"candidate_id", "a_id", "candidate_a"}:
        raise UserError(f"{path}: each row needs 'candidate_id' (pointwise) or 'a_id' and 'b_id' (comparative)")
    st = path.stat()
    return {"path": str(path), "size": st.st_size, "mtime_ns": st.st_mtime_ns, "n_rows": meta.num_rows,
            "judge": folders.get("judge"), "format": folders.get("format")}


def attach_verdicts(db: str | os.PathLike | None, patterns: list[str], pool: str, hive: bool = False,
                    format_specs: list[str | os.PathLike] | None = None) -> dict:
    """Register the Parquet files matching `patterns` as the pool's attached verdicts (replacing any
    attached before). Every row is checked first, as import-verdicts checks a file: an unknown
    prompt or candidate is refused with its file and row, and so is a call held twice."""
    files = [_describe(p, hive) for p in _files(patterns)]
    extra = {str(p): load_format_spec(p) for p in format_specs or []}
    with writing(db) as unit:
        pid = unit.pool_id(pool)
        formats = known_formats(unit, extra)
        unit.attach_files(pid, files)
        problem = unit.attached_first_problem(pid)
        if problem:
            path, row, field, what = problem
            raise UserError(f"{path}, row {row}, field '{field}': {what}")
        judgings = unit.attached_judgings(pid)
        for judge, name in judgings:
            fmt = formats.get(name)
            if fmt is None:
                raise UserError(f"format {name!r} of judge {judge!r} in the attached files is unknown (known: "
                                f"{', '.join(sorted(formats))}; define others with --format-spec)")
            if fmt.pairing == "anchored":
                raise UserError(f"format {name!r} pairs against an anchor: attach reads pointwise and tournament "
                                "formats (import anchored verdicts with import-verdicts)")
        # each distinct answer of each judging (judge, format) parsed once by its format's parser, before the
        # judgings are recorded: every cell run the attach writes holds its parses (schema/018)
        raws = unit.attached_distinct_raws(pid)
        answers = raws.select("format", "raw").unique()
        parsed = parse_distinct(answers, formats) if answers.height else \
            pl.DataFrame(schema={"format": pl.String, "raw": pl.String, "value": pl.Float64, "answer": pl.String,
                                 "status": pl.String})
        parsed = raws.join(parsed, on=["format", "raw"]).select("judge", "format", "raw", "answer", "value", "status")
        cell_run_ids = []
        stored = {r[1]: r[0] for r in unit.judges().values()}
        for judge, name in judgings:
            # a judge already stored under the name (scored, say, on a sample before its pipeline ran on
            # the pool) is the judge of these rows: `score` then asks only the calls the files lack
            judge_id = stored.get(judge) or unit.ensure_judge(judge, "imported")
            format_id = unit.ensure_format(formats[name])
            cell_run_ids.append(unit.record_attached_judging(pid, judge, name, judge_id, format_id,
                                                             " ".join(map(str, patterns)), parsed))
        # each row's names mapped to the pool's ids once (schema/026): the readers join on integers. A row the
        # pool cannot map gets no mapping: fewer rows mapped than the files hold, and the first is named
        mapped, rows = unit.map_attached_ids(pid), sum(f["n_rows"] for f in files)
        unknown = unit.attached_unknown_call(pid) if mapped != rows else None
        if mapped != rows and not unknown:
            raise UserError(f"{mapped:,} of the {rows:,} attached rows map to one call of pool '{pool}' each")
        if unknown:
            path, row, field, value, prompt, fmt_name, kind = unknown
            where = f"{path}, row {row}, field '{field}'"
            if value is None:
                raise UserError(f"{where}: required for the {kind} format {fmt_name!r}")
            if field == "prompt_id":
                raise UserError(f"{where}: unknown prompt {value!r} in pool '{pool}'")
            raise UserError(f"{where}: unknown candidate {value!r} for prompt {prompt!r} in pool '{pool}'")
        twice = unit.attached_repeated_call(pid)
        if twice:
            judge, name, prompt, n = twice
            raise UserError(f"a call of judge {judge!r}, format {name!r}, prompt {prompt!r} is held {n} times "
                            "(twice in the attached files, or attached and stored): one row per call")
        for cell_run_id in cell_run_ids:
            unit.finish_cell_run(cell_run_id)
        unit.refresh_juries_of(cell_run_ids)  # the juries with these judges as members are refreshed
    return {"pool": pool, "files": len(files), "rows": sum(f["n_rows"] for f in files),
            "cells": [{"judge": j, "format": f} for j, f in judgings], "distinct_answers": answers.height}
