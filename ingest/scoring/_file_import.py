"""A Parquet verdict file from the command line, imported where it lies (files of any size at 1M
rows/s or more). DuckDB reads the file, places each row in the pool, leaves out the calls already stored and
appends the rest in one statement (ingest.store._file_import); Python parses each distinct answer once, as
the batch path does.

This path takes a file only when every row is a verdict of the pool and every call is held once. Any
other file goes down the batch path (_imported._Import), which stores the same rows or names the row at
fault: a call held twice (one pass first), an unknown format, a row the batch path would refuse or a label
distribution (its expected value is Python's; both found by the INSERT itself, which then stops and
rolls back), any other error on the way (rolled back too), an export-verdicts file (candidate_a /
candidate_b), a column of another type or a name DuckDB reads otherwise than polars (_layout). Both store
the same verdicts, cell runs and counts (tests/ingest/test_import_in_place.py); only the cell run ids can
differ: each judging (judge, format) of the file gets one before the INSERT, and a judging whose calls
were all stored gives its id back, which leaves a gap."""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from .._errors import UserError
from ..files import VERDICT_REQUIRED, VERDICT_TEXT
from ..store import CellRunDescription, NotInPlace, writing
from ._anchor import reference_anchors
from ._parsing import known_formats, parse_distinct
from .judges import public_endpoint

INTEGER = ("sample", "tokens_in", "tokens_out")
# the columns import_file_rows.sql reads (DuckDB matches them whatever their case; polars, the batch
# path, only as written), file_row_number the one it adds, candidate_a / candidate_b an export's
READ = frozenset(VERDICT_TEXT) | {"sample", "tokens_in", "tokens_out", "latency_ms", "label_probs",
                                  "file_row_number", "candidate_a", "candidate_b"}
GLOB = set("*?[]{}")                   # read_parquet would expand them: another file, or several


def _layout(path: Path) -> tuple[int, set[str]] | None:
    """(rows, column names) of a Parquet file whose columns are those this path reads, of the types it
    reads them as; None for any other file (the batch path names what is wrong with it): a name DuckDB
    would read otherwise than polars (another case of a field's, file_row_number), a path read_parquet
    would take as a pattern."""
    if path.suffix.lower() != ".parquet" or GLOB & set(str(path)):
        return None
    try:
        meta = pq.ParquetFile(path).metadata
        schema = meta.schema.to_arrow_schema()
    except Exception:
        return None
    names = set(schema.names)
    if not set(VERDICT_REQUIRED) <= names or names & {"candidate_a", "candidate_b", "file_row_number"}:
        return None
    if any(n.lower() in READ and n not in READ for n in names):
        return None
    if "candidate_id" not in names and not {"a_id", "b_id"} <= names:
        return None
    for field in schema:
        t = field.type
        if pa.types.is_dictionary(t):
            t = t.value_type
        text = pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_null(t)
        if field.name in VERDICT_TEXT and not text:
            return None
        if field.name in INTEGER and not (pa.types.is_integer(t) or pa.types.is_null(t)):
            return None
        if field.name == "latency_ms" and not (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_null(t)):
            return None
        if field.name == "label_probs" and not (text or pa.types.is_struct(t)):
            return None
    return meta.num_rows, names


def import_in_place(db: str | os.PathLike | None, path: str | os.PathLike, pool: str, extra: dict,
                    decoding_settings: dict | None = None) -> dict | None:
    """import_verdicts' summary of the file imported where it lies, or None when the file is for the
    batch path (nothing written then)."""
    path = Path(path)
    layout = _layout(path)
    if layout is None or layout[0] == 0:
        return None
    n_rows, columns = layout
    try:
        with writing(db) as unit:
            pid = unit.pool_id(pool)
            formats = known_formats(unit, extra)
            kinds = pl.DataFrame({"format": list(formats), "kind": [f.kind for f in formats.values()],
                                  "pairing": [f.pairing for f in formats.values()]},
                                 schema={"format": pl.String, "kind": pl.String, "pairing": pl.String})
            with unit.open_verdict_file(str(path), pid, kinds, "b_id" in columns) as file:
                if file.repeats():
                    return None
                seen = file.judgings()
                names = sorted(set(seen.select("judge", "format").iter_rows()))
                if any(f not in formats or j is None or not j.strip() for j, f in names):
                    return None                # the batch path names the row of the unknown format, the blank judge
                if {(j, f) for _, _, j, f in unit.attached_judging_ids(pid)} & set(names):
                    return None                # the batch path says which judging is read from attached files
                judge_ids = {j: unit.ensure_judge(j, "imported") for j in sorted({j for j, _ in names})}
                format_ids = {f: unit.ensure_format(formats[f]) for f in sorted({f for _, f in names})}
                judgings = pl.DataFrame(
                    [(j, f, judge_ids[j], format_ids[f], unit.holds_verdicts(pid, judge_ids[j], format_ids[f]))
                     for j, f in names], orient="row",
                    schema={"judge": pl.String, "format": pl.String, "judge_id": pl.Int32, "format_id": pl.Int32,
                            "held": pl.Boolean})
                how = CellRunDescription("import", source_file=str(path), decoding_settings=decoding_settings)
                cell_run_of = {judging: unit.start_cell_run(pid, judge_ids[judging[0]], format_ids[judging[1]], how)
                               for judging in names}
                judgings = judgings.with_columns(pl.Series("cell_run_id", [cell_run_of[j] for j in names], pl.Int32))

                answers = file.answers().filter(pl.col("raw").is_not_null())
                parsed = parse_distinct(answers, formats) if answers.height else pl.DataFrame(
                    schema={"format": pl.String, "raw": pl.String, "value": pl.Float64, "answer": pl.String,
                            "status": pl.String})
                endpoints = seen["endpoint"].drop_nulls().unique().to_list()
                endpoints = pl.DataFrame({"endpoint": endpoints, "public": [public_endpoint(e) for e in endpoints]},
                                         schema={"endpoint": pl.String, "public": pl.String})
                anchored = [f for _, f in names if formats[f].pairing == "anchored"]
                anchors = reference_anchors(unit.candidate_ids(pid)) if anchored else \
                    pl.DataFrame(schema={"prompt_idx": pl.Int32, "anchor_idx": pl.Int32})
                imported = file.insert(judgings, parsed, endpoints, anchors)
                by_cell_run = file.status_counts(list(cell_run_of.values()))
                # judgings whose calls were all stored before
                unit.drop_cell_runs([r for r in cell_run_of.values() if r not in by_cell_run])
                cell_run_of = {judging: r for judging, r in cell_run_of.items() if r in by_cell_run}
                if anchored and cell_run_of:
                    votes = file.anchor_votes(anchors)
                    if votes.height:
                        mode = votes.sort("prompt_idx", "len", "b_idx", descending=[False, True, False]) \
                            .group_by("prompt_idx", maintain_order=True).first() \
                            .select("prompt_idx", pl.col("b_idx").alias("anchor_idx"))
                        unit.orient_anchored(pid, list(cell_run_of.values()), sorted({format_ids[f] for f in anchored}),
                                             mode)
                counts: dict[str, int] = {}
                for statuses in by_cell_run.values():
                    for status, n in statuses.items():
                        counts[status] = counts.get(status, 0) + n
            for cell_run_id in cell_run_of.values():
                unit.finish_cell_run(cell_run_id)
            # the juries with these judges as members see their verdicts
            unit.refresh_juries_of(list(cell_run_of.values()))
    except (NotInPlace, UserError):
        # rolled back what this unit wrote (judges, formats, cell runs): the batch path reads the file, in
        # its order, so it stores the same rows or says the same words (the first row at fault, an
        # unknown pool, a judge registered otherwise, a judging read from attached files)
        return None
    return {"pool": pool, "rows_in_file": n_rows, "imported": imported,
            "skipped_existing": n_rows - imported, "status_counts": dict(sorted(counts.items())),
            "judges": sorted(judge_ids), "formats": sorted(format_ids)}
