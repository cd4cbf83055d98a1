"""The processes behind background runs: start one detached, tell whether a pid is still the
process that was started (pids are reused), kill a run's process group, reap finished children."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from pathlib import Path


def proc_start(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (Linux), to tell a reused pid apart."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()
    return int(fields[19])


def seconds_since_start(pid: int | None = None) -> float | None:
    """How long ago the process (default: this one) started, from /proc (Linux); None elsewhere."""
    ticks = proc_start(pid or os.getpid())
    try:
        uptime = float(Path("/proc/uptime").read_text().split()[0])
    except (OSError, ValueError):
        return None
    return None if ticks is None else max(0.0, uptime - ticks / os.sysconf("SC_CLK_TCK"))


def alive(pid: int | None, pid_start: int | None) -> bool:
    if not pid:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:   # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    fields = stat[stat.rindex(")") + 2:].split()
    if fields[0] in ("Z", "X"):          # exited, not yet reaped by its parent
        return False
    return pid_start is None or int(fields[19]) == pid_start


def kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)   # launched runs lead their own session and group
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGKILL)


_children: list[subprocess.Popen] = []


def _reap_later(proc: subprocess.Popen) -> None:
    """Keep the handle so the launching process can reap its finished children (no zombies)."""
    _children.append(proc)
    _children[:] = [p for p in _children if p.poll() is None]


def spawn(command: list[str], log_path: Path, env: dict) -> int:
    """Start `command` detached in its own session (so a cancel can kill its whole group), stdout and
    stderr appended to log_path (never a pipe nobody reads), stdin closed; its pid."""
    with open(log_path, "ab") as log:     # the child keeps its own copy of the handle
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, env=env, cwd=os.getcwd())
    _reap_later(proc)
    return proc.pid
