"""The `judgeaudit` console script as users run it: JSON on stdout, errors on stderr."""

import json
import subprocess
from pathlib import Path

import pytest

from tests.fixtures import synthetic_pool, synthetic_verdicts, write_jsonl
from tests.conftest import EXE, cli_here


def run(*args, ok=True):
    proc = subprocess.run([EXE, *map(str, args)], capture_output=True, text=True, timeout=180)
    if ok:
        assert proc.returncode == 0, proc.stderr
    return proc


@pytest.fixture
def files(tmp_path):
    rows = synthetic_pool(12, seed=3)
    return (write_jsonl(tmp_path / "pool.jsonl", rows),
            write_jsonl(tmp_path / "verdicts.jsonl", synthetic_verdicts(rows, seed=3)))


def test_end_to_end_json(db, files, capsys):
    """The commands' documents, each run in this process (app.cli.main, what the script calls: the
    same document without a process's start-up); the script itself in two processes below."""
    pool, verdicts = files

    def here(*args):
        proc = cli_here(capsys, db, *map(str, args))
        assert proc.returncode == 0, proc.stderr
        return proc
    assert json.loads(here("import-pool", pool, "--pool", "s", "--json").stdout)["n_prompts"] == 12
    listed = json.loads(here("pools", "--json").stdout)
    assert listed == {"pools": [{"name": "s", "n_prompts": 12, "n_candidates": listed["pools"][0]["n_candidates"]}]}
    imported = json.loads(here("import-verdicts", verdicts, "--pool", "s", "--json").stdout)
    assert imported["imported"] > 0

    doc = json.loads(here("audit", "--pool", "s", "--json").stdout)
    keys = {"judge", "format", "n_verdicts", "n_candidates", "n_prompts", "parse_rate", "distinct",
            "tie_prob", "d1", "d2", "top_tied", "spearman", "tau_a", "tau_b", "somers_d", "top1",
            "top1_expected", "top1_uniform"}
    assert len(doc["cells"]) == 8 and all(keys <= set(c) for c in doc["cells"])
    doc = json.loads(here("bias", "--pool", "s", "--json", "--n-boot", "100").stdout)
    keys = {"judge", "format", "n_pairs", "q", "q_lo", "q_hi", "b", "b_lo", "b_hi", "consistency",
            "self_tie_rate"}
    assert len(doc["cells"]) == 2 and all(keys <= set(c) for c in doc["cells"])
    printed = {}
    for command in ("levels", "stability", "positions", "variance"):
        out = printed[command] = here(command, "--pool", "s", "--json").stdout
        assert out.count("\n") == 1 and json.loads(out)
    # seeded subsampling gives the same figures in every process: two of the script's own, and this one
    assert {run("stability", "--pool", "s", "--json").stdout for _ in range(2)} == {printed["stability"]}
    # the human-readable table mentions every judge
    text = here("audit", "--pool", "s").stdout
    assert "alpha" in text and "beta" in text


def test_db_flag_overrides_the_environment(tmp_path, files):
    other = tmp_path / "other.duckdb"
    run("import-pool", files[0], "--pool", "s", "--db", other)
    assert json.loads(run("pools", "--json", "--db", other).stdout)["pools"][0]["name"] == "s"
    assert run("pools", "--json", ok=False).returncode != 0   # $JUDGEAUDIT_DB has no database yet


def test_errors_are_one_line_on_stderr(db, files, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"prompt_id": "q", "prompt": "x", "candidate_id": "a", "response": "r"}\n{oops\n')
    proc = run("import-pool", bad, "--pool", "x", "--json", ok=False)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith("judgeaudit: error: ") and "bad.jsonl, line 2: not valid JSON" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = run("audit", "--pool", "nope", "--json", ok=False)
    assert proc.returncode == 1 and "no such database" in proc.stderr
    run("import-pool", files[0], "--pool", "s")
    proc = run("audit", "--pool", "nope", ok=False)
    assert "no pool named 'nope' (known: s)" in proc.stderr
    proc = run("import-pool", files[0], "--pool", "s", ok=False)
    assert "already exists" in proc.stderr and "Traceback" not in proc.stderr
    proc = run("import-pool", "--pool", "s", ok=False)
    assert proc.returncode == 2 and "Missing argument" in proc.stderr


def test_demo_seeds_a_new_database_once_and_leaves_a_users_alone(tmp_path):
    # the expected shape comes from the bundled files themselves, read here without the tool
    demo = Path(__file__).resolve().parents[2] / "ingest" / "demo"
    expected = {}
    for name, file in (("mtbench-formats", "mtbench-formats-pool.jsonl"), ("mtbench", "mtbench-pool.jsonl"),
                       ("llmbar", "llmbar-pool.jsonl"), ("arena-bench", "arena-bench-pool.jsonl"),
                       ("ko-arena-hard", "ko-arena-hard-pool.jsonl")):
        rows = [json.loads(line) for line in (demo / file).read_text().splitlines() if line.strip()]
        expected[name] = (len({r["prompt_id"] for r in rows}), len(rows))
    db = tmp_path / "fresh.duckdb"
    first = json.loads(run("demo", "--db", db, "--json").stdout)
    assert sorted(first["seeded"]) == sorted(expected) and sorted(first["pools"]) == sorted(expected)
    pools = json.loads(run("pools", "--db", db, "--json").stdout)["pools"]
    assert {p["name"]: (p["n_prompts"], p["n_candidates"]) for p in pools} == expected
    again = run("demo", "--db", db)
    assert "already holds the bundled demo" in again.stdout and json.loads(
        run("demo", "--db", db, "--json").stdout)["seeded"] == []
    # a database with a pool of its own gets no demo
    own = tmp_path / "own.duckdb"
    run("import-pool", write_jsonl(tmp_path / "p.jsonl", synthetic_pool(3, seed=1)), "--pool", "mine", "--db", own)
    out = run("demo", "--db", own)
    assert "holds pools of its own (mine)" in out.stdout
    assert [p["name"] for p in json.loads(run("pools", "--db", own, "--json").stdout)["pools"]] == ["mine"]


def test_a_missing_database_points_to_the_demo_command(tmp_path):
    proc = run("pools", "--db", tmp_path / "none.duckdb", ok=False)
    assert proc.returncode == 1 and proc.stderr.endswith("\n")
    assert "no such database (run `judgeaudit demo` for the bundled demo" in proc.stderr


def test_an_error_after_a_terminal_progress_bar_starts_on_its_own_line(tmp_path, capsys, monkeypatch):
    from app.cli import main
    from ingest.scoring import _progress
    bar = _progress.Progress("p", "j", total=4, cell_run_ids=[], show_bar=True)
    monkeypatch.setattr(bar, "_tty", True)            # as on a terminal: the bar redraws its line
    bar.count("ok", None, 1, 1)
    bar.update()
    assert main(["pools", "--db", str(tmp_path / "none.duckdb")]) == 1
    err = capsys.readouterr().err
    # "\r[#######.......] 1/4 ..." then a newline, then the error on a line of its own
    bar_line, error_line, rest = err.split("\n")
    assert bar_line.startswith("\r[") and "1/4" in bar_line
    assert error_line.startswith("judgeaudit: error: ") and rest == ""
    assert not _progress.Progress.line_open
