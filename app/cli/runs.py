"""`judgeaudit runs` and `judgeaudit cancel`: the background runs (score, train, evaluate, probe)."""

from __future__ import annotations

import click
import polars as pl

from ._common import current, db_option, emit_json, emit_table, json_option
from ingest.runs import cancel, list_runs

RUN_KEYS = ("id", "kind", "status", "pool", "pid", "started", "finished", "out_dir", "log", "config", "error")


def public_run(row: dict) -> dict:
    """A run as `runs --json` prints it (docs/command-line.md#judgeaudit-runs), plus its queue, heartbeat
    and progress."""
    return {"id": row["run_id"], "kind": row["kind"], "status": row["status"], "pool": row["pool"],
            "pid": row["pid"], "started": row["started_at"], "finished": row["finished_at"],
            "out_dir": row["out_dir"], "log": row["log_path"], "config": row["config"], "error": row["error"],
            "queue": row["queue"], "created": row["created_at"], "heartbeat": row["heartbeat_at"],
            "progress": row["progress"]}


@click.command("runs")
@click.option("--kind", type=click.Choice(["score", "train", "evaluate", "probe"]), default=None)
@db_option
@json_option
def runs_cmd(kind, db, as_json):
    """Every background run, oldest first (dead or hung runs are marked failed first)."""
    rows = [public_run(r) for r in list_runs(current(db), kind=kind)]
    if as_json:
        emit_json({"runs": rows})
    elif not rows:
        click.echo("no runs yet")
    else:
        emit_table(pl.DataFrame([{k: r[k] for k in ("id", "kind", "status", "pool", "pid", "started",
                                                       "finished", "error")} for r in rows]))


@click.command("cancel")
@click.argument("run_id", type=int)
@click.option("--wait", "wait_s", default=60.0, show_default=True,
              help="seconds to wait for the run to stop before its processes are killed")
@db_option
@json_option
def cancel_cmd(run_id, wait_s, db, as_json):
    """Stop a run (a training run saves its adapter first); a queued run never starts."""
    row = public_run(cancel(current(db), run_id, wait_s=wait_s))
    if as_json:
        emit_json({"run": row})
    else:
        click.echo(f"run {run_id}: {row['status']}" + (f" ({row['error']})" if row["error"] else ""))
