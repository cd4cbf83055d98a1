"""Background runs (score, train, evaluate, probe): each a process of its own and a row in the
`runs` table, written only here, so the app and the CLI read the same runs and no page holds a
process handle. `launch()` starts a command line its caller gives; the command doing the work
wraps itself in `running()`."""

from ._process import alive, kill_group, proc_start
from ._registry import (ACTIVE, CANCEL_FILE, CANCEL_GRACE_S, COLUMNS, HEARTBEAT_S, RUN_ENV, STATUSES, active,
                        cancel, get_run, launch, list_runs, log_tail, queue_slots, run_key, runs_dir,
                        stale_after_s)
from ._running import Cancelled, Run, running

__all__ = ["ACTIVE", "CANCEL_FILE", "CANCEL_GRACE_S", "COLUMNS", "Cancelled", "HEARTBEAT_S", "RUN_ENV", "Run",
           "STATUSES", "active", "alive", "cancel", "get_run", "kill_group", "launch", "list_runs", "log_tail",
           "proc_start", "queue_slots", "run_key", "running", "runs_dir", "stale_after_s"]
