"""Units of work for callers outside the store that read or write several things together (a scoring
run's set-up, a verdict import, a batch export or import): `writing(db)` opens the store's short-lived
read-write connection on a migrated database and one transaction, so the unit lands whole or not at
all; `reading(db)` opens a read-only one. Each hands out an object of named reads and writes, never
the connection (datasette's `execute_write_fn`, with verbs in place of a connection). The SQL behind
every method is a file of `sql/`, run by the store module named beside it.
"""

from __future__ import annotations

import contextlib
import json
import os
from typing import Iterator

import polars as pl

from . import _attached, _batches, _cell_runs, _file_import, _judges, _juries, _sql, _timings, _verdicts
from ._database import reader, transaction, writer
from .connection import find_pool, pool_id


class Reading:
    """What a unit of work reads, on the store's connection."""

    def __init__(self, con):
        self._con = con

    def pool_id(self, name: str) -> int:
        """The pool's id; a UserError naming the known pools when there is none."""
        return pool_id(self._con, name)

    def find_pool(self, name: str) -> int | None:
        return find_pool(self._con, name)

    def pool_instance(self, pool: int) -> tuple:
        """(pool_id, name, imported_at): what names the pool's instance in batch ids."""
        return _sql.first(self._con, "pool_instance", pool_id=pool)

    def prompt_ids(self, pool: int) -> pl.DataFrame:
        """prompt_id, prompt_idx of each prompt of the pool."""
        return _sql.frame(self._con, "prompt_ids", pool_id=pool)

    def candidate_ids(self, pool: int) -> pl.DataFrame:
        """prompt_idx, candidate_id, cand_idx, position, reference of each candidate (no texts)."""
        return _sql.frame(self._con, "candidate_ids", pool_id=pool)

    def prompt_texts(self, pool: int) -> pl.DataFrame:
        """prompt_idx, prompt of each prompt, in order."""
        return _sql.frame(self._con, "prompt_texts", pool_id=pool)

    def candidate_texts(self, pool: int) -> pl.DataFrame:
        """cand_idx, prompt_idx, position, reference, response of each candidate, in order."""
        return _sql.frame(self._con, "candidate_texts", pool_id=pool)

    def candidates_with_prompts(self, pool: int) -> pl.DataFrame:
        """cand_idx, prompt_idx, position, reference, response, prompt; by prompt and position."""
        return _sql.frame(self._con, "candidates_with_prompts", pool_id=pool)

    def candidate_lengths(self, pool: int) -> pl.DataFrame:
        """cand_idx, prompt_idx, position, reference, n_response, n_prompt (the texts' lengths in
        characters, not the texts); by prompt and position."""
        return _sql.frame(self._con, "candidate_lengths", pool_id=pool)

    def format_rows(self) -> list[dict]:
        """Each stored format: {format_id, name, spec, template} (scoring.formats.stored_formats
        makes them Formats)."""
        return _sql.frame(self._con, "stored_formats").to_dicts()

    def judges(self) -> dict[int, tuple]:
        """Each stored judge by id: (judge_id, name, provider, model, endpoint)."""
        return {r[0]: r for r in _sql.rows(self._con, "judges")}

    def stored_identity(self, judge: int) -> dict:
        """The identity stored with a judge (what store.judge_identity built when it was first used)."""
        return json.loads(_sql.first(self._con, "stored_identity", judge_id=judge)[0])

    def cell_constraint(self, pool: int, judge: int, fmt: str) -> str | None:
        """The constraint mechanism of the judge's latest constrained cell run of format `fmt`, or None."""
        row = _sql.first(self._con, "cell_constraint", pool_id=pool, judge_id=judge, format=fmt)
        return row[0] if row else None

    def cell_run_recipe(self, cell_run_id: int) -> tuple:
        """(template, decoding settings JSON, schedule, seed) of a cell run."""
        return _sql.first(self._con, "cell_run_recipe", cell_run_id=cell_run_id)

    def unanswered(self, calls: pl.DataFrame, pool: int, judge: int | None = None) -> pl.DataFrame:
        """The calls (CALL_KEY columns) the pool holds no answer for, from any judge or one: stored or
        in its attached files (read through verdict_source; a changed attached file is refused by name)."""
        _attached.ensure_source(self._con, pool)
        return _verdicts.unanswered(self._con, calls, pool, judge)

    def stored_statuses(self, rows: pl.DataFrame) -> pl.Series:
        """For each row (pool_id and CALL_KEY columns), its call's stored status; null when not stored."""
        return _verdicts.stored_statuses(self._con, rows)

    def attached_judging_ids(self, pool: int) -> list[tuple]:
        """(judge_id, format_id, judge, format) of each judging the pool's attached files hold."""
        return _attached.attached_judging_ids(self._con, pool)

    def judge_timings(self, provider: str, host: str) -> list[dict]:
        """What the runs of `provider` on `host` measured, the latest first (ingest.store._timings)."""
        return _timings.timings_on(self._con, provider, host)

    def exported_calls(self, custom_ids: list[str]) -> pl.DataFrame:
        """The stored calls among `custom_ids`, with their export's and judge's identities."""
        return _batches.exported_calls(self._con, custom_ids)


class Writing(Reading):
    """What a unit of work reads and writes, in its one transaction."""

    def ensure_judge(self, name: str, provider: str, model: str | None = None, endpoint: str | None = None,
                     settings: dict | None = None, identity: dict | None = None) -> int:
        """The judge's id, created on first use; a known name with another identity is refused."""
        return _judges.ensure_judge(self._con, name, provider, model, endpoint, settings, identity)

    def ensure_format(self, fmt) -> int:
        """The format's id, registered on first use; another definition under its name is refused."""
        return _judges.ensure_format(self._con, fmt)

    def start_cell_run(self, pool: int, judge: int, format_id: int, description: _cell_runs.CellRunDescription,
                       run_id: int | None = None) -> int:
        """A cell run of (pool, judge, format) made as `description` says, by the background run
        `run_id` if any; 'running' until finished; its id."""
        return _cell_runs.start_cell_run(self._con, pool, judge, format_id, description, run_id)

    def finish_cell_run(self, cell_run_id: int, status: str = "finished", judge_model: str | None = None) -> None:
        """Close a cell run; `judge_model` (the model id the judge reported) replaces the recorded one."""
        _cell_runs.finish_cell_run(self._con, cell_run_id, status, judge_model)

    def record_timings(self, run_id: int, host: str, provider: str, model: str | None, rows: list[dict]) -> None:
        """What the run measured of its judge's speed: one row per format and decoding (schema/021)."""
        _timings.record_timings(self._con, run_id, host, provider, model, rows)

    def refresh_juries_of(self, cell_run_ids: list[int]) -> None:
        """Refresh the juries that have these cell runs' judges among their members, where their
        members' verdicts moved (ingest.store._juries.refresh_after): a unit that finishes cell runs
        calls it after closing them, so the juries see their verdicts in the same transaction."""
        for cell_run_id in cell_run_ids:
            _juries.refresh_after(self._con, cell_run_id)

    def drop_cell_runs(self, cell_run_ids: list[int]) -> None:
        """Delete these cell runs, which hold no verdict."""
        _cell_runs.drop_cell_runs(self._con, cell_run_ids)

    def close_orphan_cell_runs(self, pool: int, judge: int, reason: str) -> int:
        """Fail the cell runs of (pool, judge) still 'running' (for a run holding both alone); how many."""
        return _cell_runs.close_orphan_cell_runs(self._con, pool, judge, reason)

    def insert_verdicts(self, rows: pl.DataFrame, cell_run_of: dict[tuple[int, int], int],
                        check_stored: bool = True) -> pl.DataFrame:
        """The rows whose call is not stored yet, appended, each judging's (judge_id, format_id) under
        its cell run in `cell_run_of` (ingest.store._verdicts.insert_verdicts)."""
        return _verdicts.insert_verdicts(self._con, rows, cell_run_of, check_stored)

    def open_verdict_file(self, path: str, pool: int, formats: pl.DataFrame, pairs: bool):
        """A context whose value reads and appends a Parquet verdict file where it lies
        (ingest.store._file_import.OpenFile)."""
        return _file_import.open_verdict_file(self._con, path, pool, formats, pairs)

    def holds_verdicts(self, pool: int, judge: int, fmt: int) -> bool:
        """Whether the judging (judge, format) of the pool holds any verdict yet."""
        return _verdicts.holds_verdicts(self._con, pool, judge, fmt)

    def orient_anchored(self, pool: int, cell_run_ids: list[int], format_ids: list[int],
                        anchors: pl.DataFrame) -> None:
        """The anchored calls of these cell runs oriented from `anchors` (ingest.store._verdicts.orient_anchored)."""
        _verdicts.orient_anchored(self._con, pool, cell_run_ids, format_ids, anchors)

    def insert_answers(self, rows: pl.DataFrame) -> dict:
        """A scoring batch upserted (ingest.store._verdicts.insert_answers); the counts."""
        return _verdicts.insert_answers(self._con, rows)

    def record_batch_export(self, pool: int, judge: int, identity: dict, decoding_settings: dict, folder: str,
                            files: list[dict], calls: pl.DataFrame) -> int:
        """Record a batch export and map its calls' custom_ids to it; the export id."""
        return _batches.record_batch_export(self._con, pool, judge, identity, decoding_settings, folder, files, calls)

    # attach-verdicts (ingest.store._attached): the pool's Parquet files checked and registered in place
    def attach_files(self, pool: int, files: list[dict]) -> None:
        """Replace the pool's attached files; the attached rows readable in this unit from here on."""
        _attached.attach_files(self._con, pool, files)

    def attached_first_problem(self, pool: int) -> tuple | None:
        """(path, row, field, problem) of the first attached row that is no verdict, or None."""
        return _attached.first_problem(self._con, pool)

    def attached_judgings(self, pool: int) -> list[tuple[str, str]]:
        """The (judge, format) names of the judgings the attached files hold."""
        return _attached.judgings(self._con, pool)

    def record_attached_judging(self, pool: int, judge: str, fmt: str, judge_id: int, format_id: int,
                                source_file: str, parsed: pl.DataFrame) -> int:
        """The judging's cell run (source 'attach'), holding the attached files and the judging's parsed answers."""
        return _attached.record_judging(self._con, pool, judge, fmt, judge_id, format_id, source_file, parsed)

    def map_attached_ids(self, pool: int) -> int:
        """Each attached row of the pool mapped to its prompt and candidate ids, kept (schema/026); how many."""
        return _attached.map_ids(self._con, pool)

    def attached_unknown_call(self, pool: int) -> tuple | None:
        """(path, row, field, value, prompt_id, format, kind) of the first row naming no prompt or candidate of the pool."""
        return _attached.unknown_call(self._con, pool)

    def attached_repeated_call(self, pool: int) -> tuple | None:
        """(judge, format, prompt_id, n) of a call held twice (attached twice, or attached and stored)."""
        return _attached.repeated_call(self._con, pool)

    def attached_distinct_raws(self, pool: int) -> pl.DataFrame:
        return _attached.distinct_raws(self._con, pool)


@contextlib.contextmanager
def reading(db: str | os.PathLike | None = None) -> Iterator[Reading]:
    """A read-only unit of work on an existing database (a missing file is a UserError)."""
    with reader(db) as con:
        yield Reading(con)


@contextlib.contextmanager
def writing(db: str | os.PathLike | None = None) -> Iterator[Writing]:
    """A unit of work in one transaction on a migrated database (made when missing): it lands whole,
    or rolls back on any exception."""
    with writer(db) as con, transaction(con):
        yield Writing(con)
