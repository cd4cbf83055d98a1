"""Every setting judgeaudit reads from the environment, in one place (docs/command-line.md#environment
lists each with its default and effect). Nothing else in the product reads `os.environ`: a setting is
a function here, read when it is called (so a test or a launched run that sets a variable is obeyed
at once), and a variable a run hands to its child process is named here too.

The command line's flags come first (`--db`), then these variables, then the defaults written here.
"""

from __future__ import annotations

import os
from pathlib import Path

DB = "JUDGEAUDIT_DB"                    # the database file (default ./judgeaudit.duckdb)
CONFIG = "JUDGEAUDIT_CONFIG"            # the server's configuration file (default judgeaudit.toml beside the database)
APP_PASSWORD = "JUDGEAUDIT_APP_PASSWORD"   # the dashboard's password when it listens beyond localhost
LOCK_TIMEOUT = "JUDGEAUDIT_LOCK_TIMEOUT"   # seconds a process waits for the database's lock (600)
STALE_S = "JUDGEAUDIT_STALE_S"          # a run silent this long is marked failed (300)
RUN_ID = "JUDGEAUDIT_RUN_ID"            # set by a launch for its child: the run row the child adopts
MAX_ROWS, MAX_BYTES = "JUDGEAUDIT_MAX_ROWS", "JUDGEAUDIT_MAX_BYTES"   # a browser upload's limits
IMPORT_BATCH = "JUDGEAUDIT_IMPORT_BATCH"   # rows a file import holds in memory at once
NO_DERIVE = "JUDGEAUDIT_NO_DERIVE"      # 1: a command that brings verdicts does not refresh the derived results
DEBUG = "JUDGEAUDIT_DEBUG"              # 1: an internal error prints its traceback
# runs of a queue that may run at once on this machine, one variable per queue
QUEUE_SLOTS = {"train": "JUDGEAUDIT_TRAIN_SLOTS"}
# set by torch's launcher (torchrun) for a distributed fine-tune; read, never set, here
WORLD_SIZE, RANK, LOCAL_RANK = "WORLD_SIZE", "RANK", "LOCAL_RANK"
HF_HUB_OFFLINE = "HF_HUB_OFFLINE"       # set to 1 before a model loads: nothing is fetched from a hub
TENSORBOARD_LOGGING_DIR = "TENSORBOARD_LOGGING_DIR"   # set to the DPO run's folder before it trains

DEFAULT_DB = "judgeaudit.duckdb"
DEFAULT_LOCK_TIMEOUT_S = 600.0
DEFAULT_STALE_S = 300.0
DEFAULT_MAX_ROWS, DEFAULT_MAX_BYTES = 5_000_000, 2 * 1024 ** 3
DEFAULT_IMPORT_BATCH = 1_000_000


def _get(name: str) -> str:
    return os.environ.get(name, "")


def _flag(name: str) -> bool:
    return _get(name) not in ("", "0")


def database_path(path: str | os.PathLike | None = None) -> Path:
    """The path rule: the path given, else $JUDGEAUDIT_DB, else ./judgeaudit.duckdb (made absolute
    once, by ingest.store.Database)."""
    return Path(path or _get(DB) or DEFAULT_DB)


def config_file() -> Path | None:
    """$JUDGEAUDIT_CONFIG, or None (then judgeaudit.toml beside the database)."""
    return Path(_get(CONFIG)) if _get(CONFIG) else None


def app_password() -> str:
    """The dashboard's password ('' when none is set)."""
    return _get(APP_PASSWORD)


def lock_timeout_s() -> float:
    """Seconds a process waits, with backoff, for the database's lock before it fails."""
    return float(_get(LOCK_TIMEOUT) or DEFAULT_LOCK_TIMEOUT_S)


def stale_after_s() -> float:
    """Seconds without a heartbeat after which a live-looking run counts as hung."""
    return float(_get(STALE_S) or DEFAULT_STALE_S)


def queue_slots(queue: str) -> int:
    """How many runs of a queue may run at once on this machine (1 unless its variable says more;
    a queue without a variable of its own takes 1)."""
    name = QUEUE_SLOTS.get(queue)
    return max(1, int((_get(name) if name else "") or 1))


def launched_run_id() -> int | None:
    """The run row a launched process adopts ($JUDGEAUDIT_RUN_ID, set by its launch), or None."""
    return int(_get(RUN_ID)) if _get(RUN_ID) else None


def upload_limits() -> tuple[int, int]:
    """(rows, bytes): the most a file uploaded in the dashboard may unpack to."""
    return int(_get(MAX_ROWS) or DEFAULT_MAX_ROWS), int(_get(MAX_BYTES) or DEFAULT_MAX_BYTES)


def import_batch_rows() -> int:
    """Rows a file import holds in memory at once (tests set it small to cross batch boundaries)."""
    return int(_get(IMPORT_BATCH) or DEFAULT_IMPORT_BATCH)


def refresh_after_commands() -> bool:
    """Whether a command that brings verdicts refreshes the pool's derived results as it ends."""
    return not _flag(NO_DERIVE)


def debug() -> bool:
    """Whether an internal error prints its traceback."""
    return _flag(DEBUG)


def api_key(variable: str | None) -> str | None:
    """The API key held by the environment variable a judge names (--api-key-env), or None. The key
    itself is never stored, logged or exported: only the variable's name is."""
    return os.environ.get(variable) or None if variable else None


def distributed() -> tuple[int, int, int]:
    """(world size, rank, local rank) of a fine-tune started by torch's launcher; (1, 0, 0) alone."""
    return int(_get(WORLD_SIZE) or 1), int(_get(RANK) or 0), int(_get(LOCAL_RANK) or 0)


def child_environment(**settings: str) -> dict[str, str]:
    """This process's environment with `settings` (variable name -> value) added: what a launched
    run's process starts with."""
    return {**os.environ, **settings}


def tensorboard_dir(folder: Path) -> None:
    """Where the trainer's TensorBoard logs go (unless the user set TENSORBOARD_LOGGING_DIR)."""
    os.environ.setdefault(TENSORBOARD_LOGGING_DIR, str(folder))


def hub_offline() -> None:
    """Forbid the model libraries any download from a hub (unless the user set HF_HUB_OFFLINE)."""
    os.environ.setdefault(HF_HUB_OFFLINE, "1")
