"""`judgeaudit apply` as a background run (train/apply.py apply_run; the Distil section's Apply form,
app/views/curate/distil_apply.py): its request and command line, a run recorded from the terminal, a
run launched from the page (its progress, its output shards, attached to the pool), and a cancel (the
shards written stay whole, the one being written is dropped, and a second run scores only the rest)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from click.testing import CliRunner

from app.cli import cli, command_line, request_for
from app.cli._request import COMMANDS
from ingest.runs import cancel, get_run, kill_group, launch, list_runs
from ingest.scoring.judges.distilled import Student
from app.views.curate.distil_apply import apply_request
from tests.app.conftest import open_page
from tests.conftest import query_rows
from tests.train.test_distil import taught  # noqa: F401 (the fixture)
from train.apply import apply_key, apply_run
from train.distil import distil


def _shards(folder: Path, rows: list[dict], n: int) -> Path:
    """rows cut into n Parquet shards folder/part-i.parquet."""
    folder.mkdir(parents=True, exist_ok=True)
    size = -(-len(rows) // n)
    for i in range(n):
        pq.write_table(pa.Table.from_pylist(rows[i * size:(i + 1) * size]), folder / f"part-{i:03d}.parquet")
    return folder


def _wait(db, run_id: int, seconds: float = 240) -> dict:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        row = get_run(db, run_id)
        if row["status"] not in ("queued", "running"):
            return row
        time.sleep(0.5)
    raise AssertionError(f"run {run_id} still {row['status']} after {seconds} s")


def test_an_apply_request_goes_to_a_command_line_and_back(tmp_path):
    request = request_for("apply", model_dir=str(tmp_path), shards="-odd/**/*.parquet", out=str(tmp_path / "o"),
                          attach="p", batch_rows=100)
    argv = command_line(request)
    # options by their flags, then the two arguments after `--` (a glob that starts with '-' stays a value)
    assert argv == ["apply", "--out", str(tmp_path / "o"), "--batch-rows", "100", "--attach", "p", "--",
                    str(tmp_path), "-odd/**/*.parquet"]
    ctx = COMMANDS["apply"].make_context("apply", argv[1:])
    assert (str(ctx.params["model_dir"]), ctx.params["shards"], ctx.params["attach"]) == \
        (str(tmp_path), "-odd/**/*.parquet", "p")


def test_apply_typed_in_a_terminal_is_a_recorded_run(db, tmp_path, taught):  # noqa: F811
    rows, _ = taught
    card = distil(db, "p", "teacher", "likert5", tmp_path / "s", held_out=0.25, seed=3)
    assert card["agreement_held_out"]["exact_lo"] is not None      # distil --json carries the interval
    got = CliRunner().invoke(cli, ["distil", "--pool", "p", "--judge", "teacher", "--format", "binary", "--out",
                                   str(tmp_path / "b"), "--db", str(db), "--json"])
    assert got.exit_code == 0, got.output
    doc = json.loads(got.stdout)
    assert {"exact_lo", "exact_hi"} <= set(doc["agreement_held_out"]) and set(doc["humans_held_out"]) == {"accept", "pair"}
    _shards(tmp_path / "shards", rows, 3)
    got = CliRunner().invoke(cli, ["apply", str(tmp_path / "s"), f"{tmp_path}/shards/*.parquet", "--out",
                                   str(tmp_path / "v"), "--db", str(db), "--json"])
    assert got.exit_code == 0, got.output
    doc = json.loads(got.stdout)
    assert (doc["scored"], doc["rows"], doc["stopped"]) == (3, 240, False)
    runs = list_runs(db, kind="apply")
    assert [(r["status"], r["run_key"]) for r in runs] == [("finished", apply_key(tmp_path / "v"))]
    assert runs[0]["progress"]["done"] == runs[0]["progress"]["total"] == 240
    assert runs[0]["config"]["options"]["shards"] == f"{tmp_path}/shards/*.parquet"


def test_the_apply_form_starts_a_run_that_scores_the_shards_and_attaches_them(db, tmp_path, monkeypatch, taught):  # noqa: F811
    rows, _ = taught
    card = distil(db, "p", "teacher", "likert5", None, held_out=0.25, seed=0)
    student = Student.load(card["folder"])
    name = f"distilled-{student.sha256[:12]}"
    _shards(tmp_path / "shards", rows, 4)          # 240 rows: 60 a shard
    at = open_page(db, monkeypatch, "curate", {"pool": "p"})
    assert not at.exception, at.exception
    next(t for t in at.text_input if t.label == "Shards (a glob)").set_value(f"{tmp_path}/shards/*.parquet")
    out_box = next(t for t in at.text_input if t.label == "Output folder")
    assert out_box.value == "" and out_box.placeholder == str(Path(card["folder"]) / "applied")   # empty: there
    assert apply_request("p", card, "x/*.parquet", "").options["out"] == str(Path(card["folder"]) / "applied")
    out_box.set_value(str(tmp_path / "applied"))
    next(b for b in at.button if b.label == "Apply").click().run()
    assert not at.exception, at.exception
    assert any("Started apply run" in s.value for s in at.success), [e.value for e in at.error]
    (run,) = list_runs(db, kind="apply", pool="p")
    assert run["config"]["options"]["attach"] == "p" and run["run_key"] == apply_key(tmp_path / "applied")
    row = _wait(db, run["run_id"])
    assert row["status"] == "finished", (row["error"], Path(row["log_path"]).read_text())
    assert row["progress"]["done"] == row["progress"]["total"] == 240
    assert "4 shards, 0 already scored" in Path(row["log_path"]).read_text()       # the log a user reads
    written = sorted(p.name for p in (tmp_path / "applied").glob("*.parquet"))
    assert written == ["part-000.parquet", "part-001.parquet", "part-002.parquet", "part-003.parquet"]
    want = student.answers([r["prompt"] for r in rows[60:120]], [r["response"] for r in rows[60:120]])
    assert pq.read_table(tmp_path / "applied" / "part-001.parquet")["raw"].to_pylist() == want
    # attached: the student is a judge of the pool, one verdict a candidate
    assert query_rows(db, "SELECT count(*) FROM judges WHERE name = ?", [name]) == [(1,)]
    at = open_page(db, monkeypatch, "curate", {"pool": "p"})
    assert not at.exception, at.exception
    text = " ".join(m.value for m in at.markdown)
    assert f"Apply run {run['run_id']}: 4 of 4 shards scored (240 candidates" in text
    assert "attached to pool p: 4 files, 240 verdicts" in text
    assert "part-003.parquet" in " ".join(c.value for c in at.code)
    # the runs panel draws the run: what it does, and its progress bar at 240/240
    assert any(f"apply · shards {tmp_path}/shards/*.parquet → {tmp_path / 'applied'}" in c.value for c in at.caption)
    assert any("240/240" in (p.proto.text or "") for p in at.get("progress"))


def _apply_launched(db, tmp_path, rows) -> tuple[int, Path]:
    """A student distilled into tmp_path/s applied by a background run, 5 rows a batch, to 60 shards of 100
    rows (6,000), returned (run id, output folder) once its first shard is written whole."""
    distil(db, "p", "teacher", "likert5", tmp_path / "s", held_out=0.25, seed=3)
    many = [{**r, "candidate_id": f"{r['candidate_id']}-{k}"} for k in range(25) for r in rows]    # 6,000 rows
    _shards(tmp_path / "shards", many, 60)         # 100 rows a shard
    out = tmp_path / "v"
    request = request_for("apply", model_dir=str(tmp_path / "s"), shards=f"{tmp_path}/shards/*.parquet",
                          out=str(out), batch_rows=5)
    run_id = launch(db, "apply", [sys.executable, "-m", "app.cli", *command_line(request)], request=request,
                    key=apply_key(out))
    deadline = time.monotonic() + 180
    while not list(out.glob("*.parquet")) and time.monotonic() < deadline:   # the first shard written whole
        time.sleep(0.05)
    return run_id, out


def test_a_cancelled_apply_keeps_whole_shards_and_the_next_run_scores_the_rest(db, tmp_path, taught):  # noqa: F811
    run_id, out = _apply_launched(db, tmp_path, taught[0])
    row = cancel(db, run_id, wait_s=60)
    assert row["status"] == "cancelled", (row["error"], Path(row["log_path"]).read_text())
    kept = sorted(out.glob("*.parquet"))
    assert 1 <= len(kept) < 60 and not list(out.glob(".*.tmp"))
    for p in kept:                                 # every shard written is whole: 100 rows
        assert pq.read_table(p).num_rows == 100
    assert row["progress"]["result"]["stopped"] is True and row["progress"]["result"]["scored"] == len(kept)
    assert "stopped on request" in Path(row["log_path"]).read_text()
    again = apply_run(db, tmp_path / "s", f"{tmp_path}/shards/*.parquet", out, batch_rows=500)
    assert (again["scored"], again["skipped"], again["rows"]) == (60 - len(kept), len(kept), 100 * (60 - len(kept)))
    assert len(list(out.glob("*.parquet"))) == 60


def test_a_killed_apply_run_is_failed_and_the_next_scores_each_shard_once(db, tmp_path, taught):  # noqa: F811
    run_id, out = _apply_launched(db, tmp_path, taught[0])
    kill_group(get_run(db, run_id)["pid"])      # SIGKILL: no clean-up, the shard being written half there
    time.sleep(1)
    row = get_run(db, run_id)
    assert row["status"] == "failed" and "gone" in row["error"]
    kept = {p.name: p.stat().st_mtime_ns for p in out.glob("*.parquet")}
    assert 1 <= len(kept) < 60
    again = apply_run(db, tmp_path / "s", f"{tmp_path}/shards/*.parquet", out, batch_rows=500)
    assert (again["scored"], again["skipped"]) == (60 - len(kept), len(kept))
    # the shards of the killed run were not written again; none is left half-written
    assert {p.name: p.stat().st_mtime_ns for p in out.glob("*.parquet") if p.name in kept} == kept
    assert len(list(out.glob("*.parquet"))) == 60 and not list(out.glob(".*.tmp"))
    assert sum(pq.read_table(p).num_rows for p in out.glob("*.parquet")) == 6000
