"""Cell runs: how one (judge, format) cell's verdicts were made (the `cell_runs` table): template
and its hash, decoding settings, the model id the judge reported, and the run doing it."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from . import _sql
from ._database import next_id


@dataclass(frozen=True)
class CellRunDescription:
    """How a cell run makes its cell's verdicts, as its `cell_runs` row records it. `source`: score,
    import, batch-export, batch-import (attach and jury record their cell runs themselves);
    `source_file`: the file or folder read or written; `template`: the prompt template (its hash is
    stored beside it); `decoding_settings`: what each call was sent (stored as JSON); `schedule` and
    `seed`: the call plan's; `notes`: free text (the plan's notes, what an export wrote)."""
    source: str
    source_file: str | None = None
    template: str | None = None
    decoding_settings: dict | None = None
    schedule: str | None = None
    seed: int | None = None
    notes: str | None = None

    @property
    def template_hash(self) -> str | None:
        """sha256 of the template, hex; None without one."""
        return hashlib.sha256(self.template.encode()).hexdigest() if self.template else None


def start_cell_run(con, pool: int, judge: int, format_id: int, description: CellRunDescription,
                   run_id: int | None = None) -> int:
    """Record how the cell (pool, judge, format_id)'s verdicts are being made, 'running' until
    finished; its cell run id. `run_id` is the run (runs table) doing it, if any (none for a file
    imported in the foreground). The model id the judge reports is recorded when it finishes."""
    d = description
    cell_run_id = next_id(con, "cell_runs")
    _sql.execute(con, "insert_cell_run", cell_run_id=cell_run_id, pool_id=pool, judge_id=judge, format_id=format_id,
                 source=d.source, source_file=d.source_file, template=d.template, template_hash=d.template_hash,
                 decoding_settings=json.dumps(d.decoding_settings) if d.decoding_settings is not None else None,
                 judge_model=None, schedule=d.schedule, seed=d.seed, notes=d.notes, run_id=run_id)
    return cell_run_id


def finish_cell_run(con, cell_run_id: int, status: str = "finished", judge_model: str | None = None) -> None:
    """Close a cell run; `judge_model` (the model id the judge reported) replaces the recorded one.
    The juries its judge is a member of are not touched: _juries.refresh_after refreshes them."""
    _sql.execute(con, "finish_cell_run", status=status, judge_model=judge_model, cell_run_id=cell_run_id)


def drop_cell_runs(con, cell_run_ids: list[int]) -> None:
    """Delete these cell runs, which hold no verdict (an import's, of cells whose calls it found all stored)."""
    if cell_run_ids:
        _sql.execute(con, "delete_cell_runs", cell_run_ids=cell_run_ids)


def close_orphan_cell_runs(con, pool: int, judge: int, reason: str) -> int:
    """Mark as failed the cell runs of (pool, judge) still 'running': called by a run that holds the
    pool and judge exclusively, so no live process is making them."""
    n = _sql.first(con, "running_cell_runs", pool_id=pool, judge_id=judge)[0]
    if n:
        _sql.execute(con, "fail_running_cell_runs", pool_id=pool, judge_id=judge, reason=reason)
    return n
