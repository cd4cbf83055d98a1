"""Juries (`judgeaudit jury`; DESIGN.md 'Human labels and what they are worth'): a jury's verdicts
recomputed by hand on a small pool, with a missing member, an unparsed member and a majority with no
majority; mean, median and majority on ties; refreshed when a member's verdicts grow; and seen as a
judge by the cell-wise commands, never exported as calls."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from audit import audit_cells, juries, verdict_rows
from ingest import UserError
from ingest.scoring import import_verdicts
from ingest.store import import_labels, import_pool, save_jury
from tests.fixtures import write_jsonl
from tests.audit.conftest import main_json


def _pool(tmp_path: Path) -> Path:
    db = tmp_path / "j.duckdb"
    rows = [{"prompt_id": p, "prompt": f"q{p}", "candidate_id": c, "response": f"answer {c} to {p}",
             "reference": float(i)} for p, cands in (("p1", "xyz"), ("p2", "xy")) for i, c in enumerate(cands)]
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", rows), "p")
    return db


# likert5 answers per (prompt, candidate) and judge; None: the judge has no call on it (missing)
LIKERT = {("p1", "x"): ("5", "4", "4"), ("p1", "y"): ("2", "2", "1"), ("p1", "z"): ("3", "oops", None),
          ("p2", "x"): ("1", "5", "3"), ("p2", "y"): ("2", "4", None)}


def _likert(tmp_path: Path, db: Path) -> None:
    rows = [{"judge": judge, "format": "likert5", "prompt_id": p, "candidate_id": c, "raw": raw}
            for (p, c), raws in LIKERT.items() for judge, raw in zip(("j1", "j2", "j3"), raws) if raw is not None]
    import_verdicts(db, write_jsonl(tmp_path / "likert.jsonl", rows), "p")


def _jury_rows(db: Path, name: str) -> dict:
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute("SELECT p.prompt_id, c.candidate_id, v.value, v.status, v.answer, v.raw, v.tokens_in "
                           "FROM verdicts v JOIN judges j USING (judge_id) "
                           "JOIN prompts p ON p.pool_id = v.pool_id AND p.prompt_idx = v.prompt_idx "
                           "JOIN candidates c ON c.pool_id = v.pool_id AND c.cand_idx = v.a_idx "
                           "WHERE j.name = $n", {"n": name}).fetchall()
    finally:
        con.close()
    return {(r[0], r[1]): r[2:] for r in rows}


def test_a_jury_recomputed_by_hand_with_a_missing_member_and_no_majority(tmp_path):
    db = _pool(tmp_path)
    _likert(tmp_path, db)
    for vote in ("mean", "median", "majority"):
        out = save_jury(db, "p", f"jury-{vote}", ["j1", "j2", "j3"], vote)
        assert out["members"] == ["j1", "j2", "j3"] and out["n_verdicts"] == 5
    mean, median, majority = (_jury_rows(db, f"jury-{v}") for v in ("mean", "median", "majority"))
    # p1/x: 5, 4, 4 -> mean 13/3, median 4, majority 4 (2 of 3 members gave it)
    assert mean[("p1", "x")][:2] == (pytest.approx(13 / 3, abs=1e-11), "ok")
    assert median[("p1", "x")][:3] == (4.0, "ok", "4") and majority[("p1", "x")][:3] == (4.0, "ok", "4")
    # p1/y: 2, 2, 1 -> mean 5/3, median 2, majority 2
    assert mean[("p1", "y")][0] == pytest.approx(5 / 3, abs=1e-11)
    assert median[("p1", "y")][0] == majority[("p1", "y")][0] == 2.0
    # p1/z: j1 parsed 3, j2 unparsed, j3 has no call (missing, not zero): 1 of 3 parsed -> unparsed in every vote
    for rows in (mean, median, majority):
        assert rows[("p1", "z")][:2] == (None, "no_quorum")
    # p2/x: 1, 5, 3 -> mean 3, median 3; no value given by more than half (each by 1 of 3) -> no majority
    assert mean[("p2", "x")][0] == median[("p2", "x")][0] == 3.0
    assert majority[("p2", "x")][:2] == (None, "no_majority")
    # p2/y: 2, 4, j3 missing: 2 of 3 parsed (more than half) -> mean 3, median (2 + 4) / 2 = 3, no majority
    assert mean[("p2", "y")][:2] == (3.0, "ok") and median[("p2", "y")][0] == 3.0
    assert majority[("p2", "y")][:2] == (None, "no_majority")
    # not calls: no raw output, no tokens
    assert all(r[3] is None and r[4] is None for r in mean.values())

    cells = {(c["judge"]): c for c in audit_cells(db, "p").to_dicts()}
    # parse rates: the mean's 4 parsed keys of 5; the majority's 2 (p1/x, p1/y) of 5
    assert cells["jury-mean"]["parse_rate"] == pytest.approx(4 / 5)
    assert cells["jury-majority"]["parse_rate"] == pytest.approx(2 / 5)
    assert cells["jury-mean"]["aggregate"] == "jury" and cells["jury-mean"]["members"] == ["j1", "j2", "j3"]
    assert cells["j1"]["aggregate"] == "single" and cells["j1"]["members"] is None
    # the mean jury's normalised scores (v - 1) / 4: 10/12, 2/12, 0.5, 0.5 -> 3 distinct, one tie (p2)
    assert cells["jury-mean"]["distinct"] == 3 and cells["jury-mean"]["n_candidates"] == 4


def _pairs(tmp_path: Path, db: Path, margins: dict[str, list[str]]) -> None:
    rows = [{"judge": judge, "format": "tournament", "prompt_id": "p2", "a_id": "x", "b_id": "y", "raw": raw}
            for judge, raw in zip([f"m{i}" for i in range(len(margins["raws"]))], margins["raws"])]
    import_verdicts(db, write_jsonl(tmp_path / f"pairs-{len(rows)}.jsonl", rows), "p")


@pytest.mark.parametrize("raws, expected", [
    # two members split A+ (+1) / B+ (-1): the mean and the median are a tie (0); no value has more than
    # half the members (1 of 2 each), and as many favour A as B: the majority is a tie, not the first member
    (["A+", "B+"], {"mean": (0.0, "ok"), "median": (0.0, "ok"), "majority": (0.0, "ok")}),
    # the same the other way round: still a tie (the members' order decides nothing)
    (["B+", "A+"], {"mean": (0.0, "ok"), "median": (0.0, "ok"), "majority": (0.0, "ok")}),
    # four members A++, A+, B+, B++ (+2, +1, -1, -2): mean 0, median (1 + -1)/2 = 0, majority: no value has
    # 3 of 4, two favour A and two B -> a tie
    (["A++", "A+", "B+", "B++"], {"mean": (0.0, "ok"), "median": (0.0, "ok"), "majority": (0.0, "ok")}),
    # A+, A+, B++ (+1, +1, -2): mean 0 (a tie made by the vote), median +1, majority +1 (2 of 3)
    (["A+", "A+", "B++"], {"mean": (0.0, "ok"), "median": (1.0, "ok"), "majority": (1.0, "ok")}),
    # A++, A+, B+ (+2, +1, -1): no value by 2 of 3, two favour A and one B: not an even split -> unparsed
    (["A++", "A+", "B+"], {"mean": (2 / 3, "ok"), "median": (1.0, "ok"), "majority": (None, "no_majority")}),
    # TIE, TIE, A++, B++ (0, 0, +2, -2): mean 0, median 0, majority: 0 by 2 of 4 is not more than half,
    # one favours A and one B -> a tie
    (["TIE", "TIE", "A++", "B++"], {"mean": (0.0, "ok"), "median": (0.0, "ok"), "majority": (0.0, "ok")}),
    # a panel of three whose third member failed to parse: A+ and B+ of the two that parsed (2 of 3,
    # a quorum) split evenly -> a tie; A+ and A+ -> +1 by both
    (["A+", "B+", "oops"], {"mean": (0.0, "ok"), "median": (0.0, "ok"), "majority": (0.0, "ok")}),
    (["A+", "A+", "oops"], {"mean": (1.0, "ok"), "median": (1.0, "ok"), "majority": (1.0, "ok")}),
    # A++, A+ and a failure: no value by more than half of the 2 that parsed, both favour A: unparsed
    (["A++", "A+", "oops"], {"mean": (1.5, "ok"), "median": (1.5, "ok"), "majority": (None, "no_majority")}),
])
def test_mean_median_and_majority_on_ties(tmp_path, raws, expected):
    db = _pool(tmp_path)
    _pairs(tmp_path, db, {"raws": raws})
    members = [f"m{i}" for i in range(len(raws))]
    for vote, want in expected.items():
        save_jury(db, "p", f"j-{vote}", members, vote)
        got = _jury_rows(db, f"j-{vote}")[("p2", "x")][:2]
        assert (pytest.approx(got[0]) if got[0] is not None else None, got[1]) == want


def test_a_jury_follows_its_members_and_is_refused_when_ill_formed(tmp_path):
    db = _pool(tmp_path)
    _likert(tmp_path, db)
    save_jury(db, "p", "panel", ["j1", "j2", "j3"], "mean")
    assert _jury_rows(db, "panel")[("p1", "z")][:2] == (None, "no_quorum")
    # j3's missing call arrives: its import's cell run finishes and refreshes the jury (3 and 5: 2 of 3 parsed)
    import_verdicts(db, write_jsonl(tmp_path / "late.jsonl", [{"judge": "j3", "format": "likert5", "prompt_id": "p1",
                                                          "candidate_id": "z", "raw": "5"}]), "p")
    assert _jury_rows(db, "panel")[("p1", "z")][:2] == (4.0, "ok")
    assert juries(db, "p").to_dicts() == [{"judge": "panel", "vote": "mean", "members": ["j1", "j2", "j3"]}]
    with pytest.raises(UserError, match="already stands for another judge"):
        save_jury(db, "p", "panel", ["j1", "j2"], "mean")
    with pytest.raises(UserError, match="no verdicts of 'nobody'"):
        save_jury(db, "p", "other", ["j1", "nobody"])
    with pytest.raises(UserError, match="at least two"):
        save_jury(db, "p", "other", ["j1", "j1"])
    with pytest.raises(UserError, match="is a jury"):
        save_jury(db, "p", "other", ["j1", "panel"])
    # the same jury again refreshes it, unchanged
    assert save_jury(db, "p", "panel", ["j1", "j2", "j3"], "mean")["n_verdicts"] == 5
    # export-verdicts lists calls: the jury's rows (its members' votes combined) are not among them
    assert "panel" not in set(verdict_rows(db, "p")["judge"])


def test_every_cell_wise_command_shows_the_jury_as_a_judge(tmp_path, capsys):
    db = _pool(tmp_path)
    calls = {"j1": ("A+", "B+", "A++", "TIE"), "j2": ("A+", "A+", "B+", "B+"), "j3": ("B++", "TIE", "A+", "A+")}
    orders = [("p1", "x", "y"), ("p1", "y", "x"), ("p2", "x", "y"), ("p2", "y", "x")]
    rows = [{"judge": j, "format": "tournament", "prompt_id": p, "a_id": a, "b_id": b, "raw": raw}
            for j, raws in calls.items() for (p, a, b), raw in zip(orders, raws)]
    import_verdicts(db, write_jsonl(tmp_path / "t.jsonl", rows), "p")
    import_labels(db, write_jsonl(tmp_path / "labels.jsonl", [{"prompt_id": "p1", "a_id": "x", "b_id": "y", "label": "A"},
                                                          {"prompt_id": "p2", "a_id": "x", "b_id": "y", "label": "B"}]), "p")
    assert main_json(capsys, "jury", "--db", str(db), "--pool", "p", "--name", "trio", "--judges", "j1,j2,j3",
                     "--vote", "majority", "--json")["n_verdicts"] == 4
    for command in (["audit"], ["bias", "--n-boot", "50"], ["calibrate", "--n-boot", "50"], ["consistency"],
                    ["rank", "--n-boot", "20"]):
        doc = main_json(capsys, *command, "--db", str(db), "--pool", "p", "--json")
        trio = [c for c in doc["cells"] if c["judge"] == "trio"]
        assert trio and all(c["aggregate"] == "jury" and c["members"] == ["j1", "j2", "j3"] for c in trio), command
        assert all(c.get("aggregate") != "jury" for c in doc["cells"] if c["judge"] != "trio")
    # the majority's verdicts: p1 x-y: A+, A+, B++ -> +1; y-x: B+, A+, TIE -> one for each side, a tie;
    # p2 x-y: A++, B+, A+ (+2, -1, +1) -> no value by 2 of 3, two for A and one for B: none; y-x: TIE, B+,
    # A+ -> a tie. Three parsed calls of four.
    (cell,) = [c for c in main_json(capsys, "audit", "--db", str(db), "--pool", "p", "--json")["cells"]
               if c["judge"] == "trio"]
    assert cell["parse_rate"] == pytest.approx(3 / 4)


def _jury_table(db: Path) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT f.name, v.decoding, v.prompt_idx, v.a_idx, v.b_idx, v.value, v.status, v.answer, "
                           "CAST(v.answer_probs AS VARCHAR) FROM verdicts v JOIN judges j USING (judge_id) "
                           "JOIN formats f USING (format_id) WHERE j.provider = 'jury' ORDER BY ALL").fetchall()
    finally:
        con.close()


def test_a_demo_seeding_killed_before_its_jury_resumes_with_it(tmp_path):
    from ingest.demo import seed_demo
    whole, killed = tmp_path / "whole.duckdb", tmp_path / "killed.duckdb"
    for db in (whole, killed):
        assert seed_demo(db, pools=("mtbench",)) == ["mtbench"]
    # a kill before the jury's transaction: everything else stored, the jury not (its rows removed here)
    con = duckdb.connect(str(killed))
    for sql in ("DELETE FROM verdicts WHERE judge_id IN (SELECT judge_id FROM judges WHERE provider = 'jury')",
                "DELETE FROM cell_runs WHERE judge_id IN (SELECT judge_id FROM judges WHERE provider = 'jury')",
                "DELETE FROM jury_members", "DELETE FROM juries", "DELETE FROM judges WHERE provider = 'jury'"):
        con.execute(sql)
    con.close()
    assert juries(killed, "mtbench").height == 0
    assert seed_demo(killed, pools=("mtbench",)) == []          # no pool seeded anew; the jury resumes
    assert juries(killed, "mtbench").to_dicts() == [{"judge": "mtbench-jury", "vote": "mean",
                                                     "members": ["GPT-4", "ChatGPT", "PaLM2", "LLaMA2"]}]
    rows = _jury_table(whole)
    assert len(rows) == 600 and _jury_table(killed) == rows      # 300 calls x 2 formats, as never killed
    seed_demo(killed, pools=("mtbench",))                        # and seeding again changes nothing
    assert _jury_table(killed) == rows
