"""Background runs (ingest.runs): launched processes, the runs table, cancel, queue, dead runs, and
the two races of a run's row (a key checked apart from its record; a beat after the close)."""

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from app.cli import command_line, request_for
from ingest import UserError, runs
from ingest.runs import RunRequest
from ingest.store import import_pool
from tests.conftest import query_rows
from tests.openai_server import OpenAIServer

EXE = str(Path(sys.executable).with_name("judgeaudit"))
RUN_KEYS = {"id", "kind", "status", "pool", "pid", "started", "finished", "out_dir", "log", "config", "error"}


def _pool(write_jsonl, n=12, prompts=3, text=lambda i: f"answer {i}"):
    return write_jsonl("pool.jsonl", [{"prompt_id": f"q{i % prompts}", "prompt": f"Question {i % prompts}",
                                       "candidate_id": f"c{i}", "response": text(i), "reference": float(i % 4)}
                                      for i in range(n)])


def _wait(db, run_id, statuses=("finished", "failed", "cancelled"), seconds=120):
    deadline = time.time() + seconds
    while time.time() < deadline:
        row = runs.get_run(db, run_id)
        if row and row["status"] in statuses:
            return row
        time.sleep(0.2)
    raise AssertionError(f"run {run_id} still {runs.get_run(db, run_id)['status']} after {seconds} s")


def _wait_exit(pid: int, seconds=120) -> None:
    """Until the launched process has ended: a run is closed before its command prints its summary
    and stores the pages' results."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return
        if state == "Z":          # ended, not yet reaped by this (launching) process
            return
        time.sleep(0.2)
    raise AssertionError(f"process {pid} still running after {seconds} s")


def _launch(db, request: RunRequest, **kw) -> int:
    """Launch a request as the dashboard does (app.data.launch_run): the request is the run's config,
    the process gets the command line built from it."""
    return runs.launch(db, request.command, [sys.executable, "-m", "app.cli", *command_line(request)],
                       request=request, **kw)


def test_launch_runs_the_callers_command_and_a_command_that_never_adopts_its_run_fails(db):
    rid = runs.launch(db, "probe", [sys.executable, "-c", "import os; print('hello from', os.environ['JUDGEAUDIT_RUN_ID'])"])
    deadline = time.time() + 90        # the row stays queued until a read sees the process gone
    while runs.get_run(db, rid)["status"] == "queued" and time.time() < deadline:
        time.sleep(0.5)
    row = runs.get_run(db, rid)
    assert f"hello from {rid}" in runs.log_tail(db, rid)
    assert row["status"] == "failed" and "gone without closing the run" in row["error"]


def test_launched_run_finishes_with_its_log_progress_and_cli_listing(db, write_jsonl):
    import_pool(db, _pool(write_jsonl), "p")
    request = request_for("score", pool="p", judge_spec="fake:sim", formats=["likert5", "binary"])
    rid = _launch(db, request, pool="p", key=runs.run_key("score", "p", "sim"))
    row = _wait(db, rid)
    assert row["status"] == "finished", runs.log_tail(db, rid)
    assert row["pid"] and row["started_at"] and row["finished_at"] and row["error"] is None
    assert row["progress"]["done"] == row["progress"]["total"] == 24
    assert Path(row["log_path"]).is_file() and Path(row["out_dir"]).is_dir()
    _wait_exit(row["pid"])
    assert "finished: 24 calls made" in runs.log_tail(db, rid)
    # the config is the request as launched, and beside it what the run resolved (its judge, formats)
    assert RunRequest.from_config(row["config"]) == request and "argv" not in row["config"]
    assert (row["config"]["judge"], row["config"]["provider"], row["config"]["formats"]) == (
        "sim", "fake", ["likert5", "binary"])
    # the verdicts' cell runs point back at the background run
    assert query_rows(db, "SELECT DISTINCT run_id FROM cell_runs") == [(rid,)]
    out = subprocess.run([EXE, "runs", "--json"], capture_output=True, text=True, timeout=60)
    listed = json.loads(out.stdout)["runs"]
    assert [r["id"] for r in listed] == [rid] and RUN_KEYS <= set(listed[0])
    assert listed[0]["status"] == "finished" and listed[0]["kind"] == "score"


def test_a_command_typed_in_a_terminal_records_its_request_as_the_dashboard_does(db, write_jsonl):
    import_pool(db, _pool(write_jsonl), "p")
    out = subprocess.run([EXE, "score", "--pool", "p", "--judge", "fake:sim", "--formats", "likert5, binary",
                          "--seed", "3", "--db", str(db)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    (row,) = runs.list_runs(db)
    # click's parsed parameters: the same request a form makes of these options (the list without its space)
    assert RunRequest.from_config(row["config"]) == request_for("score", pool="p", judge_spec="fake:sim",
                                                                 formats=["likert5", "binary"], seed=3)
    assert row["config"]["options"]["formats"] == ["likert5", "binary"] and "db" not in row["config"]["options"]
    assert row["config"]["judge"] == "sim" and row["log_path"] is None      # its output went to the terminal
    # what a command resolves goes beside its request, never in its place: nothing is recorded
    with pytest.raises(ValueError, match="the request's own keys"):
        with runs.running(db, "probe", config={"options": {"pool": "other"}}):
            pass
    assert len(runs.list_runs(db)) == 1


def test_launch_is_refused_while_the_same_key_is_live(db, write_jsonl):
    import_pool(db, _pool(write_jsonl, n=200, prompts=20), "p")
    with OpenAIServer(latency_s=0.05) as server:
        request = request_for("score", pool="p", judge_spec=f"openai:m@{server.url}", formats=["binary"],
                              concurrency=1)
        first = _launch(db, request, pool="p", key=runs.run_key("score", "p", "m"))
        _wait(db, first, statuses=("running",))
        with pytest.raises(UserError, match=f"run {first}, process"):
            _launch(db, request, pool="p", key=runs.run_key("score", "p", "m"))
        assert runs.active(db, runs.run_key("score", "p", "m"))["run_id"] == first
        done = runs.cancel(db, first, wait_s=30)
    assert done["status"] == "cancelled"
    made = query_rows(db, "SELECT count(*) FROM verdicts")[0][0]
    assert 0 < made < 200                     # stopped part-way, what it had answered is kept
    assert runs.active(db, runs.run_key("score", "p", "m")) is None


def test_a_killed_run_shows_as_failed_on_the_next_read(db, write_jsonl):
    import_pool(db, _pool(write_jsonl, n=200, prompts=20), "p")
    with OpenAIServer(latency_s=0.05) as server:
        request = request_for("score", pool="p", judge_spec=f"openai:m@{server.url}", formats=["binary"],
                              concurrency=1)
        rid = _launch(db, request, pool="p", key=runs.run_key("score", "p", "m"))
        row = _wait(db, rid, statuses=("running",))
        while runs.get_run(db, rid)["progress"] is None:      # it has started making calls
            time.sleep(0.1)
        os.killpg(row["pid"], signal.SIGKILL)
        deadline = time.time() + 30
        while runs.get_run(db, rid)["status"] == "running" and time.time() < deadline:
            time.sleep(0.2)
    row = runs.get_run(db, rid)
    assert row["status"] == "failed" and f"pid {row['pid']}" in row["error"] and "gone" in row["error"]
    assert query_rows(db, "SELECT status FROM cell_runs") == [("failed",)]


def test_stale_heartbeat_fails_a_hung_run(db, monkeypatch):
    monkeypatch.setenv("JUDGEAUDIT_STALE_S", "1")
    monkeypatch.setattr(runs, "HEARTBEAT_S", 3600.0)     # a hung process: alive, but never beats
    with pytest.raises(Exception):
        with runs.running(db, "probe") as run:
            time.sleep(1.5)
            (row,) = runs.list_runs(db)
            assert row["status"] == "failed" and "no heartbeat" in row["error"]
            raise RuntimeError("stop")
    assert runs.get_run(db, run.id)["status"] == "failed"


def test_queue_runs_one_at_a_time_and_a_queued_run_can_be_cancelled(db):
    events, release = [], threading.Event()

    def train(name, hold):
        with runs.running(db, "train", queue="train", poll_s=0.1) as run:
            events.append((name, "start", run.id))
            if hold:
                release.wait(30)
            events.append((name, "end", run.id))

    first = threading.Thread(target=train, args=("first", True))
    first.start()
    while not events:
        time.sleep(0.05)
    second = threading.Thread(target=train, args=("second", False))
    second.start()
    deadline = time.time() + 10
    while len(runs.list_runs(db)) < 2 and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    statuses = [r["status"] for r in runs.list_runs(db)]
    assert statuses == ["running", "queued"]            # the second waits its turn
    release.set()
    first.join(30)
    second.join(30)
    assert [e[:2] for e in events] == [("first", "start"), ("first", "end"), ("second", "start"), ("second", "end")]
    assert [r["status"] for r in runs.list_runs(db)] == ["finished", "finished"]

    # a queued run whose process never started (a crashed launcher) is cancelled at once
    from ingest.store import create_run
    made, _ = create_run(db, kind="train", config={}, pool=None, run_key=None, queue="train", host="here",
                         runs_dir=runs.runs_dir(db), verdict_of=lambda row: None)
    assert made["pid"] is None and runs.cancel(db, made["run_id"])["status"] == "cancelled"


def test_a_failed_run_does_not_stop_the_queue(db):
    with pytest.raises(ValueError):
        with runs.running(db, "train", queue="train"):
            raise ValueError("out of memory")
    with runs.running(db, "train", queue="train", poll_s=0.1) as run:
        pass
    rows = runs.list_runs(db)
    assert [r["status"] for r in rows] == ["failed", "finished"]
    assert rows[0]["error"] == "ValueError: out of memory" and rows[1]["run_id"] == run.id


def test_credentials_in_a_command_line_never_reach_the_runs_table(db):
    secret_url = "openai:m@http://user:s3cretpw@127.0.0.1:9/v1?api_key=sk-abcdef1234567890"
    with pytest.raises(Exception):
        with runs.running(db, "evaluate", config={"judges": [secret_url]}):
            raise RuntimeError("stop")
    rid = _launch(db, request_for("probe", judge_spec=secret_url, as_json=True))
    runs.cancel(db, rid, wait_s=30)
    stored = json.dumps(query_rows(db, "SELECT config, error FROM runs"))
    assert "s3cretpw" not in stored and "sk-abcdef1234567890" not in stored
    assert "127.0.0.1:9/v1" in stored            # the rest of the endpoint is still readable


def test_a_queued_run_cancelled_before_its_turn_ends_cancelled(db):
    release, seen = threading.Event(), []

    def first():
        with runs.running(db, "train", queue="train"):
            release.wait(30)

    holder = threading.Thread(target=first)
    holder.start()
    while not runs.list_runs(db):
        time.sleep(0.05)

    def second():
        try:
            with runs.running(db, "train", queue="train", poll_s=0.1):
                seen.append("ran")          # must never happen: it was cancelled while queued
        except runs.Cancelled as exc:
            seen.append(str(exc))

    waiter = threading.Thread(target=second)
    waiter.start()
    while len(runs.list_runs(db)) < 2:
        time.sleep(0.05)
    queued = runs.list_runs(db)[1]
    assert queued["status"] == "queued"
    runs.cancel(db, queued["run_id"])
    waiter.join(30)
    release.set()
    holder.join(30)
    assert seen == [f"run {queued['run_id']} was cancelled while it waited in the train queue"]
    assert [r["status"] for r in runs.list_runs(db)] == ["finished", "cancelled"]


# -- the two races of a run's row --------------------------------------------------------------------

def test_two_runs_of_one_key_started_at_once_one_runs_and_the_other_is_refused(db, monkeypatch):
    """Two terminal runs of one pool and judge, started at the same instant. Each waits, after its key
    check, for the other to have checked too (up to 2 s): were the check and the record two
    transactions, both would pass and both run. They are one, so the second check waits for the first
    run's record, sees it, and is refused."""
    from ingest.store import _runs as table
    meet, outcomes = threading.Barrier(2), []
    check = table._key_holder

    def check_then_meet(con, run_key, exclude):
        holder = check(con, run_key, exclude)
        with contextlib.suppress(threading.BrokenBarrierError):
            meet.wait(timeout=2)
        return holder

    monkeypatch.setattr(table, "_key_holder", check_then_meet)

    def start():
        try:
            with runs.running(db, "score", pool="p", key="score:p:j"):
                outcomes.append("ran")
                deadline = time.time() + 30          # live until the other start has had its answer
                while len(outcomes) < 2 and time.time() < deadline:
                    time.sleep(0.05)
        except UserError as exc:
            outcomes.append("refused" if "already working on this (score:p:j)" in str(exc) else str(exc))

    both = [threading.Thread(target=start) for _ in range(2)]
    for t in both:
        t.start()
    for t in both:
        t.join(60)
    assert sorted(outcomes) == ["ran", "refused"]
    assert [(r["kind"], r["status"]) for r in runs.list_runs(db)] == [("score", "finished")]   # no second row


def test_a_beat_that_waited_for_the_database_while_the_run_closed_changes_nothing(db, monkeypatch):
    """A heartbeat blocked on the database (here: this thread holds the process's connection lock)
    while the run closes lands afterwards; the closed row stays exactly as the close left it."""
    from ingest.runs import _running
    from ingest.store.connection import IN_PROCESS
    monkeypatch.setattr(_running, "HEARTBEAT_S", 3600.0)     # no beat but the one forced below
    with IN_PROCESS:
        with runs.running(db, "probe") as run:
            run.progress({"phase": "working", "done": 1, "total": 2})
            late = threading.Thread(target=run._beat)
            late.start()                                     # takes the progress, then waits for the lock
            time.sleep(0.3)
            run.progress({"phase": "done", "done": 2, "total": 2})
        closed = runs.get_run(db, run.id)                    # the lock is this thread's: it may read
        time.sleep(1.1)                                      # times are stored to the second
    late.join(30)
    assert not late.is_alive()
    assert closed["status"] == "finished" and closed["progress"] == {"phase": "done", "done": 2, "total": 2}
    assert runs.get_run(db, run.id) == closed


def test_a_live_run_keeps_its_state_in_its_folder_for_the_pages_that_follow_it(db, tmp_path):
    with runs.running(db, "probe", config={"what": "a test"}) as run:
        row = runs.get_run(db, run.id)        # what a page read from the database when it ran
        run.progress({"done": 3, "total": 10})
        live = runs.live_state(row, stale_s=30)
        assert (live["status"], live["progress"], live["recheck"]) == ("running", {"done": 3, "total": 10}, False)
        assert json.loads((Path(row["out_dir"]) / runs.LIVE_FILE).read_text())["pid"] == os.getpid()
        # a file older than stale_s (its run writes it every HEARTBEAT_S): read the database again
        assert runs.live_state(row, stale_s=30, now=time.time() + 31)["recheck"]
    # the run closed: its file says so (after the database does); the page reads the database again once
    # the process is gone too (a command stores its derived results after its run), or 10 s later
    ended = runs.live_state(row, stale_s=30)
    assert (ended["status"], ended["recheck"]) == ("finished", False)
    assert runs.live_state(row, stale_s=30, now=time.time() + 11)["recheck"]
    # no file (a launched process not started yet): the row as read; recheck once its process is gone
    quiet = {**row, "out_dir": str(tmp_path / "nothing-here")}
    assert runs.live_state(quiet, stale_s=30) == {**quiet, "recheck": False}
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    assert runs.live_state({**quiet, "pid": int(done.stdout), "pid_start": None}, stale_s=30)["recheck"]
    # a run that is over is never looked at again
    assert runs.live_state({**row, "status": "failed"}, stale_s=30) == {**row, "status": "failed", "recheck": False}


def test_a_run_started_elsewhere_shows_as_its_folder_without_the_database(db, tmp_path):
    """What an idle runs panel looks at (app/runs_panel.py, WATCH_S): the newest run id of a kind among
    the folders beside the database, made as each run is recorded, whether launched or typed, and the
    rows of the runs started since, as their folders keep them (filtered by pool)."""
    folder = runs.runs_dir(db)
    assert runs.newest_run_id(folder, "score") == 0 and runs.started_since(folder, "score", 0) == []
    with runs.running(db, "score", pool="a", config={"what": "typed in a terminal"}) as first:
        pass
    with runs.running(db, "probe", config={"what": "another kind"}) as other:
        pass
    assert runs.newest_run_id(folder, "score") == first.id
    assert runs.newest_run_id(folder, "probe") == other.id > first.id
    (folder / "notes-score").mkdir()            # not a run's folder: never read as one
    (folder / "12x-score").mkdir()
    with runs.running(db, "score", pool="b", config={"what": "a later one"}) as later:
        assert runs.newest_run_id(folder, "score") == later.id > other.id      # seen while it runs
        since = runs.started_since(folder, "score", first.id)
        # its row as the database has it (read here to compare: the page reads only the file)
        assert since == [runs.get_run(db, later.id)] and since[0]["status"] == "running"
        assert runs.started_since(folder, "score", first.id, pool="a") == []
        assert [r["run_id"] for r in runs.started_since(folder, "score", 0)] == [later.id, first.id]
    # a launched run's row is there as soon as it is launched, with its process
    request = runs.RunRequest("score", {"pool": "b"})
    launched = runs.launch(db, "score", [sys.executable, "-c", "import time; time.sleep(5)"], request=request,
                           pool="b")
    (row,) = [r for r in runs.started_since(folder, "score", later.id, pool="b")]
    assert (row["run_id"], row["status"], row["pid"] > 0) == (launched, "queued", True)
    assert {k: v for k, v in row.items() if k not in ("pid", "pid_start")} == \
        {k: v for k, v in runs.get_run(db, launched).items() if k not in ("pid", "pid_start")}
    runs.cancel(db, launched, wait_s=5)
