"""Cell runs: how one (judge, format) cell's verdicts were made (the `cell_runs` table): template
and its hash, decoding settings, the model id the judge reported, and the run doing it."""

from __future__ import annotations

import hashlib
import json

from ._database import next_id, one


def start_cell_run(con, pool: int, judge: int, fmt, format_id: int, source: str,
              source_file: str | None = None, template: str | None = None,
              decoding_settings: dict | None = None, judge_model: str | None = None,
              schedule: str | None = None, seed: int | None = None, notes: str | None = None,
              run_id: int | None = None) -> int:
    """Record how one (judge, format) cell's verdicts are being made; its cell run id. `run_id` is
    the run (runs table) doing it, if any (none for a file imported in the foreground)."""
    cell_run_id = next_id(con, "cell_runs", "cell_run_id")
    con.execute("INSERT INTO cell_runs (cell_run_id, pool_id, judge_id, format_id, source, source_file, "
                "template, template_hash, decoding_settings, judge_model, schedule, seed, notes, status, run_id) "
                "VALUES ($id, $pool, $judge, $fmt, $source, $file, $template, $thash, $settings, "
                "$model, $schedule, $seed, $notes, 'running', $run)",
                {"id": cell_run_id, "pool": pool, "judge": judge, "fmt": format_id, "source": source, "run": run_id,
                 "file": source_file, "template": template,
                 "thash": hashlib.sha256(template.encode()).hexdigest() if template else None,
                 "settings": json.dumps(decoding_settings) if decoding_settings is not None else None,
                 "model": judge_model, "schedule": schedule, "seed": seed, "notes": notes})
    return cell_run_id


def finish_cell_run(con, cell_run_id: int, status: str = "finished", judge_model: str | None = None) -> None:
    """Close a cell run; `judge_model` (the model id the judge reported) replaces the recorded one."""
    con.execute("UPDATE cell_runs SET status = $s, finished_at = current_timestamp, "
                "judge_model = coalesce($m, judge_model) WHERE cell_run_id = $id",
                {"s": status, "m": judge_model, "id": cell_run_id})


def close_orphan_cell_runs(con, pool: int, judge: int, reason: str) -> int:
    """Mark as failed the cell runs of (pool, judge) still 'running': called by a run that holds the
    pool and judge exclusively, so no live process is making them."""
    n = one(con, "SELECT count(*) FROM cell_runs WHERE pool_id = $p AND judge_id = $j AND status = 'running'",
                {"p": pool, "j": judge})[0]
    if n:
        con.execute("UPDATE cell_runs SET status = 'failed', finished_at = current_timestamp, "
                    "notes = concat_ws('; ', notes, $why) WHERE pool_id = $p AND judge_id = $j "
                    "AND status = 'running'", {"p": pool, "j": judge, "why": reason})
    return n
