"""Drift (`judgeaudit drift`): the pure comparison by hand, judge versions, and the command line on
two stored judges, one a re-run of the other."""

import json
import re
import subprocess

import polars as pl
import pytest

from audit import AuditError, compare_verdicts, drift, drift_items, drift_sides
from audit._drift import _tag_versions, version_pairs, versions_of
from tests.conftest import EXE


def _verdicts(readings, cell_run_id=1, model="m", template="t", settings="{}"):
    """readings: (prompt_idx, a_idx, b_idx, reading, s) for one format."""
    return pl.DataFrame([{"format": "f", "decoding": "greedy", "prompt_idx": p, "prompt_id": f"p{p}", "a_idx": a,
                          "b_idx": b, "a_id": f"c{a}", "b_id": None if b is None else f"c{b}", "sample": 0,
                          "reading": r, "s": s, "cell_run_id": cell_run_id, "judge_model": model,
                          "template_hash": template, "settings": settings}
                         for p, a, b, r, s in readings],
                        schema_overrides={"b_idx": pl.Int64, "b_id": pl.String, "s": pl.Float64})


def test_compare_by_hand():
    old = _verdicts([(0, 0, None, "4", 0.75), (1, 0, None, "3", 0.5), (2, 0, None, "5", 1.0),
                     (3, 0, None, "2", 0.25), (4, 0, None, "1", 0.0)])
    # call 0 unchanged; call 1: 3 -> 5 (+0.5); call 2 no longer parses; call 3 unchanged;
    # call 4 only in the old version (not compared); call 5 only in the new one
    new = _verdicts([(0, 0, None, "4", 0.75), (1, 0, None, "5", 1.0), (2, 0, None, "no_label", None),
                     (3, 0, None, "2", 0.25), (5, 0, None, "3", 0.5)], cell_run_id=2)
    cells, moved = compare_verdicts(old, new)
    cell = cells.row(0, named=True)
    # 4 calls in both; 2 changed -> 0.5; scored in both: calls 0, 1, 3 -> |0| + |0.5| + |0| over 3
    assert (cell["n"], cell["n_changed"], cell["n_scored"]) == (4, 2, 3)
    assert cell["share_changed"] == pytest.approx(0.5)
    assert cell["mean_abs_change"] == pytest.approx(0.5 / 3)
    assert moved["prompt_id"].to_list() == ["p1", "p2"]
    assert moved.row(0, named=True)["change"] == pytest.approx(0.5)
    assert moved.row(1, named=True)["reading"] == "no_label" and moved.row(1, named=True)["change"] is None


def test_compare_uses_the_latest_run_of_each_call():
    # call 0 stored twice on each side: the later run counts (old 4 -> 3, new 5 -> 3: unchanged)
    old = pl.concat([_verdicts([(0, 0, None, "4", 0.75)], cell_run_id=1), _verdicts([(0, 0, None, "3", 0.5)], cell_run_id=2)])
    new = pl.concat([_verdicts([(0, 0, None, "5", 1.0)], cell_run_id=3), _verdicts([(0, 0, None, "3", 0.5)], cell_run_id=4)])
    cells, moved = compare_verdicts(old, new)
    assert cells.select("n", "n_changed", "n_scored", "mean_abs_change").rows() == [(1, 0, 1, 0.0)]
    assert moved.height == 0


def test_a_score_change_without_a_new_reading_moves_an_item_beyond_rounding():
    # same reading both times: call 0's score 0.25 -> 0.75 moved it; call 1's 0 -> 1e-12 is below
    # the 12-decimal rounding of scores (DESIGN.md), so not a move; neither is a changed reading
    old = _verdicts([(0, 0, None, "x", 0.25), (1, 0, None, "x", 0.0)])
    new = _verdicts([(0, 0, None, "x", 0.75), (1, 0, None, "x", 1e-12)], cell_run_id=2)
    cells, moved = compare_verdicts(old, new)
    assert cells.row(0, named=True)["n_changed"] == 0
    assert moved["prompt_id"].to_list() == ["p0"] and moved["change"].to_list() == [pytest.approx(0.5)]


def test_cells_and_moved_items_are_sorted_by_call_whatever_the_run_order():
    # seven changed calls (format, decoding, prompt, slot A, slot B, sample), stored newest-first in
    # the reverse of their sorted order, so that every sort key decides at least one place
    calls = [("f", "constrained", 1, 0, 1, 0), ("f", "greedy", 0, 1, 0, 0), ("f", "greedy", 1, 0, 1, 0),
             ("f", "greedy", 1, 0, 2, 0), ("f", "greedy", 1, 1, 0, 0), ("f", "greedy", 1, 1, 0, 1),
             ("g", "constrained", 0, 0, 1, 0)]

    def side(reading, runs):
        return pl.DataFrame([{"format": f, "decoding": d, "prompt_idx": p, "prompt_id": f"p{p}", "a_idx": a,
                              "b_idx": b, "a_id": f"c{a}", "b_id": f"c{b}", "sample": k, "reading": reading,
                              "s": 0.75 if reading == "A+" else 0.25, "cell_run_id": run}
                             for (f, d, p, a, b, k), run in zip(reversed(calls), runs)])

    cells, moved = compare_verdicts(side("A+", [0] * 7), side("B+", range(1, 8)))
    assert cells.select("format", "decoding", "n").rows() == [("f", "constrained", 1), ("f", "greedy", 5),
                                                              ("g", "constrained", 1)]
    assert moved.select("format", "decoding", "prompt_id", "a_id", "b_id", "sample").rows() == [
        (f, d, f"p{p}", f"c{a}", f"c{b}", k) for f, d, p, a, b, k in calls]


def test_versions_are_model_template_and_decoding():
    a = _verdicts([(0, 0, None, "4", 0.75)], cell_run_id=1)
    b = _verdicts([(1, 0, None, "4", 0.75)], cell_run_id=2)                        # same version, later run
    c = _verdicts([(2, 0, None, "4", 0.75)], cell_run_id=3, settings='{"temperature": 0.7}')
    d = _verdicts([(3, 0, None, "4", 0.75)], cell_run_id=4, model="m-2024-06")
    v = versions_of(pl.concat([a, b, c, d]))
    assert v["version"].to_list() == [1, 2, 3]
    assert v["n_verdicts"].to_list() == [2, 1, 1] and v["last_cell_run"].to_list() == [2, 3, 4]


def test_versions_of_one_verdict_and_of_none():
    one = _verdicts([(0, 0, None, "4", 0.75)], cell_run_id=5)
    assert versions_of(one).to_dicts() == [{"version": 1, "judge_model": "m", "template_hash": "t", "settings": "{}",
                                           "first_cell_run": 5, "last_cell_run": 5, "n_verdicts": 1, "formats": ["f"]}]
    none = versions_of(one.clear())
    assert none.height == 0
    assert dict(none.schema) == {"version": pl.Int64, "judge_model": pl.String, "template_hash": pl.String,
                                 "settings": pl.String, "first_cell_run": pl.Int64, "last_cell_run": pl.Int64,
                                 "n_verdicts": pl.Int64, "formats": pl.List(pl.String)}


def test_no_verdicts_tag_no_versions():
    none = _verdicts([(0, 0, None, "4", 0.75)]).clear()
    vers, tagged = _tag_versions(none)
    assert vers.columns == ["format", "version", "judge_model", "template_hash", "settings", "first_cell_run", "last_cell_run",
                            "n_verdicts"] and vers.height == 0 and vers.schema["format"] == pl.String
    assert tagged.columns == [*none.columns, "version"] and tagged.height == 0 and tagged.schema["version"] == pl.Int64
    assert version_pairs(none) == []


def test_versions_are_per_format_and_pair_on_shared_calls():
    # format f: version 1 (runs 1) and version 2 (run 3, another model id) on the same calls 0 and 1;
    # format g: one version of its own template (run 2), which is no earlier version of f
    f1 = _verdicts([(0, 0, None, "4", 0.75), (1, 0, None, "3", 0.5)], cell_run_id=1)
    g = _verdicts([(0, 0, None, "2", 0.25)], cell_run_id=2, template="t-g").with_columns(pl.lit("g").alias("format"))
    f2 = _verdicts([(0, 0, None, "5", 1.0), (1, 0, None, "3", 0.5)], cell_run_id=3, model="m-2")
    pairs = version_pairs(pl.concat([f1, g, f2]))
    assert [p["format"] for p in pairs] == ["f"]
    assert pairs[0]["current_version"]["judge_model"] == "m-2" and pairs[0]["baseline_version"]["version"] == 1
    # each side's version as versions_of describes it, without the format (the pair already names it)
    assert pairs[0]["current_version"] == {"version": 2, "judge_model": "m-2", "template_hash": "t", "settings": "{}",
                                           "first_cell_run": 3, "last_cell_run": 3, "n_verdicts": 2}
    assert pairs[0]["baseline_version"] == {"version": 1, "judge_model": "m", "template_hash": "t", "settings": "{}",
                                            "first_cell_run": 1, "last_cell_run": 1, "n_verdicts": 2}
    cell = compare_verdicts(pairs[0]["baseline"], pairs[0]["current"])[0].row(0, named=True)
    assert (cell["n"], cell["n_changed"]) == (2, 1)            # call 0: 4 -> 5; call 1 unchanged
    # one version per format (what the store holds for one judge name): no pair, whatever the templates
    assert version_pairs(pl.concat([f1, g])) == []
    # two versions of f on different calls share nothing
    assert version_pairs(pl.concat([f1, _verdicts([(7, 0, None, "5", 1.0)], cell_run_id=3, model="m-2")])) == []


@pytest.fixture
def scored_twice(db, write_jsonl):
    """A pool of 3 prompts x 2 candidates scored by the fake judge 'j' on binary and likert5, and the
    same judge re-scored under the name 'j-2026-12' (the drift workflow)."""
    from ingest.store import import_pool
    from ingest.scoring import score, ScoreRequest
    rows = [{"prompt_id": f"p{p}", "prompt": f"Question {p}?", "candidate_id": f"c{c}",
             "response": f"Answer {c} to {p}."} for p in range(3) for c in range(2)]
    import_pool(db, write_jsonl("pool.jsonl", rows), "s")
    for name in (None, "j-2026-12"):
        score(ScoreRequest(pool="s", judge="fake:j", formats=["binary", "likert5"], judge_name=name,
                           progress=False, db=db))
    return db


def test_drift_without_against_explains_the_workflow(scored_twice):
    # each format has its own template, so 'j' holds two versions (one per format) that share no
    # call; the default path must say how to measure drift instead of returning no cells
    with pytest.raises(AuditError, match="no two versions on the same calls") as err:
        drift(scored_twice, "s", "j")
    assert "--judge-name j-2026-12" in str(err.value)
    assert "judgeaudit drift --pool s --judge j-2026-12 --against j" in str(err.value)
    proc = subprocess.run([EXE, "drift", "--pool", "s", "--judge", "j", "--db", str(scored_twice), "--json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and proc.stdout == ""
    assert "--judge s" not in proc.stderr and "--judge j-2026-12 --against j" in proc.stderr


def test_drift_against_compares_every_format(scored_twice):
    # 6 calls per format under both names, compared in both formats (not only the format of the
    # latest run); the changed counts are read from the stored rows by a plain join
    from tests.conftest import query_rows
    cells = drift(scored_twice, "s", "j-2026-12", against="j").sort("format")
    assert cells["format"].to_list() == ["binary", "likert5"] and cells["n"].to_list() == [6, 6]
    changed = dict(query_rows(scored_twice, """
        SELECT f.name, count(*) FILTER (WHERE coalesce(o.answer, o.status) <> coalesce(n.answer, n.status))
        FROM verdicts n JOIN verdicts o USING (pool_id, format_id, decoding, prompt_idx, a_idx, sample)
        JOIN formats f USING (format_id)
        WHERE n.judge_id = (SELECT judge_id FROM judges WHERE name = 'j-2026-12')
          AND o.judge_id = (SELECT judge_id FROM judges WHERE name = 'j') GROUP BY f.name"""))
    assert cells["n_changed"].to_list() == [changed["binary"], changed["likert5"]]


@pytest.fixture
def two_versions(db, tmp_path, write_jsonl):
    """A pool judged by 'j' and by 'j-v2', a re-run that changed 3 of 12 pointwise verdicts and one
    comparative verdict."""
    from ingest.store import import_pool
    from ingest.scoring import import_verdicts
    pool = write_jsonl("pool.jsonl", [{"prompt_id": f"p{p}", "prompt": f"q{p}", "candidate_id": c,
                                       "response": f"{c}{p}"} for p in range(4) for c in ("x", "y", "z")])
    import_pool(db, pool, "s")
    rows = []
    for judge in ("j", "j-v2"):
        for p in range(4):
            for k, c in enumerate(("x", "y", "z")):
                score = 1 + (p + k) % 5
                if judge == "j-v2" and (p, c) in {(0, "x"), (1, "y")}:
                    score = min(score + 2, 5)          # (0, x): 1 -> 3; (1, y): 3 -> 5
                raw = "unsure" if judge == "j-v2" and (p, c) == (2, "z") else str(score)
                rows.append({"judge": judge, "format": "likert5", "prompt_id": f"p{p}", "candidate_id": c, "raw": raw})
            rows.append({"judge": judge, "format": "tournament", "prompt_id": f"p{p}", "a_id": "x", "b_id": "y",
                         "raw": "B+" if judge == "j-v2" and p == 3 else "A+"})
    import_verdicts(db, write_jsonl("v.jsonl", rows), "s")
    return db


def test_drift_between_two_stored_judges(two_versions):
    cells = drift(two_versions, "s", "j-v2", against="j").sort("format")
    likert = cells.row(0, named=True)
    # 12 calls; 3 changed (two scores, one unparsed); scored in both: 11, |change| = 0.5 + 0.5 over 11
    assert likert["format"] == "likert5" and (likert["n"], likert["n_changed"], likert["n_scored"]) == (12, 3, 11)
    assert likert["mean_abs_change"] == pytest.approx(1.0 / 11)
    tournament = cells.row(1, named=True)
    # A+ (+1) -> B+ (-1) on one of 4 calls: tournament normalised score (v + 2) / 4 moves by 0.5
    assert (tournament["n"], tournament["n_changed"]) == (4, 1)
    assert tournament["mean_abs_change"] == pytest.approx(0.5 / 4)
    items = drift_items(two_versions, "s", "j-v2", against="j")
    assert items.height == 4 and set(items["prompt_id"]) == {"p0", "p1", "p2", "p3"}
    with pytest.raises(AuditError, match="no two versions on the same calls"):
        drift(two_versions, "s", "j")


def test_drift_cli(two_versions):
    proc = subprocess.run([EXE, "drift", "--pool", "s", "--judge", "j-v2", "--against", "j", "--json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["judge"] == "j-v2" and doc["against"] == "j"
    assert {c["format"]: c["n_changed"] for c in doc["cells"]} == {"likert5": 3, "tournament": 1}
    moved = next(c for c in doc["cells"] if c["format"] == "tournament")["moved"]
    assert moved == [{"prompt_id": "p3", "a_id": "x", "b_id": "y", "sample": 0, "reading_old": "A+",
                      "reading": "B+", "s_old": 0.75, "s": 0.25, "change": -0.5}]
    assert set(doc["current_version"]) >= {"judge_model", "template_hash", "settings"}
    proc = subprocess.run([EXE, "drift", "--pool", "s", "--judge", "nobody"], capture_output=True, text=True)
    assert proc.returncode != 0 and "no judge named 'nobody'" in proc.stderr


def test_drift_page(two_versions, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from tests.conftest import REPO
    monkeypatch.setenv("JUDGEAUDIT_DB", str(two_versions))
    at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=300).run()
    at.switch_page("views/drift/page.py").run()
    assert not at.exception, [e.value for e in at.exception]
    at.selectbox[-2].select("j-v2").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(s.value.startswith("Calls that moved (4)") for s in at.subheader)


def test_drift_opens_on_two_judges_that_share_calls_or_says_there_are_none(two_versions, write_jsonl, monkeypatch):
    """The judges sorted are a-other, j, j-v2: a-other answered binary only, so it shares no call with j or
    j-v2, and the page used to open on a-other against j ("share no call"). It opens on the first judge that
    shares calls (j) against the first that shares its calls (j-v2), offers only such judges, and the stored
    first view (`judgeaudit derive`) is that pair."""
    from streamlit.testing.v1 import AppTest

    from audit import drift_pairs, first_pair
    from audit.derived import Reader
    from ingest import Database
    from ingest.scoring import import_verdicts
    from tests.conftest import REPO
    from train.derived_results import DERIVED_RESULTS
    import_verdicts(two_versions, write_jsonl("other.jsonl", [
        {"judge": "a-other", "format": "binary", "prompt_id": f"p{p}", "candidate_id": c, "raw": "ACCEPT"}
        for p in range(4) for c in ("x", "y", "z")]), "s")
    pairs = drift_pairs(two_versions, "s")
    # j and j-v2 answered the same 12 likert5 and 4 tournament calls; a-other shares none
    assert pairs.rows() == [("j", "j-v2", 16), ("j-v2", "j", 16)]
    assert first_pair(pairs) == ("j", "j-v2")
    first = DERIVED_RESULTS["drift"].first_view(Reader(Database(two_versions), "s", DERIVED_RESULTS,
                                                       lambda: (lambda *a: None, lambda: None)), "s")
    assert first == ("j", "j-v2")
    monkeypatch.setenv("JUDGEAUDIT_DB", str(two_versions))
    at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=300).run()
    at.switch_page("views/drift/page.py").run()
    assert not at.exception, [e.value for e in at.exception]
    judge, against = at.selectbox(key="drift_judge"), at.selectbox(key="drift_against")
    assert (judge.value, against.value) == ("j", "j-v2") and judge.options == ["j", "j-v2"]
    assert against.options == ["j-v2"] and not at.info
    assert any(c.value.startswith("16 calls answered by both") for c in at.caption)
    # "calls changed" and "calls moved" are the same count here (3 likert5 and 1 tournament changed): one column
    table = at.dataframe[0].value
    assert "n_changed" in table.columns and "n_moved" not in table.columns


def test_drift_says_when_no_two_judges_share_a_call(db, write_jsonl, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from ingest.scoring import import_verdicts
    from ingest.store import import_pool
    from tests.conftest import REPO
    import_pool(db, write_jsonl("pool.jsonl", [{"prompt_id": "p", "prompt": "q", "candidate_id": c, "response": c}
                                               for c in "xy"]), "s")
    import_verdicts(db, write_jsonl("v.jsonl", [{"judge": j, "format": f, "prompt_id": "p", "candidate_id": c,
                                                  "raw": r} for j, f, r in (("a", "binary", "ACCEPT"),
                                                                            ("b", "likert5", "3")) for c in "xy"]), "s")
    monkeypatch.setenv("JUDGEAUDIT_DB", str(db))
    at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=300).run()
    at.switch_page("views/drift/page.py").run()
    assert not at.exception and "drift_judge" not in [b.key for b in at.selectbox]
    assert at.info[0].value.startswith("No two judges of this pool answered the same call")


@pytest.fixture
def three_versions(tmp_path, write_jsonl):
    """A database file of its own (not the one JUDGEAUDIT_DB names) where judge 'j' holds three
    versions of likert5 on the same 6 calls (reported model ids m-1, m-2, m-3, runs in that order).

    The store never writes this: it keeps one verdict per call and judge name, and refuses a second
    definition of a known format name. It is written here in SQL (three imports under the names j,
    j-b, j-c, then j-b's and j-c's verdicts moved to j under copies of the likert5 row), the only way
    to reach the path where a judge's own earlier version is the baseline (`baseline_version`)."""
    import duckdb

    from ingest.store import import_pool
    from ingest.scoring import import_verdicts
    path = tmp_path / "versions.duckdb"
    import_pool(path, write_jsonl("pool.jsonl", [{"prompt_id": f"p{p}", "prompt": f"q{p}", "candidate_id": c,
                                                  "response": f"{c}{p}"} for p in range(2) for c in "xyz"]), "s")
    v1 = {("p0", "x"): "1", ("p0", "y"): "2", ("p0", "z"): "3", ("p1", "x"): "4", ("p1", "y"): "5", ("p1", "z"): "1"}
    v2 = {**v1, ("p0", "x"): "2", ("p1", "z"): "2"}
    v3 = {**v2, ("p1", "y"): "unsure"}
    for judge, raws in (("j", v1), ("j-b", v2), ("j-c", v3)):
        import_verdicts(path, write_jsonl(f"{judge}.jsonl", [
            {"judge": judge, "format": "likert5", "prompt_id": p, "candidate_id": c, "raw": raw}
            for (p, c), raw in raws.items()]), "s")
    con = duckdb.connect(str(path))
    try:
        ids = dict(con.execute("SELECT name, judge_id FROM judges").fetchall())
        fid = con.execute("SELECT format_id FROM formats WHERE name = 'likert5'").fetchall()[0][0]
        con.execute("UPDATE cell_runs SET judge_model = 'm-1' WHERE judge_id = $j", {"j": ids["j"]})
        for k, judge in ((2, "j-b"), (3, "j-c")):
            new = con.execute("SELECT max(format_id) + 1 FROM formats").fetchall()[0][0]
            con.execute("INSERT INTO formats SELECT $new, name, kind, pairing, spec, value_lo, value_hi, template, "
                        "spec_hash FROM formats WHERE format_id = $f", {"new": new, "f": fid})
            con.execute("UPDATE verdicts SET judge_id = $j, format_id = $new WHERE judge_id = $old",
                        {"j": ids["j"], "new": new, "old": ids[judge]})
            con.execute("UPDATE cell_runs SET judge_model = $m WHERE judge_id = $old",
                        {"m": f"m-{k}", "old": ids[judge]})
    finally:
        con.close()
    return path


def test_drift_of_a_judges_own_versions_against_the_one_before_or_a_chosen_one(three_versions):
    # latest m-3 against m-2 (the default): only (p1, y) moved, 5 -> unsure; scored in both: 5 calls,
    # none changed its score
    cell = drift(three_versions, "s", "j").row(0, named=True)
    assert (cell["n"], cell["n_changed"], cell["n_scored"]) == (6, 1, 5) and cell["mean_abs_change"] == 0
    items = drift_items(three_versions, "s", "j")
    assert items.select("prompt_id", "a_id", "reading_old").rows() == [("p1", "y", "5")]
    # against version 1 (m-1): (p0, x) 1 -> 2 and (p1, z) 1 -> 2, each +0.25 on (v - 1) / 4, and (p1, y)
    # 5 -> unsure; |change| over the 5 calls scored in both: (0.25 + 0.25) / 5 = 0.1
    cell = drift(three_versions, "s", "j", baseline_version=1).row(0, named=True)
    assert (cell["n"], cell["n_changed"], cell["n_scored"]) == (6, 3, 5)
    assert cell["mean_abs_change"] == pytest.approx(0.1)
    items = drift_items(three_versions, "s", "j", baseline_version=1)
    assert items.select("prompt_id", "a_id", "reading_old").rows() == [("p0", "x", "1"), ("p1", "y", "5"),
                                                                       ("p1", "z", "1")]
    assert items["change"].to_list() == [pytest.approx(0.25), None, pytest.approx(0.25)]


def test_drift_errors_name_the_judge_the_pool_and_the_way_out(tmp_path, write_jsonl):
    from ingest.store import import_pool
    from ingest.scoring import import_verdicts
    path = tmp_path / "errors.duckdb"
    for pool in ("s", "t"):
        import_pool(path, write_jsonl(f"{pool}.jsonl", [{"prompt_id": "p0", "prompt": "q", "candidate_id": c,
                                                          "response": c} for c in "xy"]), pool)

    def raises(message, *args):
        with pytest.raises(AuditError, match="^" + re.escape(message) + "$"):
            drift_items(path, *args)

    raises("no judge named 'j' (known: none)", "s", "j")
    import_verdicts(path, write_jsonl("v.jsonl", [{"judge": j, "format": "likert5", "prompt_id": "p0",
                                                   "candidate_id": c, "raw": "3"} for j in ("k", "j") for c in "xy"]),
                    "s")
    raises("no judge named 'nobody' (known: j, k)", "s", "nobody")
    raises("judge 'j' has no verdicts on pool 't'", "t", "j")
    raises("judge 'j' has no two versions on the same calls in pool 's': the store keeps one verdict per call and "
           "judge name (a re-run under the same name resumes instead of adding a version, and each format has its "
           "own template, hence its own version). To measure drift, re-score the anchor set under another judge "
           "name (e.g. `--judge-name j-2026-12`) and compare with "
           "`judgeaudit drift --pool s --judge j-2026-12 --against j`", "s", "j")


@pytest.fixture
def two_formats_two_versions(tmp_path, write_jsonl):
    """A database file of its own where judge 'j' holds two versions (reported model ids m-1, then
    m-2) of both likert5 and tournament on the same calls, and judge 'k' (model id m-0) the same
    calls once. Written in SQL as `three_versions` is: imports under j, j-b and k (one cell run per
    judge and format, formats by name: j 1 likert5, 2 tournament; j-b 3, 4; k 5, 6), then j-b's
    verdicts moved to j under copies of both format rows (each copy a new template, hash h-2)."""
    import duckdb

    from ingest.store import import_pool
    from ingest.scoring import import_verdicts
    path = tmp_path / "formats.duckdb"
    import_pool(path, write_jsonl("pool.jsonl", [{"prompt_id": f"p{p}", "prompt": f"q{p}", "candidate_id": c,
                                                  "response": f"{c}{p}"} for p in range(2) for c in "xyz"]), "s")
    v1 = {"likert5": {("p0", "x"): "1", ("p0", "y"): "2", ("p0", "z"): "3",
                      ("p1", "x"): "4", ("p1", "y"): "5", ("p1", "z"): "1"},
          "tournament": {("p0", "x", "y"): "A+", ("p1", "x", "y"): "A+"}}
    v2 = {"likert5": {**v1["likert5"], ("p0", "x"): "2"}, "tournament": {**v1["tournament"], ("p1", "x", "y"): "B+"}}
    for judge, raws in (("j", v1), ("j-b", v2), ("k", v1)):
        rows = [{"judge": judge, "format": "likert5", "prompt_id": p, "candidate_id": c, "raw": raw}
                for (p, c), raw in raws["likert5"].items()]
        rows += [{"judge": judge, "format": "tournament", "prompt_id": p, "a_id": a, "b_id": b, "raw": raw}
                 for (p, a, b), raw in raws["tournament"].items()]
        import_verdicts(path, write_jsonl(f"{judge}.jsonl", rows), "s")
    con = duckdb.connect(str(path))
    try:
        ids = dict(con.execute("SELECT name, judge_id FROM judges").fetchall())
        for judge, model, tag in (("j", "m-1", "h-1"), ("j-b", "m-2", "h-2"), ("k", "m-0", "h-0")):
            con.execute("UPDATE cell_runs SET judge_model = $m, template_hash = $h WHERE judge_id = $j",
                        {"m": model, "h": tag, "j": ids[judge]})
        for name in ("likert5", "tournament"):
            fid = con.execute("SELECT format_id FROM formats WHERE name = $n", {"n": name}).fetchall()[0][0]
            new = con.execute("SELECT max(format_id) + 1 FROM formats").fetchall()[0][0]
            con.execute("INSERT INTO formats SELECT $new, name, kind, pairing, spec, value_lo, value_hi, template, "
                        "spec_hash FROM formats WHERE format_id = $f", {"new": new, "f": fid})
            con.execute("UPDATE verdicts SET judge_id = $j, format_id = $new WHERE judge_id = $old AND format_id = $f",
                        {"j": ids["j"], "new": new, "old": ids["j-b"], "f": fid})
    finally:
        con.close()
    return path


def _version(version, model, tag, run, n):
    """A version as drift reports it (imports record no decoding settings; one cell run each)."""
    return {"version": version, "judge_model": model, "template_hash": tag, "settings": None,
            "first_cell_run": run, "last_cell_run": run, "n_verdicts": n}


# the verdicts of each version, as the fixture wrote them: (format, prompt, slot A, slot B, reading)
_V1 = [("likert5", "p0", "x", None, "1"), ("likert5", "p0", "y", None, "2"), ("likert5", "p0", "z", None, "3"),
       ("likert5", "p1", "x", None, "4"), ("likert5", "p1", "y", None, "5"), ("likert5", "p1", "z", None, "1"),
       ("tournament", "p0", "x", "y", "A+"), ("tournament", "p1", "x", "y", "A+")]
_V2 = [("likert5", "p0", "x", None, "2"), *_V1[1:7], ("tournament", "p1", "x", "y", "B+")]


def _calls(frame, model):
    assert frame["judge_model"].to_list() == [model] * frame.height
    return sorted(frame.select("format", "prompt_id", "a_id", "b_id", "reading").rows(), key=str)


def test_drift_sides_against_another_judge_in_full(two_formats_two_versions):
    from tests.conftest import query_rows
    # the cell runs as the fixture's docstring numbers them
    assert sorted(query_rows(two_formats_two_versions, "SELECT cell_run_id, judge_model, f.name FROM cell_runs "
                                                       "JOIN formats f USING (format_id)")) == [
        (1, "m-1", "likert5"), (2, "m-1", "tournament"), (3, "m-2", "likert5"), (4, "m-2", "tournament"),
        (5, "m-0", "likert5"), (6, "m-0", "tournament")]
    sides = drift_sides(two_formats_two_versions, "s", "j", against="k")
    assert set(sides) == {"versions", "current", "baseline", "current_version", "baseline_version"}
    # j's versions per format, oldest first: likert5 runs 1 (m-1) and 3 (m-2), 6 calls each;
    # tournament runs 2 and 4, 2 calls each
    assert sides["versions"].to_dicts() == [
        {"format": "likert5", **_version(1, "m-1", "h-1", 1, 6)},
        {"format": "likert5", **_version(2, "m-2", "h-2", 3, 6)},
        {"format": "tournament", **_version(1, "m-1", "h-1", 2, 2)},
        {"format": "tournament", **_version(2, "m-2", "h-2", 4, 2)}]
    # current: j's latest version of each format (m-2, both formats), without the version number;
    # the baseline: all of k's verdicts (m-0, written as version 1's)
    assert "version" not in sides["current"].columns
    assert _calls(sides["current"], "m-2") == sorted(_V2, key=str)
    assert _calls(sides["baseline"], "m-0") == sorted(_V1, key=str)
    # the newest version is tournament's m-2 (run 4, the latest); by_format: each format's latest
    assert sides["current_version"] == {"judge": "j", **_version(2, "m-2", "h-2", 4, 2), "by_format": {
        "likert5": _version(2, "m-2", "h-2", 3, 6), "tournament": _version(2, "m-2", "h-2", 4, 2)}}
    # k's versions, one per format: likert5 run 5, tournament run 6
    assert sides["baseline_version"] == {"judge": "k", "versions": [
        {"format": "likert5", **_version(1, "m-0", "h-0", 5, 6)},
        {"format": "tournament", **_version(1, "m-0", "h-0", 6, 2)}]}


def test_drift_sides_of_a_judges_own_versions_in_full(two_formats_two_versions):
    # both formats pair their latest version (m-2) with the one before (m-1) on the same calls
    sides = drift_sides(two_formats_two_versions, "s", "j")
    assert set(sides) == {"versions", "current", "baseline", "current_version", "baseline_version"}
    assert sides["versions"]["judge_model"].to_list() == ["m-1", "m-2", "m-1", "m-2"]
    assert "version" not in sides["current"].columns and "version" not in sides["baseline"].columns
    assert _calls(sides["current"], "m-2") == sorted(_V2, key=str)
    assert _calls(sides["baseline"], "m-1") == sorted(_V1, key=str)
    assert sides["current_version"] == {"judge": "j", **_version(2, "m-2", "h-2", 4, 2), "by_format": {
        "likert5": _version(2, "m-2", "h-2", 3, 6), "tournament": _version(2, "m-2", "h-2", 4, 2)}}
    assert sides["baseline_version"] == {"judge": "j", "by_format": {
        "likert5": _version(1, "m-1", "h-1", 1, 6), "tournament": _version(1, "m-1", "h-1", 2, 2)}}
    # the comparison on both formats: likert5 (p0, x) 1 -> 2 and tournament p1 A+ -> B+
    items = drift_items(two_formats_two_versions, "s", "j")
    assert items.select("format", "prompt_id", "reading_old", "reading").rows() == [
        ("likert5", "p0", "1", "2"), ("tournament", "p1", "A+", "B+")]


def test_drift_sides_names_formats_in_the_order_of_their_runs_every_time(tmp_path, write_jsonl):
    # judges j and k score one call in each of the five built-in formats, in the reverse of their
    # name order, so that j's cell runs, oldest first, are tournament, numeric100, likert5, binary, anchored;
    # by_format names j's formats oldest run first, the same way every time (the JSON output of
    # `judgeaudit drift`), while the versions frame lists them by name: 5 formats can come in 120 orders
    from ingest.store import import_pool
    from ingest.scoring import import_verdicts
    from tests.conftest import query_rows
    path = tmp_path / "five.duckdb"
    import_pool(path, write_jsonl("pool.jsonl", [{"prompt_id": "p0", "prompt": "q", "candidate_id": c,
                                                  "response": c} for c in "xy"]), "s")
    names = ["anchored", "binary", "likert5", "numeric100", "tournament"]
    raws = {"anchored": "TIE", "binary": "yes", "likert5": "3", "numeric100": "50", "tournament": "A+"}
    for f in reversed(names):                  # one import per format: an import runs its formats by name
        import_verdicts(path, write_jsonl(f"{f}.jsonl", [
            {"judge": judge, "format": f, "prompt_id": "p0", "raw": raws[f],
             **({"candidate_id": "x"} if f in ("binary", "likert5", "numeric100") else {"a_id": "x", "b_id": "y"})}
            for judge in ("j", "k")]), "s")
    assert query_rows(path, "SELECT f.name FROM cell_runs JOIN judges j USING (judge_id) JOIN formats f "
                            "USING (format_id) WHERE j.name = 'j' ORDER BY cell_run_id") == [(f,) for f in reversed(names)]
    for _ in range(3):
        sides = drift_sides(path, "s", "j", against="k")
        assert sides["versions"]["format"].to_list() == names
        assert list(sides["current_version"]["by_format"]) == names[::-1]


@pytest.fixture
def fewer_calls_later(tmp_path, write_jsonl):
    """Judge 'j': version m-1 on every likert5 call of 2 prompts x 3 candidates and tournament calls in
    both orders, then version m-2 (a copy of the format rows, as in three_versions) on 4 of the likert5
    calls; judge 'k' on every call with other answers: j's latest likert5 version has fewer calls."""
    import duckdb

    from ingest.store import import_pool
    from ingest.scoring import import_verdicts
    path = tmp_path / "fewer.duckdb"
    import_pool(path, write_jsonl("pool.jsonl", [{"prompt_id": f"p{p}", "prompt": f"q{p}", "candidate_id": c,
                                                  "response": f"{c}{p}"} for p in range(2) for c in "xyz"]), "s")
    likert = [(p, c) for p in ("p0", "p1") for c in "xyz"]
    pairs = [(p, a, b) for p in ("p0", "p1") for a in "xyz" for b in "xyz" if a != b]   # both orders
    for judge, calls, first in (("j", likert, 1), ("j-b", likert[:4], 3), ("k", likert, 2)):
        rows = [{"judge": judge, "format": "likert5", "prompt_id": p, "candidate_id": c,
                 "raw": str(1 + (i + first) % 5)} for i, (p, c) in enumerate(calls)]
        if judge != "j-b":
            rows += [{"judge": judge, "format": "tournament", "prompt_id": p, "a_id": a, "b_id": b,
                      "raw": ("A+", "B", "tie")[(i + first) % 3]} for i, (p, a, b) in enumerate(pairs)]
        import_verdicts(path, write_jsonl(f"{judge}.jsonl", rows), "s")
    con = duckdb.connect(str(path))
    try:
        ids = dict(con.execute("SELECT name, judge_id FROM judges").fetchall())
        for judge, model in (("j", "m-1"), ("j-b", "m-2"), ("k", "m-0")):
            con.execute("UPDATE cell_runs SET judge_model = $m WHERE judge_id = $j", {"m": model, "j": ids[judge]})
        fid = con.execute("SELECT format_id FROM formats WHERE name = 'likert5'").fetchall()[0][0]
        new = con.execute("SELECT max(format_id) + 1 FROM formats").fetchall()[0][0]
        con.execute("INSERT INTO formats SELECT $new, name, kind, pairing, spec, value_lo, value_hi, template, "
                    "spec_hash FROM formats WHERE format_id = $f", {"new": new, "f": fid})
        con.execute("UPDATE verdicts SET judge_id = $j, format_id = $new WHERE judge_id = $old",
                    {"j": ids["j"], "new": new, "old": ids["j-b"]})
    finally:
        con.close()
    return path


@pytest.mark.parametrize("fixture,judge,against", [
    ("two_versions", "j-v2", "j"), ("two_versions", "j", "j-v2"), ("scored_twice", "j-2026-12", "j"),
    ("two_formats_two_versions", "j", "k"), ("two_formats_two_versions", "k", "j"),
    ("fewer_calls_later", "j", "k"), ("fewer_calls_later", "k", "j")])
def test_drift_against_another_judge_read_in_duckdb_equals_the_comparison_in_memory(request, fixture, judge, against):
    """drift and drift_items against another judge are computed in DuckDB a format at a time (out of core,
    10M candidates); compare_verdicts on drift_sides' frames is the reference: the same cells and the same
    moved calls in the same order, the first `limit` of them when asked."""
    from polars.testing import assert_frame_equal
    db = request.getfixturevalue(fixture)
    sides = drift_sides(db, "s", judge, against=against)
    cells, moved = compare_verdicts(sides["baseline"], sides["current"])
    assert moved.height > 0                                         # something moved in every case
    assert_frame_equal(drift(db, "s", judge, against=against), cells, check_exact=False, rel_tol=1e-12)
    assert_frame_equal(drift_items(db, "s", judge, against=against), moved, check_dtypes=False)
    assert cells["n_moved"].sum() == moved.height
    for limit in (0, 1, moved.height - 1):
        assert_frame_equal(drift_items(db, "s", judge, against=against, limit=limit), moved.head(limit),
                           check_dtypes=False)


@pytest.mark.parametrize("fixture,baseline_version", [
    ("three_versions", None), ("three_versions", 1), ("three_versions", 2), ("two_formats_two_versions", None),
    ("two_formats_two_versions", 1), ("fewer_calls_later", None)])
def test_drift_of_a_judges_own_versions_read_in_duckdb_equals_the_comparison_in_memory(request, fixture,
                                                                                       baseline_version):
    """Without --against, drift and drift_items read two versions of one judge in DuckDB too (the versions
    from drift_versions.sql, each candidate baseline tried there), never the judge's verdicts in memory:
    compare_verdicts on drift_sides' frames is the reference. fewer_calls_later: only likert5 has a second
    version (on 4 of its 6 calls), so tournament is left out."""
    from polars.testing import assert_frame_equal
    db = request.getfixturevalue(fixture)
    sides = drift_sides(db, "s", "j", baseline_version=baseline_version)
    cells, moved = compare_verdicts(sides["baseline"], sides["current"])
    assert moved.height > 0
    got = drift(db, "s", "j", baseline_version=baseline_version)
    assert_frame_equal(got, cells, check_exact=False, rel_tol=1e-12)
    assert_frame_equal(drift_items(db, "s", "j", baseline_version=baseline_version), moved, check_dtypes=False)
    assert_frame_equal(drift_items(db, "s", "j", baseline_version=baseline_version, limit=1), moved.head(1),
                       check_dtypes=False)
    if fixture == "fewer_calls_later":
        assert got["format"].to_list() == ["likert5"] and got["n"].to_list() == [4]


def _in_memory_document(db, pool, judge, against, baseline_version=None):
    """What `judgeaudit drift --json` printed when it compared in memory (drift_sides and compare_verdicts,
    the cells' moved calls filtered from one frame): the reference of the document that is now read out
    of core."""
    sides = drift_sides(db, pool, judge, against=against, baseline_version=baseline_version)
    cells, moved = compare_verdicts(sides["baseline"], sides["current"])
    doc = {"pool": pool, "judge": judge, "against": against, "current_version": sides["current_version"],
           "baseline_version": sides["baseline_version"], "versions": sides["versions"].to_dicts(), "cells": []}
    for cell in cells.to_dicts():
        items = moved.filter((pl.col("format") == cell["format"]) & (pl.col("decoding") == cell["decoding"]))
        doc["cells"].append({**cell, "moved": items.drop("format", "decoding").to_dicts()})
    return json.loads(json.dumps(doc))


def _same_document(got, want, where="$"):
    """got == want, floats to 1e-12 (DuckDB's sums and polars' may differ in the last bits), key order too."""
    if isinstance(want, float) and isinstance(got, (int, float)):
        assert got == pytest.approx(want, rel=1e-12, abs=1e-15), where
    elif isinstance(want, dict):
        assert isinstance(got, dict) and list(got) == list(want), f"{where}: keys {list(got)} != {list(want)}"
        for k in want:
            _same_document(got[k], want[k], f"{where}.{k}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{where}: {len(got)} items != {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            _same_document(g, w, f"{where}[{i}]")
    else:
        assert got == want and type(got) is type(want), f"{where}: {got!r} != {want!r}"


@pytest.mark.parametrize("fixture,judge,against", [
    ("two_versions", "j-v2", "j"), ("scored_twice", "j-2026-12", "j"), ("two_formats_two_versions", "j", "k"),
    ("fewer_calls_later", "j", "k"), ("fewer_calls_later", "k", "j"), ("two_decodings", "j-v2", "j")])
def test_drift_cli_against_another_judge_prints_the_document_it_printed_in_memory(request, fixture, judge, against):
    """`judgeaudit drift --against --json` reads out of core (drift_report: the versions, cells and moved calls in
    DuckDB, streamed); on small pools (ties among the tournament readings of fewer_calls_later, two versions of
    a format, formats of different sizes) it prints the document the in-memory comparison printed."""
    db = request.getfixturevalue(fixture)
    want = _in_memory_document(db, "s", judge, against)
    assert sum(len(c["moved"]) for c in want["cells"]) > 0
    proc = subprocess.run([EXE, "drift", "--pool", "s", "--judge", judge, "--against", against, "--db", str(db),
                           "--json"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    _same_document(json.loads(proc.stdout), want)


@pytest.mark.parametrize("fixture,baseline_version", [("three_versions", None), ("three_versions", 1),
                                                      ("two_formats_two_versions", None)])
def test_drift_cli_of_a_judges_own_versions_prints_the_document_it_printed_in_memory(request, fixture,
                                                                                     baseline_version):
    """`judgeaudit drift --json` without --against reads out of core as well and prints what the in-memory
    comparison printed (three_versions' default baseline is version 2, m-2; version 1 when asked)."""
    db = request.getfixturevalue(fixture)
    want = _in_memory_document(db, "s", "j", None, baseline_version)
    assert want["against"] is None and sum(len(c["moved"]) for c in want["cells"]) > 0
    extra = [] if baseline_version is None else ["--baseline-version", str(baseline_version)]
    proc = subprocess.run([EXE, "drift", "--pool", "s", "--judge", "j", "--db", str(db), "--json", *extra],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    _same_document(json.loads(proc.stdout), want)


@pytest.fixture
def two_decodings(two_versions):
    """two_versions with every verdict stored again under the constrained decoding, j-v2's (p0, x) likert5
    there 3 -> 4: four cells (two formats x two decodings), each with calls that moved."""
    import duckdb
    con = duckdb.connect(str(two_versions))
    try:
        con.execute("INSERT INTO verdicts SELECT * REPLACE ('constrained' AS decoding) FROM verdicts")
        con.execute("UPDATE verdicts SET value = 4, answer = '4' WHERE decoding = 'constrained' AND prompt_idx = 0 "
                    "AND a_idx = 0 AND b_idx IS NULL AND judge_id = (SELECT judge_id FROM judges WHERE name = 'j-v2')")
    finally:
        con.close()
    return two_versions


@pytest.mark.parametrize("fixture,judge,against,n_cells", [("fewer_calls_later", "k", "j", 2),
                                                            ("two_decodings", "j-v2", "j", 4)])
def test_drift_report_splits_streamed_batches_into_their_cells(request, fixture, judge, against, n_cells):
    """The moved calls arrive in batches of any size and each lands in its own cell: batches of 1 and 2
    rows, across the boundaries of decodings and formats, give the in-memory cells' lists."""
    from audit import drift_report
    db = request.getfixturevalue(fixture)
    want = _in_memory_document(db, "s", judge, against)
    # the moved calls of every cell, as the in-memory comparison lists them
    want_cells = [(c["format"], c["decoding"], c["moved"]) for c in want["cells"]]
    assert len(want_cells) == n_cells and all(moved for *_, moved in want_cells)
    for rows in (1, 2, 1000):
        with drift_report(db, "s", judge, against, batch_rows=rows) as (head, cells):
            got = [(c["format"], c["decoding"], json.loads(json.dumps([r for f in moved for r in f.to_dicts()])))
                   for c, moved in cells]
            versions = head["versions"].to_dicts()
        assert got == want_cells
        assert versions == want["versions"]


def test_drift_report_names_a_judge_without_verdicts_on_the_pool(two_versions, write_jsonl):
    from audit import drift_report
    from ingest.store import import_pool
    from ingest.scoring import import_verdicts
    import_pool(two_versions, write_jsonl("other.jsonl", [{"prompt_id": "q", "prompt": "q", "candidate_id": "x",
                                                            "response": "x"}]), "t")
    import_verdicts(two_versions, write_jsonl("w.jsonl", [{"judge": "elsewhere", "format": "likert5",
                                                           "prompt_id": "q", "candidate_id": "x", "raw": "3"}]), "t")
    with pytest.raises(AuditError, match="judge 'elsewhere' has no verdicts on pool 's'"):
        with drift_report(two_versions, "s", "elsewhere", "j"):
            pass


@pytest.mark.parametrize("n_judges,mask_judges", [(64, 64), (64, 10), (65, 64)])
def test_drift_pairs_count_the_shared_calls_of_every_pair(tmp_path, write_jsonl, monkeypatch, n_judges, mask_judges):
    """drift_pairs counts each call once per mask of the judges that answered it (bits 0 to 63), or joins the
    calls past 64 judges (or past a lowered limit): both equal a count of the calls each two judges share,
    made here from the rows written. Judge k answers the likert5 call of candidate c of prompt p when
    (k + p + c) % 3 != 0, and binary calls only for k < 3: overlaps of every size, and pairs that share
    only likert5 calls."""
    import itertools

    import audit._drift as drift_module
    from audit import drift_pairs
    from ingest.scoring import import_verdicts
    from ingest.store import import_pool
    path = tmp_path / "many.duckdb"
    import_pool(path, write_jsonl("pool.jsonl", [{"prompt_id": f"p{p}", "prompt": "q", "candidate_id": f"c{c}",
                                                  "response": "r"} for p in range(2) for c in range(3)]), "s")
    rows = [{"judge": f"j{k:02d}", "format": "likert5", "prompt_id": f"p{p}", "candidate_id": f"c{c}", "raw": "3"}
            for k in range(n_judges) for p in range(2) for c in range(3) if (k + p + c) % 3]
    rows += [{"judge": f"j{k:02d}", "format": "binary", "prompt_id": "p0", "candidate_id": "c0", "raw": "yes"}
             for k in range(3)]
    import_verdicts(path, write_jsonl("v.jsonl", rows), "s")
    calls = {}
    for r in rows:
        calls.setdefault(r["judge"], set()).add((r["format"], r["prompt_id"], r["candidate_id"]))
    want = sorted((a, b, len(calls[a] & calls[b])) for a, b in itertools.permutations(sorted(calls), 2)
                  if calls[a] & calls[b])
    monkeypatch.setattr(drift_module, "MASK_JUDGES", mask_judges)
    got = drift_pairs(path, "s")
    assert got.rows() == want
    # by hand: j00's likert5 calls are p0c1, p0c2, p1c0, p1c1 ((p + c) % 3 != 0), j01's p0c0, p0c1, p1c0, p1c2
    # ((1 + p + c) % 3 != 0): p0c1 and p1c0 shared, plus the binary call of p0c0 both answered: 3
    assert dict(((a, b), n) for a, b, n in got.rows())[("j00", "j01")] == 3


@pytest.fixture
def many_ties(tmp_path, write_jsonl):
    """Judges 'j' and 'k' on 30 prompts x 4 candidates: likert5 readings of three levels and some that do
    not parse, binary, and tournament pairs in both orders with three readings; each judge leaves out a
    random tenth of its calls, and k's likert5 calls lie in two format rows of that name (a copy of the
    row, every call in both with other readings in the copy's newer run, then a third removed from the old
    row): many ties, unparsed readings on either side, calls answered twice."""
    import random

    import duckdb

    from ingest.scoring import import_verdicts
    from ingest.store import import_pool
    rng = random.Random(39)
    path = tmp_path / "ties.duckdb"
    cands = [(f"p{p}", f"c{c}") for p in range(30) for c in range(4)]
    import_pool(path, write_jsonl("pool.jsonl", [{"prompt_id": p, "prompt": "q", "candidate_id": c, "response": "r"}
                                                 for p, c in cands]), "s")
    pairs = [(p, f"c{a}", f"c{b}") for p in (f"p{i}" for i in range(30)) for a in range(4) for b in range(4) if a != b]

    def rows(judge):
        out = [{"judge": judge, "format": "likert5", "prompt_id": p, "candidate_id": c,
                "raw": rng.choice(["2", "3", "3", "4", "unsure"])} for p, c in cands if rng.random() > 0.1]
        out += [{"judge": judge, "format": "binary", "prompt_id": p, "candidate_id": c,
                 "raw": rng.choice(["yes", "no"])} for p, c in cands if rng.random() > 0.1]
        out += [{"judge": judge, "format": "tournament", "prompt_id": p, "a_id": a, "b_id": b,
                 "raw": rng.choice(["A+", "B+", "tie"])} for p, a, b in pairs if rng.random() > 0.1]
        return out
    import_verdicts(path, write_jsonl("j.jsonl", rows("j")), "s")
    import_verdicts(path, write_jsonl("k.jsonl", rows("k")), "s")
    con = duckdb.connect(str(path))
    try:
        fid, new, run = con.execute("SELECT format_id, (SELECT max(format_id) + 1 FROM formats), "
                                    "(SELECT max(cell_run_id) + 1 FROM cell_runs) FROM formats "
                                    "WHERE name = 'likert5'").fetchone()
        k = con.execute("SELECT judge_id FROM judges WHERE name = 'k'").fetchone()[0]
        con.execute("INSERT INTO formats SELECT $new, name, kind, pairing, spec, value_lo, value_hi, template, "
                    "spec_hash FROM formats WHERE format_id = $f", {"new": new, "f": fid})
        con.execute("INSERT INTO cell_runs SELECT * REPLACE ($run AS cell_run_id, $new AS format_id) FROM cell_runs "
                    "WHERE judge_id = $k AND format_id = $f", {"run": run, "new": new, "k": k, "f": fid})
        con.execute("INSERT INTO verdicts SELECT * REPLACE ($new AS format_id, $run AS cell_run_id, "
                    "CASE WHEN prompt_idx % 2 = 0 THEN '5' ELSE answer END AS answer, "
                    "CASE WHEN prompt_idx % 2 = 0 THEN 5 ELSE value END AS value) "
                    "FROM verdicts WHERE format_id = $f AND judge_id = $k", {"new": new, "run": run, "f": fid, "k": k})
        con.execute("DELETE FROM verdicts WHERE format_id = $f AND judge_id = $k AND prompt_idx % 3 = 0",
                    {"f": fid, "k": k})
    finally:
        con.close()
    return path


@pytest.mark.parametrize("judge,against", [("j", "k"), ("k", "j")])
def test_drift_with_many_ties_and_calls_answered_twice_equals_the_comparison_in_memory(many_ties, judge, against):
    """drift and drift_items (DuckDB: the verdicts read once as plain columns, the sides joined on the call,
    a call's newest row kept over two format rows of one name) equal compare_verdicts on drift_sides'
    frames (in memory, every verdict read): the same cells, the same moved calls in the same order."""
    from polars.testing import assert_frame_equal
    sides = drift_sides(many_ties, "s", judge, against=against)
    cells, moved = compare_verdicts(sides["baseline"], sides["current"])
    got = drift(many_ties, "s", judge, against=against)
    assert got["n"].sum() > 250 and moved.height > 100 and cells.height == 3
    assert_frame_equal(got, cells, check_exact=False, rel_tol=1e-12)
    assert_frame_equal(drift_items(many_ties, "s", judge, against=against), moved, check_dtypes=False)
    assert_frame_equal(drift_items(many_ties, "s", judge, against=against, limit=7), moved.head(7),
                       check_dtypes=False)
