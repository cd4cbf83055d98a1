"""The decision in words (docs/metrics.md#the-decision-in-words): the sentence from its numbers, each
with its n, "too few labels to say" where that is the truth; on a database, the numbers are those of
`alt-test`, `estimate` and `plan` for the cell; the report carries the section."""

import json

import polars as pl
import pytest

from audit import alt_test, decisions, estimate, plan
from audit._decision import TOO_FEW, decision_sentence
from ingest.store import import_labels
from tests.audit.test_alt_test import _write_cells, _write_labels, _write_pool
from tests.conftest import cli_here

ROW = {"target": "accept", "n_labelled": 40, "n_systems": 1, "effective_labels": 61.2, "epsilon": 0.2,
       "alt_passed": True, "winning_rate": 2 / 3, "advantage_probability": 0.8125, "alt_annotators": 3,
       "alt_items": 40, "alt_missing": None, "half_width": 0.05, "labels_needed": 123, "cost_usd": 61.5}


def test_a_sentence_with_every_number_and_its_n():
    assert decision_sentence(ROW) == (
        "its verdicts are worth 61.2 human labels, against the 40 accept labels of its items; "
        "alternative annotator test at ε = 0.2: passes, winning rate 0.67 of 3 annotators, advantage "
        "probability 0.81 (n = 40 items labelled twice or more); ±0.05 on the accept rate: 123 more labels "
        "(≈ $61.50) beyond the 40 labelled.")


def test_too_few_labels_to_say():
    few = ROW | {"n_labelled": 1, "effective_labels": None, "alt_passed": None, "winning_rate": None,
                 "alt_missing": "the pool holds no accept labels (accept / reject)", "labels_needed": None,
                 "cost_usd": None}
    text = decision_sentence(few)
    assert text.count(TOO_FEW) == 3
    assert "(n = 1 labelled items)" in text and "the pool holds no accept labels" in text
    none = few | {"target": None, "n_labelled": 0}
    assert decision_sentence(none).startswith(f"what its verdicts are worth: {TOO_FEW} (no human label")
    # win rates: per system, against the labels per system; no price: said so
    wins = ROW | {"target": "winrate", "n_systems": 4, "n_labelled": 50, "effective_labels": 20.0, "cost_usd": None,
                  "alt_passed": False, "winning_rate": 0.0}
    text = decision_sentence(wins)
    assert "worth 20.0 human labels per system, against 12.5 labelled pairs per system (4 systems' win rates, " \
           "n = 50 labelled pairs)" in text
    assert "fails, winning rate 0.00 of 3 annotators" in text and "no price per label in judgeaudit.toml" in text


def test_on_a_database_the_numbers_are_the_commands(db, tmp_path, write_jsonl):
    _write_pool(tmp_path, db)
    _write_cells(tmp_path, db)
    _write_labels(write_jsonl, db)
    rows = {r["format"]: r for r in decisions(db, "alt", prices={}, label_price=0.25).to_dicts()}
    t = rows["tournament"]
    a = alt_test(db, "alt", "j", "tournament").row(0, named=True)
    assert (t["alt_passed"], t["winning_rate"], t["alt_annotators"], t["alt_items"]) == \
        (a["passed"], a["winning_rate"], a["n_annotators"], a["n_items"])
    # the pool holds pair labels only: both cells on the win rate of s1 against s0 (the one system)
    est = estimate(db, "alt", "winrate")
    est = est.filter(est["format"] == "tournament").row(0, named=True)
    assert (t["target"], t["n_systems"], t["n_labelled"]) == ("winrate", 1, est["n_labelled"])
    assert t["effective_labels"] == pytest.approx(est["effective_labels"])
    p = plan(db, "alt", "winrate", 0.05, label_price=0.25)
    p = p.filter(p["format"] == "tournament").row(0, named=True)
    assert (t["labels_needed"], t["cost_usd"]) == (p["labels_needed"], pytest.approx(p["cost_usd"]))
    assert t["decision"] == decision_sentence(t)
    assert f"{t['labels_needed']:,} more labels (≈ ${t['cost_usd']:,.2f})" in t["decision"]


def test_without_labels_every_cell_is_too_few_to_say(db, tmp_path):
    _write_pool(tmp_path, db)
    _write_cells(tmp_path, db)
    found = decisions(db, "alt")
    assert found.height == 2 and all(d.count(TOO_FEW) == 3 for d in found["decision"])


def test_the_report_carries_the_decision(db, tmp_path, write_jsonl, capsys):
    _write_pool(tmp_path, db)
    _write_cells(tmp_path, db)
    _write_labels(write_jsonl, db)
    import_labels(db, write_jsonl("one.jsonl", [{"prompt_id": "p0", "candidate_id": "s0", "label": "accept"}]), "alt")
    md, js = tmp_path / "r.md", tmp_path / "r.json"
    assert cli_here(capsys, db, "report", "--pool", "alt", "--out", str(md)).returncode == 0
    assert cli_here(capsys, db, "report", "--pool", "alt", "--out", str(js)).returncode == 0
    text = md.read_text()
    assert "## The decision, per cell" in text and "- **j × tournament × greedy**: its verdicts are worth" in text
    doc = json.loads(js.read_text())
    by = {d["format"]: d for d in doc["decisions"]}
    # the likert cell is pointwise and the pool now holds an accept label: it is decided on accept labels
    assert by["likert5"]["target"] == "accept" and TOO_FEW in by["likert5"]["decision"]
    assert by["tournament"]["target"] == "winrate"


def test_the_report_decides_at_the_h_and_epsilon_it_is_given(db, tmp_path, write_jsonl, capsys):
    _write_pool(tmp_path, db)
    _write_cells(tmp_path, db)
    _write_labels(write_jsonl, db)
    md, js = tmp_path / "r.md", tmp_path / "r.json"
    for out in (md, js):
        done = cli_here(capsys, db, "report", "--pool", "alt", "--out", str(out), "--half-width", "0.1",
                        "--epsilon", "0.15")
        assert done.returncode == 0, done.stderr
    doc = json.loads(js.read_text())
    by = {d["format"]: d for d in doc["decisions"]}
    assert {(d["half_width"], d["epsilon"]) for d in doc["decisions"]} == {(0.1, 0.15)}
    # the tournament cell's numbers are alt-test's at ε 0.15 and plan's at ±0.1 (their own arithmetic is
    # tested in test_alt_test.py and test_plan.py), not those at the defaults
    a = alt_test(db, "alt", "j", "tournament", epsilon=0.15).row(0, named=True)
    p = plan(db, "alt", "winrate", 0.1)
    p = p.filter(p["format"] == "tournament").row(0, named=True)
    t = by["tournament"]
    assert (t["alt_passed"], t["winning_rate"], t["labels_needed"]) == (a["passed"], a["winning_rate"],
                                                                       p["labels_needed"])
    at_default = plan(db, "alt", "winrate", 0.05)
    assert t["labels_needed"] < at_default.filter(at_default["format"] == "tournament")["labels_needed"][0]
    text = md.read_text()
    assert "alternative annotator test at ε = 0.15 (`alt-test`) and what ±0.1 would cost" in text
    assert f"- **j × tournament × greedy**: {t['decision']}" in text
    assert "±0.1 on every system's win rate" in t["decision"] and "at ε = 0.15:" in t["decision"]
    # without the options: ±0.05 and ε 0.2, as before
    assert cli_here(capsys, db, "report", "--pool", "alt", "--out", str(js)).returncode == 0
    assert {(d["half_width"], d["epsilon"]) for d in json.loads(js.read_text())["decisions"]} == {(0.05, 0.2)}
    # out of range: refused, naming the option
    bad = cli_here(capsys, db, "report", "--pool", "alt", "--out", str(js), "--half-width", "0")
    assert bad.returncode == 1 and "--half-width 0.0: must be above 0" in bad.stderr
    bad = cli_here(capsys, db, "report", "--pool", "alt", "--out", str(js), "--epsilon", "1")
    assert bad.returncode == 1 and "--epsilon 1.0: must be at least 0 and below 1" in bad.stderr


def test_the_items_are_read_once_per_target(db, tmp_path, monkeypatch):
    """The decisions read each target's items once (cell_arrays) for both the estimate and the plan, and
    print the numbers of the two commands run on their own (each reading the items itself)."""
    import audit._decision as D
    from audit import estimate, plan
    from tests.audit.test_worth_cells import labelled_pool
    labelled_pool(db, tmp_path)
    reads = []
    real = D.cell_arrays
    monkeypatch.setattr(D, "cell_arrays", lambda *a, **k: reads.append(a[2]) or real(*a, **k))
    rows = {(r["judge"], r["format"], r["decoding"]): r for r in decisions(db, "lab").to_dicts()}
    assert sorted(reads) == ["accept", "winrate"]
    for target in ("accept", "winrate"):
        worth, plans = estimate(db, "lab", target), plan(db, "lab", target, 0.05)
        for (judge, fmt, dec), g in worth.group_by("judge", "format", "decoding"):
            r = rows[judge, fmt, dec]
            if r["target"] != target:
                continue
            assert r["n_labelled"] == g["n_labelled"].sum()
            want = g["effective_labels"].drop_nulls()
            assert (r["effective_labels"] is None) == (want.len() == 0)
            if want.len():
                assert r["effective_labels"] == pytest.approx(want.mean(), rel=1e-12)
            p = plans.filter((pl.col("judge") == judge) & (pl.col("format") == fmt) & (pl.col("decoding") == dec))
            need = p["labels_needed"].to_list()        # summed over systems; null where one has no plan
            assert r["labels_needed"] == (None if not need or None in need else sum(need))
