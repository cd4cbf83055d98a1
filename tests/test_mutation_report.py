"""tests/mutation/report.py: the score over non-equivalent mutants, and when `make mutate` fails."""

import importlib.util
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("mutation_report", Path(__file__).parent / "mutation" / "report.py")
report_py = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(report_py)


def _statuses(killed: int, survived: int, unchecked: int = 0, prefix: str = "audit._m.x_f") -> dict:
    names = iter(f"{prefix}__mutmut_{k}" for k in range(1, killed + survived + unchecked + 1))
    out = {next(names): "killed" for _ in range(killed)}
    out.update({next(names): "survived" for _ in range(survived)})
    out.update({next(names): "not checked" for _ in range(unchecked)})
    return out


def test_results_lines_are_read_by_name(tmp_path):
    text = "    audit._m.x_f__mutmut_1: killed\n    train.c.x_g__mutmut_2: survived\nnoise\n"
    assert report_py.read_statuses(text) == {"audit._m.x_f__mutmut_1": "killed", "train.c.x_g__mutmut_2": "survived"}


def test_an_equivalent_needs_a_reason(tmp_path):
    path = tmp_path / "eq.txt"
    path.write_text("# comment\naudit._m.x_f__mutmut_1 same value\n\naudit._m.x_f__mutmut_2\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="eq.txt:4: audit._m.x_f__mutmut_2: an equivalent mutant needs"):
        report_py.read_equivalents(path)


def test_score_leaves_out_equivalents_and_fails_while_a_survivor_is_unlisted(capsys):
    statuses = _statuses(killed=18, survived=2)          # mutants 19 and 20 survive
    statuses["audit._m.x_f__mutmut_1"] = "timeout"       # a timeout is a kill, and is counted apart
    equivalents = {"audit._m.x_f__mutmut_19": "same value"}
    # 18 killed of 20 - 1 equivalent = 19: 94.7% >= 90%, but mutant 20 is neither killed nor listed
    assert report_py.report(statuses, equivalents, 0.90) == 1
    out = capsys.readouterr().out
    assert "score 18/19 = 94.7%" in out and "audit._m.x_f__mutmut_20" in out
    assert "18 killed (1 of them by a timeout)" in out
    assert report_py.survivors(statuses, equivalents) == ["audit._m.x_f__mutmut_20"]
    equivalents["audit._m.x_f__mutmut_20"] = "same value"
    assert report_py.report(statuses, equivalents, 0.90) == 0   # 18/18


def test_an_unfinished_run_fails_whatever_its_score(capsys):
    # 8 killed, 2 listed: 8/8 = 100%, but 3 mutants were never run
    statuses = _statuses(killed=8, survived=2, unchecked=3)
    equivalents = {"audit._m.x_f__mutmut_9": "r", "audit._m.x_f__mutmut_10": "r"}
    assert report_py.report(statuses, equivalents, 0.90) == 1
    out = capsys.readouterr().out
    assert "score 8/8 = 100.0%" in out and "3 mutants not checked yet" in out


def test_each_area_is_scored_on_its_own(capsys):
    # audit/: 10 of 10; train/: 17 of 20 = 85% with three survivors unlisted
    statuses = {**_statuses(killed=10, survived=0), **_statuses(killed=17, survived=3, prefix="train.c.x_g")}
    assert report_py.report(statuses, {}, 0.80) == 1
    out = capsys.readouterr().out
    assert "audit/ + ingest/scoring/formats/: 10 mutants" in out and "score 10/10 = 100.0%" in out
    assert "train/: 20 mutants" in out and "score 17/20 = 85.0%" in out
    assert "3 survivors are neither killed nor listed" in out
