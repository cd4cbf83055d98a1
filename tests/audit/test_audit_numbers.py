"""The audit's other tables as numbers worked out by hand (arithmetic in comments) or from scipy:
score values, the variance
decomposition with leave-one-judge-out, the reporting checklist (JSON and Markdown), pools."""

import math

import numpy as np
import polars as pl
import pytest

from audit import (bias, checklist, checklist_markdown, pool_candidates, pools, score_values, variance,
                   variance_table)
from audit import _metrics as m
from ingest.store import import_pool
from ingest.scoring import import_verdicts
from tests.audit.conftest import candidate, pointwise


pytestmark = pytest.mark.usefixtures("database_named_by_argument")   # tests/conftest.py


# --- score values ---------------------------------------------------------------------------

def test_score_values_and_multiples_of_five(db, write_jsonl):
    import_pool(db, write_jsonl("p.jsonl", [candidate("q", c, i) for i, c in enumerate("abcd")]), "p")
    raws = [("q", "a", "85"), ("q", "b", "90"), ("q", "c", "87"), ("q", "d", "85")]
    likert = [("q", "a", "3"), ("q", "b", "3"), ("q", "c", "5"), ("q", "d", "nope")]
    import_verdicts(db, write_jsonl("v.jsonl", pointwise("j", "numeric100", raws)
                                    + pointwise("j", "likert5", likert)), "p")
    got = score_values(db, "p")
    assert got.columns == ["judge", "format", "decoding", "score", "s", "n", "mult5"]
    assert got.schema["n"] == pl.UInt32 and got.schema["s"] == pl.Float64      # as in an empty table
    num = got.filter(pl.col("format") == "numeric100").sort("s").select("s", "n", "mult5").rows()
    # 85 twice, 87 once, 90 once; 85 and 90 are multiples of 5
    assert num == [(0.85, 2, True), (0.87, 1, False), (0.9, 1, True)]
    lik = got.filter(pl.col("format") == "likert5").sort("s").select("s", "n", "mult5").rows()
    # (3-1)/4 = 0.5 twice, (5-1)/4 = 1 once; not a 0-100 scale: mult5 is null
    assert lik == [(0.5, 2, None), (1.0, 1, None)]
    # every row names its cell: judge j, imported verdicts read greedily, the parsed labels' values
    assert got.select("judge", "decoding", "score").unique().rows() == [("j", "greedy", "label")]


# --- variance decomposition ------------------------------------------------------------------

def _grid(values, decoding="greedy", score="label"):
    return pl.DataFrame([{"judge": j, "format": f, "decoding": decoding, "score": score, "tie_prob": v}
                         for (j, f), v in values.items()])


def test_variance_table_largest_complete_grid_and_leave_one_judge_out():
    # judges x formats (tie_prob); j3 has no f2:
    #        f1  f2  f3
    #   j1    1   2   3
    #   j2    3   4   8
    #   j3    2   -   5
    values = {("j1", "f1"): 1, ("j1", "f2"): 2, ("j1", "f3"): 3, ("j2", "f1"): 3, ("j2", "f2"): 4,
              ("j2", "f3"): 8, ("j3", "f1"): 2, ("j3", "f3"): 5}
    # a second kind of cell (constrained decoding) with one judge only: no grid, no rows
    cells = pl.concat([_grid(values), _grid({("j1", "f1"): 9, ("j1", "f2"): 1}, decoding="constrained")])
    rows = {r["dropped_judge"]: r for r in variance_table(cells, metrics=("tie_prob",)).to_dicts()}
    assert set(rows) == {None, "j1", "j2", "j3"}
    assert {r["decoding"] for r in rows.values()} == {"greedy"}
    # all judges: formats f1, f3 only, table (1,3), (3,8), (2,5), grand mean 22/6.
    # SS_total = 94/3; format means 2, 16/3: SS_f = 3 (25/9 + 25/9) = 50/3;
    # judge means 2, 5.5, 3.5: SS_j = 2 (25/9 + 121/36 + 1/36) = 37/3; residual 7/3
    full = rows[None]
    assert (full["n_judges"], full["n_formats"]) == (3, 2)
    assert full["ss_total"] == pytest.approx(94 / 3)
    assert full["share_format"] == pytest.approx(50 / 94) and full["share_judge"] == pytest.approx(37 / 94)
    assert full["share_residual"] == pytest.approx(7 / 94)
    # without j3 every format is complete: (1,2,3), (3,4,8): SS 29.5, format 13, judge 13.5, residual 3
    assert (rows["j3"]["n_judges"], rows["j3"]["n_formats"]) == (2, 3)
    assert rows["j3"]["share_format"] == pytest.approx(13 / 29.5)
    assert rows["j3"]["share_judge"] == pytest.approx(13.5 / 29.5)
    # without j1: (3,8), (2,5): grand 4.5, SS 21, format means 2.5, 6.5: 16; judge means 5.5, 3.5: 4
    assert rows["j1"]["ss_total"] == pytest.approx(21) and rows["j1"]["share_format"] == pytest.approx(16 / 21)
    assert rows["j1"]["share_residual"] == pytest.approx(1 / 21)
    # without j2: (1,3), (2,5): grand 2.75, SS 8.75, format 6.25, judge 2.25, residual 0.25
    assert rows["j2"]["share_judge"] == pytest.approx(2.25 / 8.75)
    assert rows["j2"]["share_residual"] == pytest.approx(0.25 / 8.75)


def test_variance_table_keeps_kinds_apart_and_a_hand_grid_is_one_kind():
    plain = pl.DataFrame([{"judge": j, "format": f, "tie_prob": v} for (j, f), v in
                          {("a", "x"): 1.0, ("a", "y"): 2.0, ("b", "x"): 3.0, ("b", "y"): 6.0}.items()])
    rows = variance_table(plain, metrics=("tie_prob",)).to_dicts()
    # (1,2),(3,6): grand 3; SS 4+1+0+9 = 14; format means 2, 4: SS_f = 2*(1+1) = 4;
    # judge means 1.5, 4.5: SS_j = 2*(2.25+2.25) = 9; residual 1
    full = [r for r in rows if r["dropped_judge"] is None]
    assert len(full) == 1 and (full[0]["decoding"], full[0]["score"]) == ("greedy", "label")
    assert full[0]["share_format"] == pytest.approx(4 / 14) and full[0]["share_judge"] == pytest.approx(9 / 14)
    # the same grid as label and as expected score: two decompositions, never one 2x4 grid
    both = pl.concat([_grid({("a", "x"): 1, ("a", "y"): 2, ("b", "x"): 3, ("b", "y"): 6}),
                      _grid({("a", "x"): 1, ("a", "y"): 1, ("b", "x"): 5, ("b", "y"): 5}, score="expected")])
    out = variance_table(both, metrics=("tie_prob",)).filter(pl.col("dropped_judge").is_null())
    assert out.select("score", "n_formats").rows() == [("label", 2), ("expected", 2)]
    # expected: (1,1),(5,5): all of the variance is the judge's
    assert out.filter(pl.col("score") == "expected")["share_judge"][0] == pytest.approx(1.0)


def test_variance_table_skips_a_judge_whose_removal_leaves_no_grid_and_goes_on():
    # j1: f1 f2; j2: f1 only; j3: f1 f2. All judges and without j1 or j3: only f1 is complete (no
    # grid); without j2: j1 and j3 over f1, f2 -> (1, 2), (3, 7): grand 3.25,
    # SS = 5.0625 + 1.5625 + 0.0625 + 14.0625 = 20.75; format means 2, 4.5: SS_f = 2 (1.5625 +
    # 1.5625) = 6.25; judge means 1.5, 5: SS_j = 2 (3.0625 + 3.0625) = 12.25; residual 2.25
    grid = _grid({("j1", "f1"): 1, ("j1", "f2"): 2, ("j2", "f1"): 5, ("j3", "f1"): 3, ("j3", "f2"): 7})
    rows = variance_table(grid, metrics=("tie_prob",)).to_dicts()
    assert [r["dropped_judge"] for r in rows] == ["j2"]
    assert rows[0]["ss_total"] == pytest.approx(20.75) and rows[0]["share_judge"] == pytest.approx(12.25 / 20.75)
    assert rows[0]["share_residual"] == pytest.approx(2.25 / 20.75)
    # no grid at all: no rows, but the columns
    empty = variance_table(_grid({("j1", "f1"): 1}), metrics=("tie_prob",))
    assert empty.height == 0 and empty.columns == ["decoding", "score", "metric", "dropped_judge", "n_judges",
                                                   "n_formats", "share_format", "share_judge", "share_residual",
                                                   "ss_total"]


def test_two_way_shares_of_a_constant_table_are_undefined():
    # 0.4 is not exact in binary: the grand mean's rounding leaves SS_total ~ 1e-32, not 0, and
    # shares of that noise would be meaningless numbers
    out = m.two_way_shares(np.full((2, 3), 0.4))
    assert out["ss_total"] < 1e-24
    assert all(math.isnan(out[k]) for k in ("share_format", "share_judge", "share_residual"))


def test_two_way_shares_rounding_allowance_scales_with_the_values():
    shares = ("share_format", "share_judge", "share_residual")
    # all zeros: SS_total = 0 exactly, the allowance 0 too; undefined, not 0/0
    assert all(math.isnan(v) for k, v in m.two_way_shares(np.zeros((2, 2))).items() if k in shares)
    # a constant of about 400: the grand mean's rounding leaves SS_total ~ 2e-26 (squared rounding
    # of numbers near 400, 400^2 x 1e-32), far below the allowance 6 (1e-12 x 400.4)^2 ~ 1e-18
    out = m.two_way_shares(np.full((2, 3), 400.4))
    assert 0 < out["ss_total"] < 1e-24 and all(math.isnan(out[k]) for k in shares)
    # a real difference of 1e-6 around 1 is not rounding: 1 + 1e-6 (0, 1 | 0, 0) has the shares of
    # (0, 1 | 0, 0): grand 1/4, SS_total = 3/16 + 9/16 = 3/4, format means (0, 1/2): SS_f = 2 (1/16 +
    # 1/16) = 1/4, judge means (1/2, 0): SS_j = 1/4, residual 1/4 -> a third each
    out = m.two_way_shares(1 + 1e-6 * np.array([[0.0, 1.0], [0.0, 0.0]]))
    assert out["ss_total"] == pytest.approx(0.75e-12, rel=1e-6)
    assert [out[k] for k in shares] == pytest.approx([1 / 3] * 3, rel=1e-6)


def test_variance_through_the_database(db, write_jsonl):
    import_pool(db, write_jsonl("p.jsonl", [candidate("q", c, i) for i, c in enumerate("abc")]), "p")
    rows = []
    # judge u: binary (1,1,0) -> tie_prob 5/9; likert5 (2,3,4) -> 1/3
    # judge v: binary (1,0,0) -> 5/9;           likert5 (2,2,2) -> 1
    for judge, binary, likert in (("u", "AAR", "234"), ("v", "ARR", "222")):
        rows += pointwise(judge, "binary", [("q", c, "ACCEPT" if x == "A" else "REJECT") for c, x in zip("abc", binary)])
        rows += pointwise(judge, "likert5", list(zip("qqq", "abc", likert)))
    import_verdicts(db, write_jsonl("v.jsonl", rows), "p")
    got = variance(db, "p").filter((pl.col("metric") == "tie_prob") & pl.col("dropped_judge").is_null()).to_dicts()[0]
    # table (5/9, 1/3), (5/9, 1): grand 11/18; deviations -1/18, -5/18, -1/18, 7/18
    # SS_total = (1 + 25 + 1 + 49)/324 = 76/324; format means 5/9, 2/3: SS_f = 2 (1/324 + 1/324) = 4/324
    # judge means 4/9, 7/9: SS_j = 2 (9/324 + 9/324) = 36/324; residual 36/324
    assert got["ss_total"] == pytest.approx(76 / 324)
    assert got["share_format"] == pytest.approx(4 / 76) and got["share_judge"] == pytest.approx(36 / 76)
    assert got["share_residual"] == pytest.approx(36 / 76)


# --- checklist -------------------------------------------------------------------------------

def test_checklist_numbers_and_markdown(db, write_jsonl):
    import_pool(db, write_jsonl("p.jsonl", [candidate("q", c, r) for c, r in (("a", 3), ("b", 1), ("c", 2))]
                                + [candidate("r", "a", 1), candidate("r", "b", 2)]), "p")
    rows = pointwise("j", "binary", [("q", "a", "ACCEPT"), ("q", "b", "ACCEPT"), ("q", "c", "REJECT"),
                                      ("r", "a", "ACCEPT"), ("r", "b", "maybe")])
    calls = [("q", "a", "b", "A+"), ("q", "b", "a", "B+"), ("q", "a", "c", "A+"), ("q", "c", "a", "A+"),
             ("q", "b", "c", "TIE")]
    rows += [{"judge": "j", "format": "tournament", "prompt_id": p, "a_id": x, "b_id": y, "raw": raw}
             for p, x, y, raw in calls]
    import_verdicts(db, write_jsonl("v.jsonl", rows), "p")
    doc = checklist(db, "p")
    assert doc["pool"] == {"name": "p", "n_prompts": 2, "n_candidates": 5}
    cells = {c["format"]: c for c in doc["cells"]}
    binary = cells["binary"]
    # binary: 4 of 5 calls parsed; scores (1, 1, 0, 1): shares 3/4, 1/4 -> tie_prob 9/16 + 1/16 = 10/16
    assert binary["parse_rate"] == pytest.approx(4 / 5)
    assert (binary["distinct"], binary["n_candidates"]) == (2, 4)
    assert binary["tie_prob"] == pytest.approx(10 / 16) and binary["d2"] == pytest.approx(1.6)
    assert binary["slot"] is None and binary["template"] is None and binary["source"] == "import"
    assert binary["score"] == "label" and binary["decoding"]["mode"] == "greedy"
    assert binary["decoding"]["rule"].startswith("greedy: the judge's own answer")
    assert binary["score_rule"] == "the parsed label's value" and binary["judge_model"] is None
    assert (binary["judge"], binary["format"]) == ("j", "binary")
    tour = cells["tournament"]
    # tournament: three distinct scores (see test_audit_hand) -> tie_prob 3 * (1/3)^2 = 1/3, D2 = 3
    assert (tour["distinct"], tour["tie_prob"], tour["d2"]) == (3, pytest.approx(1 / 3), pytest.approx(3.0))
    b = bias(db, "p").to_dicts()[0]
    assert tour["slot"]["scheme"] == "imported verdicts; 2 of 5 calls in the reverse order, 2 items seen in both orders"
    assert (tour["slot"]["b"], tour["slot"]["b_lo"], tour["slot"]["b_hi"]) == (b["b"], b["b_lo"], b["b_hi"])
    assert b["b"] == pytest.approx(0.5)   # items (1, -1): b 0; (1, 1): b 1
    md = checklist_markdown(doc).split("\n")
    assert md[:4] == ["# Reporting checklist: pool `p`", "", "2 prompts, 5 candidates.", ""]
    i = md.index("## j × binary × greedy")
    assert md[i:i + 11] == [
        "## j × binary × greedy", "",
        "1. Format: verdicts imported; the prompt template was not recorded.", "",
        "   Decoding: " + binary["decoding"]["rule"] + ".",
        "   Settings: not recorded.",                       # an import records no decoding settings
        "   Score: the parsed label's value.", "",
        "2. Tie probability 0.625, D2 = 1.60 effective levels; 2 distinct values over 4 scored candidates.",
        "3. Slots: pointwise format, no slot bias.",
        "4. Parse rate 0.800."]
    assert (f"3. Slots: imported verdicts; 2 of 5 calls in the reverse order, 2 items seen in both orders. "
            f"Estimated slot bias b = 0.500 (95% CI {b['b_lo']:.3f} to {b['b_hi']:.3f}).") in md
    assert "2. Tie probability 0.333, D2 = 3.00 effective levels; 3 distinct values over 3 scored candidates." in md


def test_checklist_markdown_of_a_scored_cell_with_template_and_missing_numbers():
    doc = {"pool": {"name": "x", "n_prompts": 1, "n_candidates": 2},
           "cells": [{"judge": "J", "format": "likert5", "score": "expected", "score_rule": "the rule",
                      "template": "Rate {response}.\n\n", "decoding": {"mode": "constrained", "rule": "R", "temperature": 0},
                      "tie_prob": None, "d2": None, "distinct": 0, "n_candidates": 0, "parse_rate": 1.0,
                      "slot": {"scheme": "S", "b": None, "b_lo": None, "b_hi": None}}]}
    md = checklist_markdown(doc).split("\n")
    assert "## J × likert5 × constrained (expected score)" in md
    i = md.index("1. Format, verbatim:")
    assert md[i + 1: i + 6] == ["", "```", "Rate {response}.", "```", ""]
    assert "   Decoding: R." in md and '   Settings: `{"temperature": 0}`.' in md and "   Score: the rule." in md
    assert "2. Tie probability n/a, D2 = n/a effective levels; 0 distinct values over 0 scored candidates." in md
    assert "3. Slots: S. Estimated slot bias b = n/a (95% CI n/a to n/a)." in md
    assert "4. Parse rate 1.000." in md


def test_checklist_markdown_without_a_recorded_mode_reads_greedy_and_separates_cells():
    def cell(judge, decoding):
        return {"judge": judge, "format": "binary", "score": "label", "score_rule": "v", "template": None,
                "decoding": decoding, "tie_prob": 0.5, "d2": 2.0, "distinct": 2, "n_candidates": 2,
                "parse_rate": 1.0, "slot": None}
    doc = {"pool": {"name": "x", "n_prompts": 1, "n_candidates": 2},
           "cells": [cell("J", {}), cell("K", {"mode": "constrained"})]}
    md = checklist_markdown(doc).split("\n")
    # no mode recorded: the paper's protocol, greedy, in the heading and as the decoding rule
    i = md.index("## J × binary × greedy")
    assert md[i + 4] == "   Decoding: greedy."
    # each cell's block ends with its parse rate and one blank line before the next heading
    j = md.index("4. Parse rate 1.000.")
    assert md[j + 1:j + 3] == ["", "## K × binary × constrained"] and md[-2:] == ["4. Parse rate 1.000.", ""]


def test_checklist_of_a_scored_run_carries_its_template_and_recorded_decoding(db, write_jsonl):
    from ingest.scoring.formats import BUILTIN
    from ingest.scoring import score, ScoreRequest
    import_pool(db, write_jsonl("p.jsonl", [candidate("q", c, i) for i, c in enumerate("abcd")]), "p")
    score(ScoreRequest(pool="p", judge="fake:sim", formats=["likert5", "tournament"], db=db, seed=3,
                       schedule="balanced", progress=False, flush_interval_s=0.05))
    doc = checklist(db, "p")
    cells = {(c["format"], c["score"]): c for c in doc["cells"]}
    likert, tour = cells[("likert5", "label")], cells[("tournament", "label")]
    for cell, fmt in ((likert, "likert5"), (tour, "tournament")):
        assert cell["source"] == "score" and cell["template"] == BUILTIN[fmt].template
        assert cell["judge_model"] == "fake-sim"         # the model id the fake judge reports
        # the paper's decoding as the run recorded it (temperature 0, 16 tokens, the run's seed 3)
        d = cell["decoding"]
        assert (d["mode"], d["temperature"], d["max_tokens"], d["seed"]) == ("greedy", 0.0, 16, 3)
        assert d["rule"].startswith("greedy: the judge's own answer")
    assert tour["slot"]["scheme"].startswith("tournament, each candidate in slot A as often as in B; ")
    md = checklist_markdown(doc)
    assert "   Settings: `{" in md and '"seed": 3' in md and "Settings: not recorded" not in md
    assert "1. Format, verbatim:" in md and "Format: verdicts imported" not in md


def test_checklist_slot_interval_is_the_bias_interval_for_the_same_seed(db, write_jsonl, tmp_path):
    # five candidates, all ten pairs in both orders, labels of uneven values so that the bootstrap's
    # percentiles fall between distinct resample means and move with the seed
    import_pool(db, write_jsonl("p.jsonl", [candidate("q", c, i) for i, c in enumerate("abcde")]), "p")
    spec = tmp_path / "w.toml"
    spec.write_text('name = "w"\nkind = "comparative"\n'
                    'labels = { "P" = 1.31, "Q" = 0.77, "R" = -0.23, "S" = -1.97, "T" = 0.05 }\n')
    labels = iter("PQRSTPRQSTQSRPTSPQRT")
    rows = []
    for x, y in [(x, y) for i, x in enumerate("abcde") for y in "abcde"[i + 1:]]:
        for a, b in ((x, y), (y, x)):
            rows.append({"judge": "j", "format": "w", "prompt_id": "q", "a_id": a, "b_id": b, "raw": next(labels)})
    import_verdicts(db, write_jsonl("v.jsonl", rows), "p", format_specs=[spec])

    def interval(row):
        return row["b"], row["b_lo"], row["b_hi"]
    by_seed = {s: interval(bias(db, "p", seed=s).to_dicts()[0]) for s in (0, 7)}
    assert by_seed[0][0] == by_seed[7][0] and by_seed[0][1:] != pytest.approx(by_seed[7][1:], abs=1e-6)
    assert interval(checklist(db, "p")["cells"][0]["slot"]) == by_seed[0]           # the default seed is 0
    assert interval(checklist(db, "p", seed=7)["cells"][0]["slot"]) == by_seed[7]


# --- pools -----------------------------------------------------------------------------------

def test_pools_and_pool_candidates(db, write_jsonl):
    import_pool(db, write_jsonl("a.jsonl", [candidate("q", "x", 2.5, "hello"), candidate("q", "y", None, "hi"),
                                            candidate("r", "z", 1, "")]), "a")
    import_pool(db, write_jsonl("b.jsonl", [candidate("q", "x", 1)]), "b")
    assert pools(db).rows() == [("a", 2, 3), ("b", 1, 1)]
    got = pool_candidates(db, "a").select("prompt_id", "candidate_id", "position", "k", "reference",
                                          "response_chars").rows()
    assert got == [("q", "x", 0, 2, 2.5, 5), ("q", "y", 1, 2, None, 2), ("r", "z", 0, 1, 1.0, 1)]
