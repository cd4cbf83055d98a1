"""Background runs (score, train, evaluate, probe): each a process of its own and a row in the
`runs` table (read and written through the store's run verbs), so the app and the CLI read the same
runs and no page holds a process handle. A run records its request (`RunRequest`) as its config;
`launch()` starts the command line its caller derived from it; the command doing the work wraps
itself in `running()`."""

from ._live import LIVE_FILE, ROW_FILE, live_state, newest_run_id, started_since
from ._process import alive, kill_group, proc_start, seconds_since_start
from ._registry import (ACTIVE, CANCEL_FILE, CANCEL_GRACE_S, HEARTBEAT_S, RUN_ENV, STATUSES, active, cancel,
                        get_run, launch, list_runs, log_tail, queue_slots, run_key, runs_dir, stale_after_s)
from ._request import RunRequest, asked, current_request
from ._running import Cancelled, Run, running

__all__ = ["ACTIVE", "CANCEL_FILE", "CANCEL_GRACE_S", "Cancelled", "HEARTBEAT_S", "LIVE_FILE", "ROW_FILE", "RUN_ENV",
           "Run", "RunRequest", "STATUSES", "active", "alive", "asked", "cancel", "current_request", "get_run",
           "kill_group", "launch", "list_runs", "live_state", "log_tail", "newest_run_id", "proc_start", "queue_slots",
           "run_key", "running", "runs_dir", "seconds_since_start", "stale_after_s", "started_since"]
