"""audit/_variance.py: the format x judge variance decomposition of the diagnostics, on the largest
complete grid and leaving one judge out, worked by hand (arithmetic in comments)."""

import polars as pl
import pytest

from audit import variance, variance_table
from ingest.store import import_pool
from ingest.scoring import import_verdicts
from tests.audit.conftest import candidate, pointwise


pytestmark = pytest.mark.usefixtures("database_named_by_argument")   # tests/conftest.py


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
