"""Kill anywhere (DESIGN.md 'One word per thing, one door to the database'; issue 25 §6).

A long command is started as its own process group (`python -m app.cli ...`), SIGKILLed after a
seeded delay drawn from [0, T] (T: how long the same command took when nobody killed it), and then
1. the database opens: a read-only connection, and `judgeaudit runs --json`;
2. the run it recorded, if it got that far, is dead (`failed` or `cancelled`), never `running` or
   `queued`, once a read has reconciled it; no cell run is left `running`;
3. the same command, run again to the end, leaves the rows a run never killed left: compared as
   multisets in SQL (both files attached read-only: `EXCEPT ALL` both ways), so a row stored twice
   is as visible as a row missing.

A `Command` says how to prepare its folder (once, then copied for the reference and each kill
point), its command line, the plain rows it leaves (SQL over `{s}`, the attached database, with
names for ids and no timestamps, paths or latencies) with the key no two of them may share, and the
files it leaves. `Point` records what each kill found: the delay, the phase it hit, the killed
run's status before and after the reconcile, the re-run's exit status.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import duckdb

from ingest.store.connection import CONFIG

REPO = Path(__file__).resolve().parents[2]
DB_NAME = "judgeaudit.duckdb"
DEAD = ("failed", "cancelled")


def kill_points() -> int:
    """Kill points per command, in all: 10 (`make test` runs the first of them, `make test-slow` the
    rest: tests/kill/test_kill.py), or JUDGEAUDIT_KILL_POINTS=N."""
    return max(1, int(os.environ.get("JUDGEAUDIT_KILL_POINTS", "10")))


@dataclasses.dataclass
class Rows:
    """One kind of row a command leaves: `sql` over the schema `{s}`, and `key`, the columns no two
    rows may share (None: compared as a multiset only). `compare=False`: it only tells how far a
    killed run got (a train run's row: a command run twice makes two runs, rightly)."""
    sql: str
    key: tuple[str, ...] | None = None
    compare: bool = True


@dataclasses.dataclass
class Command:
    name: str
    prepare: Callable[[Path], None]            # fills a folder with the state before the command
    argv: Callable[[Path], list[str]]          # the command line (after `python -m app.cli`) in a folder
    rows: dict[str, Rows]                      # what it leaves in the database
    progress: tuple[str, ...]                  # which of `rows` tell how far a killed run got
    files: Callable[[Path], dict] = lambda folder: {}   # what it leaves on disk, as plain values
    refused_when_done: str | None = None       # a re-run's refusal that is right once the work is stored
    records_run: bool = False                  # whether it records a background run (score, train, evaluate)
    stage: Callable[[Path], str] | None = None  # how far a killed run got, beyond its rows (train: its steps)
    timeout_s: float = 600


@dataclasses.dataclass
class Reference:
    folder: Path
    seconds: float
    counts: dict[str, int]
    files: dict


@dataclasses.dataclass
class Point:
    command: str
    point: int
    delay_s: float
    reference_s: float
    phase: str = ""
    killed_run: str | None = None          # "run 3: running -> failed" (None: it recorded no run)
    rerun_rc: int | None = None
    rerun_s: float | None = None
    problems: list[str] = dataclasses.field(default_factory=list)


def env_for(folder: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "JUDGEAUDIT_RUN_ID"}
    env.update(JUDGEAUDIT_DB=str(folder / DB_NAME), JUDGEAUDIT_LOCK_TIMEOUT="60", PYTHONUNBUFFERED="1",
               TOKENIZERS_PARALLELISM="false")
    return env


def command_line(folder: Path, args) -> list[str]:
    """`python -m app.cli ARGS --db FOLDER/judgeaudit.duckdb`: the command line a run's process gets."""
    return [sys.executable, "-m", "app.cli", *map(str, args), "--db", str(folder / DB_NAME)]


def cli(folder: Path, *args, ok: bool = True, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run a command in a folder to its end (`ok`: asserting that it succeeds)."""
    proc = subprocess.run(command_line(folder, args), cwd=REPO, env=env_for(folder), capture_output=True, text=True,
                          timeout=timeout)
    if ok:
        assert proc.returncode == 0, f"{args[0]}: exit {proc.returncode}\n{proc.stderr[-3000:]}"
    return proc


def timed(cmd: Command, folder: Path) -> tuple[subprocess.CompletedProcess, float]:
    """The command run to its end in `folder`, and the seconds it took."""
    started = time.monotonic()
    proc = cli(folder, *cmd.argv(folder), ok=False, timeout=cmd.timeout_s)
    return proc, time.monotonic() - started


def killed(cmd: Command, folder: Path, delay_s: float) -> tuple[bool, bool]:
    """Start the command as the leader of its own process group, SIGKILL the group after `delay_s`
    and reap it. Returns (whether it had ended by itself, whether it held the database file open
    at the kill: inside a connection, so in a transaction or between the statements of one)."""
    with open(folder / "command.out", "ab") as out:
        proc = subprocess.Popen(command_line(folder, cmd.argv(folder)), cwd=REPO, env=env_for(folder), stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    time.sleep(delay_s)
    ended = proc.poll() is not None
    holding = not ended and _holds(proc.pid, folder / DB_NAME)
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()
    return ended, holding


def _holds(pid: int, path: Path) -> bool:
    """Whether a process has `path` open (Linux's /proc; False where there is none)."""
    target = os.path.realpath(path)
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") == target:
                return True
        except OSError:        # closed meanwhile
            pass
    return False


def copy_state(source: Path, target: Path) -> Path:
    shutil.copytree(source, target, symlinks=True)
    return target


# -- the database, read raw (no reconcile) --------------------------------------------------------------

def _rows(con, sql: str, params: list | None = None) -> list[tuple]:
    return con.execute(sql, params or []).fetchall()


def run_rows(folder: Path) -> dict[int, str]:
    """run_id -> status, read without reconciling (what the killed process left)."""
    db = folder / DB_NAME
    if not db.exists():
        return {}
    con = duckdb.connect(str(db), read_only=True, config=CONFIG)
    try:
        tables = {r[0] for r in _rows(con, "SELECT table_name FROM information_schema.tables")}
        return dict(_rows(con, "SELECT run_id, status FROM runs")) if "runs" in tables else {}
    finally:
        con.close()


def _attached(**dbs: Path):
    con = duckdb.connect(config=CONFIG)
    for alias, path in dbs.items():
        con.execute(f"ATTACH '{path}' AS {alias} (READ_ONLY)")
    return con


MIGRATIONS = len(list((REPO / "ingest" / "store" / "schema").glob("*.sql")))


def _migrated(con, alias: str) -> bool:
    """Whether the attached database holds every migration (a first run killed early may leave a
    file that is not migrated yet): only then do the queries find their tables."""
    names = {r[0] for r in _rows(con, "SELECT table_name FROM information_schema.tables WHERE table_catalog = ?",
                                 [alias])}
    return "_migrations" in names and _rows(con, f"SELECT count(*) FROM {alias}._migrations")[0][0] == MIGRATIONS


def counts(cmd: Command, folder: Path) -> dict[str, int]:
    db = folder / DB_NAME
    if not db.exists():
        return {name: 0 for name in cmd.rows}
    con = _attached(got=db)
    try:
        if not _migrated(con, "got"):
            return {name: 0 for name in cmd.rows}
        return {name: _rows(con, f"SELECT count(*) FROM ({r.sql.format(s='got')})")[0][0]
                for name, r in cmd.rows.items()}
    finally:
        con.close()


def stored_share(cmd: Command, folder: Path, ref: Reference) -> tuple[int, int]:
    """(rows of the progress kinds that are also the reference's, the reference's number of them)."""
    db = folder / DB_NAME
    total = sum(ref.counts[name] for name in cmd.progress)
    if not db.exists():
        return 0, total
    con = _attached(got=db, ref=ref.folder / DB_NAME)
    try:
        if not _migrated(con, "got"):
            return 0, total
        same = 0
        for name in cmd.progress:
            sql = cmd.rows[name].sql
            both = f"({sql.format(s='got')}) INTERSECT ALL ({sql.format(s='ref')})"
            same += _rows(con, f"SELECT count(*) FROM ({both})")[0][0]
        return same, total
    finally:
        con.close()


def differences(cmd: Command, folder: Path, ref: Reference) -> list[str]:
    """Every way the folder's rows differ from the reference's, and every key held twice."""
    con = _attached(got=folder / DB_NAME, ref=ref.folder / DB_NAME)
    out = []
    try:
        for name, r in cmd.rows.items():
            if not r.compare:
                continue
            got, want = r.sql.format(s="got"), r.sql.format(s="ref")
            extra = _rows(con, f"({got}) EXCEPT ALL ({want})")
            missing = _rows(con, f"({want}) EXCEPT ALL ({got})")
            if extra or missing:
                out.append(f"{name}: {len(extra)} row(s) not in the reference (e.g. {extra[:2]}), "
                           f"{len(missing)} missing (e.g. {missing[:2]})")
            if r.key:
                keys = ", ".join(r.key)
                twice = _rows(con, f"SELECT {keys}, count(*) AS n FROM ({got}) GROUP BY ALL HAVING count(*) > 1")
                if twice:
                    out.append(f"{name}: {len(twice)} key(s) held twice or more (e.g. {twice[:2]})")
        # whatever the command: nothing left active, and every verdict under a cell run that exists
        left = _rows(con, "SELECT 'run', run_id, status FROM got.runs WHERE status IN ('queued', 'running') UNION ALL "
                          "SELECT 'cell run', cell_run_id, status FROM got.cell_runs WHERE status = 'running'")
        if left:
            out.append(f"left active after the re-run: {left}")
        orphans = _rows(con, "SELECT count(*) FROM got.verdicts v WHERE NOT EXISTS "
                             "(SELECT 1 FROM got.cell_runs c WHERE c.cell_run_id = v.cell_run_id)")[0][0]
        if orphans:
            out.append(f"{orphans} verdict(s) name a cell run that does not exist")
    finally:
        con.close()
    files = cmd.files(folder)
    if files != ref.files:
        out += [f"file {k}: {files.get(k)!r:.200} != reference {ref.files.get(k)!r:.200}"
                for k in sorted(set(files) | set(ref.files)) if files.get(k) != ref.files.get(k)]
    return out


# -- the reference and a kill point ------------------------------------------------------------------------

def _complete_run(cmd: Command, base: Path, folder: Path) -> float:
    proc, seconds = timed(cmd, copy_state(base, folder))
    assert proc.returncode == 0, f"{cmd.name} (never killed): exit {proc.returncode}\n{proc.stderr[-3000:]}"
    return seconds


def reference(cmd: Command, base: Path, folder: Path, again_below_s: float = 30) -> Reference:
    """The command run once, never killed, in a copy of the base state. A command that takes less
    than `again_below_s` runs twice: the second run must leave the same rows (so a difference after
    a kill is the kill's, not the command's own noise), and T is the faster of the two (the first
    pays for cold caches, and a T too long would waste kill points after the command's end)."""
    seconds = _complete_run(cmd, base, folder)
    ref = Reference(folder, seconds, {}, cmd.files(folder))
    ref.counts = counts(cmd, folder)
    assert all(ref.counts[name] > 0 for name in cmd.progress), f"{cmd.name}: the reference stored {ref.counts}"
    if seconds < again_below_s:
        twin = folder.with_name(folder.name + "-again")
        ref.seconds = min(seconds, _complete_run(cmd, base, twin))
        assert differences(cmd, twin, ref) == [], f"{cmd.name}: two runs never killed differ"
        shutil.rmtree(twin)
    return ref


def delay_of(cmd: Command, point: int, ref: Reference) -> float:
    """The seeded delay of a kill point: uniform in [0, T], the same for a point in every session."""
    return random.Random(f"{cmd.name}:{point}").uniform(0.0, ref.seconds)


def _phase(cmd: Command, folder: Path, ended: bool, holding: bool, new_runs: list[str], stored: int,
           total: int) -> str:
    """What the kill hit, in words: before the database existed, before or after the run row, with
    the database open (in a connection) or closed, and how far the work had got: how many of the
    rows were committed (or the command's own stage, for a fine-tune)."""
    if ended:
        return "after the command ended"
    if not (folder / DB_NAME).exists():
        return "before the database was created"
    run = f"run row {new_runs[0]}, " if new_runs else "before the run row, " if cmd.records_run else ""
    state = "database open" if holding else "database closed"
    if cmd.stage is not None:
        return f"{run}{state}, {cmd.stage(folder)}"
    if stored == 0:
        return f"{run}{state}, none of its rows committed"
    if stored < total:
        return f"{run}{state}, {stored} of {total} rows committed"
    return f"{run}all {total} rows committed, before exit ({state})"


def kill_point(cmd: Command, base: Path, folder: Path, point: int, ref: Reference) -> Point:
    """Start the command in a copy of the base state, SIGKILL it after the point's delay, check what
    it left, re-run it to the end; the Point, with every problem found."""
    copy_state(base, folder)
    before = run_rows(folder)
    rec = Point(cmd.name, point, round(delay_of(cmd, point, ref), 3), round(ref.seconds, 3))
    ended, holding = killed(cmd, folder, rec.delay_s)
    # 1. the database opens: read-only first, as the killed process left it
    try:
        after = run_rows(folder)
        stored, total = stored_share(cmd, folder, ref)
    except duckdb.Error as exc:
        rec.problems.append(f"the database does not open read-only after the kill: {exc}")
        return rec
    rec.phase = _phase(cmd, folder, ended, holding, [after[k] for k in sorted(set(after) - set(before))], stored,
                       total)
    listed = cli(folder, "runs", "--json", ok=False)
    if listed.returncode != 0:
        rec.problems.append(f"`runs --json` fails after the kill: {listed.stderr[-500:]}")
        return rec
    # 2. the killed run is dead once that read has reconciled it (or it had finished before the kill)
    now = {r["id"]: r["status"] for r in json.loads(listed.stdout)["runs"]}
    for run_id in sorted(set(after) - set(before)):
        rec.killed_run = f"run {run_id}: {after[run_id]} -> {now.get(run_id)}"
        if now.get(run_id) not in DEAD and not (after[run_id] == now.get(run_id) == "finished"):
            rec.problems.append(f"the killed run shows as {now.get(run_id)!r} after the reconcile")
    if left := _cell_runs_running(folder):
        rec.problems.append(f"cell run(s) {left} still `running` after the reconcile")
    # 3. the re-run ends as a run never killed did
    again, seconds = timed(cmd, folder)
    rec.rerun_s, rec.rerun_rc = round(seconds, 2), again.returncode
    refused_rightly = (cmd.refused_when_done is not None and again.returncode == 1 and stored == total
                       and cmd.refused_when_done in again.stderr)
    if again.returncode != 0 and not refused_rightly:
        rec.problems.append(f"the re-run failed (exit {again.returncode}): {again.stderr[-800:]}")
        return rec
    rec.problems += differences(cmd, folder, ref)
    return rec


def _cell_runs_running(folder: Path) -> list[int]:
    if not (folder / DB_NAME).exists():
        return []
    con = duckdb.connect(str(folder / DB_NAME), read_only=True, config=CONFIG)
    try:
        return [r[0] for r in _rows(con, "SELECT cell_run_id FROM cell_runs WHERE status = 'running'")]
    except duckdb.CatalogException:       # not migrated that far yet
        return []
    finally:
        con.close()


def log(rec: Point) -> None:
    """Append the point to $JUDGEAUDIT_KILL_LOG (JSON lines), when set."""
    path = os.environ.get("JUDGEAUDIT_KILL_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(dataclasses.asdict(rec)) + "\n")
