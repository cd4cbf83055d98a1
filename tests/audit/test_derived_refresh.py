"""The refresh's own work (audit.derived.refresh) and the pairs of judges that share calls stored per
judging: the fingerprints taken once a refresh, not once a result; what it computed stored together
and only where its fingerprint still holds; a new judge's pairs counted in its own parts, and a judge's
changed verdicts computing again every part that counted them (no stale pair survives)."""

from __future__ import annotations

import itertools
import time
from dataclasses import replace

import duckdb
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import audit
from audit import derived
from audit.derived import _registry
from ingest import Database, store
from ingest.scoring import import_verdicts
from ingest.store import _sql, import_pool
from tests.conftest import query_rows
from tests.fixtures import synthetic_pool, synthetic_verdicts
from train.derived_results import DERIVED_RESULTS

FORMATS = ("likert5", "binary")


def _rows(judge: str, k: int, calls: set) -> list[dict]:
    """Judge `judge`'s verdicts on `calls` ((format, prompt_id, candidate_id)), its readings drawn by k."""
    raw = {"likert5": lambda i: str(1 + (i + k) % 5), "binary": lambda i: ("yes", "no")[(i + k) % 2]}
    return [{"judge": judge, "format": f, "prompt_id": p, "candidate_id": c, "raw": raw[f](i)}
            for i, (f, p, c) in enumerate(sorted(calls))]


def _calls(k: int) -> set:
    """Judge k's calls: likert5 on candidate c of prompt p when (k + p + c) % 3 != 0, binary on prompt 0's
    candidates c <= k: overlaps of every size between any two judges."""
    likert = {("likert5", f"p{p}", f"c{c}") for p in range(3) for c in range(3) if (k + p + c) % 3}
    return likert | {("binary", "p0", f"c{c}") for c in range(3) if c <= k}


def _pool(db, write_jsonl):
    import_pool(db, write_jsonl("pool.jsonl", [{"prompt_id": f"p{p}", "prompt": "q", "candidate_id": f"c{c}",
                                                "response": "r"} for p in range(3) for c in range(3)]), "s")


def _want(calls: dict) -> list[tuple]:
    """drift_pairs counted here from the calls written: (judge, against, n_shared) for every ordered pair
    that shares a call, sorted."""
    return sorted((a, b, len(calls[a] & calls[b])) for a, b in itertools.permutations(sorted(calls), 2)
                  if calls[a] & calls[b])


def _counting(monkeypatch, name: str) -> list:
    """The judgings each computation of the result `name` was scoped to (None: every judging)."""
    scopes, original = [], DERIVED_RESULTS[name]

    def counting(db, *args, **kwargs):
        scopes.append(db.judgings)
        return original.compute(db, *args, **kwargs)
    monkeypatch.setitem(DERIVED_RESULTS, name, replace(original, compute=counting))
    return scopes


def _stored_pairs(db) -> pl.DataFrame:
    derived.forget()
    return derived.read(Database(db), "s", "drift_pairs", results=DERIVED_RESULTS)


def test_a_new_judge_counts_its_own_pairs_and_a_changed_judge_every_part_that_counted_it(db, write_jsonl,
                                                                                        monkeypatch):
    _pool(db, write_jsonl)
    calls = {f"j{k}": _calls(k) for k in range(3)}
    for judge in calls:                                   # imported in turn: j0 has the lowest id
        import_verdicts(db, write_jsonl(f"{judge}.jsonl", _rows(judge, int(judge[1]), calls[judge])), "s")
    scopes = _counting(monkeypatch, "drift_pairs")
    derived.forget()
    derived.refresh(Database(db), "s", DERIVED_RESULTS)
    assert scopes == [tuple(sorted((j, f) for j in calls for f in FORMATS))]   # nothing stored: every part
    assert _stored_pairs(db).rows() == _want(calls)
    # by hand: j0's likert5 calls are (p, c) with (p + c) % 3 != 0: p0c1 p0c2 p1c0 p1c1 p2c0 p2c2; j1's
    # (1 + p + c) % 3 != 0: p0c0 p0c1 p1c0 p1c2 p2c1 p2c2; shared p0c1 p1c0 p2c2, and binary p0c0: 4
    assert dict(((a, b), n) for a, b, n in _stored_pairs(db).rows())[("j0", "j1")] == 4

    # a new judge (the highest id): its own two parts alone, counted against the three before it
    calls["j3"] = _calls(3)
    import_verdicts(db, write_jsonl("j3.jsonl", _rows("j3", 3, calls["j3"])), "s")
    derived.forget()
    done = {r["name"]: r for r in derived.refresh(Database(db), "s", DERIVED_RESULTS)["results"]}
    assert scopes[-1] == (("j3", "binary"), ("j3", "likert5"))
    assert (done["drift_pairs"]["computed"], done["drift_pairs"]["parts"]) == (2, 8)
    assert _stored_pairs(db).rows() == _want(calls) == audit.drift_pairs(db, "s").rows()

    # j0 (the lowest id) answers three more likert5 calls: every judge's likert5 part counted pairs with
    # j0, so each is computed again (none survives with j0's old count); the binary parts stay as stored
    more = {("likert5", "p0", "c0"), ("likert5", "p1", "c2"), ("likert5", "p2", "c1")}
    assert not more & calls["j0"]
    import_verdicts(db, write_jsonl("j0-more.jsonl", _rows("j0", 7, more)), "s")
    calls["j0"] |= more
    derived.forget()
    derived.refresh(Database(db), "s", DERIVED_RESULTS)
    assert scopes[-1] == tuple((j, "likert5") for j in sorted(calls))
    assert _stored_pairs(db).rows() == _want(calls) == audit.drift_pairs(db, "s").rows()
    # by hand: j1 answered all three ((1 + p + c) % 3 is 1, 1, 1), so j0 and j1 now share 4 + 3 = 7 calls
    assert dict(((a, b), n) for a, b, n in _stored_pairs(db).rows())[("j0", "j1")] == 7

    # j2's likert5 verdicts go (the rows deleted): its part and those of the judges after it (j3) are
    # computed again, j0's and j1's stay; j2 keeps only its binary pairs
    con = duckdb.connect(str(db))
    try:
        con.execute("DELETE FROM verdicts WHERE judge_id = (SELECT judge_id FROM judges WHERE name = 'j2') AND "
                    "format_id IN (SELECT format_id FROM formats WHERE name = 'likert5')")
    finally:
        con.close()
    calls["j2"] = {c for c in calls["j2"] if c[0] == "binary"}
    derived.forget()
    derived.refresh(Database(db), "s", DERIVED_RESULTS)
    assert scopes[-1] == (("j2", "likert5"), ("j3", "likert5"))
    assert _stored_pairs(db).rows() == _want(calls) == audit.drift_pairs(db, "s").rows()


def test_judges_that_answered_the_same_calls_share_them_all_and_others_of_as_many_calls_are_joined(
        db, write_jsonl, monkeypatch):
    """drift_pair_parts compares two judgings by their summaries (the number of calls, two sums of hashes of
    the call keys) and joins the calls only where they differ: judges that answered the same calls (with
    other readings) share them all, judges of as many calls but not the same ones share what a join counts;
    both the whole refresh and a new judge's parts alone equal the calls counted here from the rows written.
    j0, j1 and j3 answer every likert5 call; j2 and j4 six each ((k + p + c) % 3 != 0), three of them shared."""
    _pool(db, write_jsonl)
    every = {("likert5", f"p{p}", f"c{c}") for p in range(3) for c in range(3)}
    calls = {"j0": every | {("binary", "p0", "c0")}, "j1": set(every),
             "j2": {c for c in _calls(2) if c[0] == "likert5"}}
    for judge in calls:
        import_verdicts(db, write_jsonl(f"{judge}.jsonl", _rows(judge, int(judge[1]), calls[judge])), "s")
    scopes = _counting(monkeypatch, "drift_pairs")
    derived.forget()
    derived.refresh(Database(db), "s", DERIVED_RESULTS)
    assert _stored_pairs(db).rows() == _want(calls) == audit.drift_pairs(db, "s").rows()
    # by hand: j0 and j1 answered the same nine likert5 calls (j0 one binary call more): 9 shared
    assert dict(((a, b), n) for a, b, n in _stored_pairs(db).rows())[("j0", "j1")] == 9

    calls["j3"], calls["j4"] = set(every), {c for c in _calls(1) if c[0] == "likert5"}
    for judge in ("j3", "j4"):
        import_verdicts(db, write_jsonl(f"{judge}.jsonl", _rows(judge, int(judge[1]), calls[judge])), "s")
    derived.forget()
    derived.refresh(Database(db), "s", DERIVED_RESULTS)
    assert scopes[-1] == (("j3", "likert5"), ("j4", "likert5"))
    assert _stored_pairs(db).rows() == _want(calls) == audit.drift_pairs(db, "s").rows()
    got = dict(((a, b), n) for a, b, n in _stored_pairs(db).rows())
    # by hand: j4's six likert5 calls ((1 + p + c) % 3 != 0) and j2's ((2 + p + c) % 3 != 0): as many, and
    # the three with (p + c) % 3 == 0 shared; j3 shares all nine with j0 and j1, six with j2 and with j4
    assert (got[("j4", "j2")], got[("j3", "j0")], got[("j3", "j1")], got[("j3", "j2")], got[("j4", "j3")]) == \
        (3, 9, 9, 6, 6)


def test_pairs_over_two_format_rows_of_one_name_count_each_call_once(db, write_jsonl):
    """A judge whose likert5 calls lie in two format rows of that name (a copy of the row, as a changed
    template makes), some calls in both: each call counts once, as drift_pairs (one mask per call) counts it."""
    _pool(db, write_jsonl)
    calls = {f"j{k}": _calls(k) for k in range(3)}
    for judge in calls:
        import_verdicts(db, write_jsonl(f"{judge}.jsonl", _rows(judge, int(judge[1]), calls[judge])), "s")
    con = duckdb.connect(str(db))
    try:
        fid, new = con.execute("SELECT format_id, (SELECT max(format_id) + 1 FROM formats) FROM formats "
                               "WHERE name = 'likert5'").fetchone()
        con.execute("INSERT INTO formats SELECT $new, name, kind, pairing, spec, value_lo, value_hi, template, "
                    "spec_hash FROM formats WHERE format_id = $f", {"new": new, "f": fid})
        # j1's likert5 verdicts copied into the new row (every call in both), then p0's removed from the old
        con.execute("INSERT INTO verdicts SELECT * REPLACE ($new AS format_id) FROM verdicts WHERE format_id = $f "
                    "AND judge_id = (SELECT judge_id FROM judges WHERE name = 'j1')", {"new": new, "f": fid})
        con.execute("DELETE FROM verdicts WHERE format_id = $f AND prompt_idx = 0 "
                    "AND judge_id = (SELECT judge_id FROM judges WHERE name = 'j1')", {"f": fid})
    finally:
        con.close()
    derived.forget()
    derived.refresh(Database(db), "s", DERIVED_RESULTS)
    assert _stored_pairs(db).rows() == _want(calls) == audit.drift_pairs(db, "s").rows()


@pytest.mark.parametrize("workers", [1, 2])
def test_a_refresh_takes_the_fingerprints_once_and_stores_what_it_computed_together(db, tmp_path, monkeypatch,
                                                                                     workers):
    """After a third judge's verdicts: the verdicts' fingerprints (derived_judging_marks.sql, derived_mark.sql:
    each reads every verdict of the pool) are taken once at the start and once in each transaction that
    stores what was computed (the check that they did not move), never for a result read through the layer
    (the checklist's cells, slot bias and consistency, the drift's and the curation's first views, the
    leaderboard's stored parts: read under the refresh's fingerprints); no stored frame is read to learn
    whether it is current. What is stored is what a fresh computation gives."""
    from audit.derived import _refresh
    rows = synthetic_pool(6, seed=4)
    import_pool(db, write_jsonl_path(tmp_path / "pool.jsonl", rows), "s")
    verdicts = synthetic_verdicts(rows, judges=("alpha", "beta", "gamma"), seed=4)
    import_verdicts(db, write_jsonl_path(tmp_path / "ab.jsonl", [v for v in verdicts if v["judge"] != "gamma"]), "s")
    derived.forget()
    derived.refresh(Database(db), "s", DERIVED_RESULTS)
    import_verdicts(db, write_jsonl_path(tmp_path / "g.jsonl", [v for v in verdicts if v["judge"] == "gamma"]), "s")
    monkeypatch.setattr(_refresh, "SAVE_EVERY_S", 1e9)      # no store for the time computed: the pool is small
    ran, original = [], _sql.rows               # every query of the store (_sql.first reads through rows)

    def counting(con, query, /, **params):
        ran.append(query)
        return original(con, query, **params)
    monkeypatch.setattr(_sql, "rows", counting)
    stores, save_many = [], store.save_derived_many     # the transactions that store (the handle's verb)

    def storing(db_, results):
        stores.append([name for name, _, parts in results if parts])
        return save_many(db_, results)
    monkeypatch.setattr(store, "save_derived_many", storing)
    cells_scopes, cells = [], _registry.RESULTS["cells"]

    def counting_cells(db_, *args, **kwargs):        # the cells computed, by the refresh or by judges_board
        cells_scopes.append(db_.judgings)
        return cells.compute(db_, *args, **kwargs)
    for registry in (_registry.RESULTS, DERIVED_RESULTS):
        monkeypatch.setitem(registry, "cells", replace(cells, compute=counting_cells))
    derived.forget()
    done = derived.refresh(Database(db), "s", DERIVED_RESULTS, workers=workers)["results"]
    # gamma's cells computed once: the leaderboard reads them stored (the refresh stores them first)
    assert len(cells_scopes) == 1, cells_scopes
    computed = [r["name"] for r in done if r["status"] != "current"]
    assert all(r["status"] == "computed" for r in done if r["status"] != "current")
    assert len(computed) >= 15
    # two stores: before the leaderboard (it reads the cells, slot bias and consistency stored, computed
    # now; the style counts it and the style fit read stored are current), and at the end; none for a read
    assert len(stores) == 2 and "judges_board" not in stores[0] and {"cells", "bias", "consistency"} <= set(stores[0])
    assert "judges_board" in stores[1] and "checklist" in stores[1]
    # one of each fingerprint at the start and at most one of each per store: 3 where it was 9 and 2
    assert ran.count("derived_judging_marks") <= 1 + len(stores), ran
    assert ran.count("derived_mark") <= 1 + len(stores), ran
    assert ran.count("derived_fingerprints") == len(done)       # one query per result, no frame read
    monkeypatch.undo()
    derived.forget()
    for name in ("cells", "bias", "drift_pairs", "rank"):
        want = audit.drift_pairs(db, "s") if name == "drift_pairs" else \
            DERIVED_RESULTS[name].compute(Database(db), "s", *_first_view(db, name))
        assert_frame_equal(derived.read(Database(db), "s", name, *_first_view(db, name), results=DERIVED_RESULTS),
                           want, check_exact=False, rel_tol=1e-9, abs_tol=1e-12)


def test_a_write_while_a_refresh_computes_leaves_what_it_moved_unstored(db, tmp_path, monkeypatch):
    """Verdicts written while a refresh computes: the results of the whole pool it computed (the checklist)
    are not stored (their fingerprint moved), while a judging's parts (another judge's verdicts leave
    them as they are) are; the next refresh computes what is missing, and equals a fresh computation."""
    rows = synthetic_pool(6, seed=6)
    import_pool(db, write_jsonl_path(tmp_path / "pool.jsonl", rows), "s")
    verdicts = synthetic_verdicts(rows, judges=("alpha", "beta"), seed=6)
    import_verdicts(db, write_jsonl_path(tmp_path / "a.jsonl", [v for v in verdicts if v["judge"] == "alpha"]), "s")
    beta = write_jsonl_path(tmp_path / "b.jsonl", [v for v in verdicts if v["judge"] == "beta"])
    original = DERIVED_RESULTS["bias"]

    def writing(db_, *args, **kwargs):
        import_verdicts(db, beta, "s")                     # lands while the refresh computes slot bias
        return original.compute(db_, *args, **kwargs)
    monkeypatch.setitem(DERIVED_RESULTS, "bias", replace(original, compute=writing))
    derived.forget()
    done = {r["name"]: r["status"] for r in derived.refresh(Database(db), "s", DERIVED_RESULTS)["results"]}
    monkeypatch.undo()
    assert done["cells"] == "computed" and done["checklist"] == "not stored"
    stored = {n for (n,) in query_rows(db, "SELECT DISTINCT name FROM derived_results")}
    assert "cells" in stored and "checklist" not in stored
    derived.forget()
    again = {r["name"]: r for r in derived.refresh(Database(db), "s", DERIVED_RESULTS)["results"]}
    assert again["checklist"]["status"] == "computed"
    # the checklist read the cells under the refresh's fingerprints (alpha's four parts), so beta's four
    # are computed by the next refresh, alpha's read as stored
    assert (again["cells"]["status"], again["cells"]["computed"], again["cells"]["parts"]) == ("computed", 4, 8)
    derived.forget()
    cells = derived.read(Database(db), "s", "cells", results=DERIVED_RESULTS)
    assert_frame_equal(cells, audit.audit_cells(Database(db), "s"), check_exact=False, rel_tol=1e-9, abs_tol=1e-12)


def test_a_write_to_a_judging_while_a_refresh_computes_leaves_its_parts_unstored(db, tmp_path, monkeypatch):
    """Beta's verdicts come, then more of its likert5 verdicts land while the refresh computes slot bias
    (after it computed the cells): the parts of beta's likert5 judging that the refresh computed are not
    stored (the one check in the store's transaction finds its fingerprint moved), beta's other judgings'
    parts are, and the results read through the layer meanwhile (the checklist's cells) took no
    fingerprint again. The next refresh computes beta's likert5 parts alone, and equals a fresh computation."""
    rows = synthetic_pool(6, seed=8)
    import_pool(db, write_jsonl_path(tmp_path / "pool.jsonl", rows), "s")
    verdicts = synthetic_verdicts(rows, seed=8)
    alpha = [v for v in verdicts if v["judge"] == "alpha"]
    beta = [v for v in verdicts if v["judge"] == "beta"]
    late = [v for v in beta if v["format"] == "likert5" and v["prompt_id"] == rows[0]["prompt_id"]]
    assert late
    import_verdicts(db, write_jsonl_path(tmp_path / "a.jsonl", alpha), "s")
    derived.forget()
    derived.refresh(Database(db), "s", DERIVED_RESULTS)
    import_verdicts(db, write_jsonl_path(tmp_path / "b.jsonl", [v for v in beta if v not in late]), "s")
    late_file, original, ran = write_jsonl_path(tmp_path / "late.jsonl", late), DERIVED_RESULTS["bias"], []

    def writing(db_, *args, **kwargs):
        import_verdicts(db, late_file, "s")                 # lands while the refresh computes slot bias
        ran.clear()                                         # the queries of the refresh from here on
        return original.compute(db_, *args, **kwargs)
    monkeypatch.setitem(DERIVED_RESULTS, "bias", replace(original, compute=writing))
    rows_of = _sql.rows

    def counting(con, query, /, **params):
        ran.append(query)
        return rows_of(con, query, **params)
    monkeypatch.setattr(_sql, "rows", counting)
    derived.forget()
    done = {r["name"]: r["status"] for r in derived.refresh(Database(db), "s", DERIVED_RESULTS)["results"]}
    monkeypatch.undo()
    assert done["cells"] == "not stored" and done["checklist"] == "not stored"
    # after the write: one fingerprint of the judgings per store (two: before the leaderboard, at the end)
    assert ran.count("derived_judging_marks") == 2, ran
    stored = {part for (part,) in query_rows(db, "SELECT part FROM derived_results WHERE name = 'cells'")}
    formats = ("binary", "likert5", "numeric100", "tournament")
    assert stored == {f'["{j}", "{f}"]' for j in ("alpha", "beta") for f in formats} - {'["beta", "likert5"]'}
    derived.forget()
    again = {r["name"]: r for r in derived.refresh(Database(db), "s", DERIVED_RESULTS)["results"]}
    assert (again["cells"]["status"], again["cells"]["computed"], again["cells"]["parts"]) == ("computed", 1, 8)
    assert again["checklist"]["status"] == "computed"
    derived.forget()
    for name in ("cells", "bias"):
        assert_frame_equal(derived.read(Database(db), "s", name, results=DERIVED_RESULTS),
                           DERIVED_RESULTS[name].compute(Database(db), "s"), check_exact=False, rel_tol=1e-9,
                           abs_tol=1e-12)


def write_jsonl_path(path, rows):
    from tests.fixtures import write_jsonl
    return write_jsonl(path, rows)


def _first_view(db, name):
    from audit.derived import Reader
    reader = Reader(Database(db), "s", DERIVED_RESULTS)
    return DERIVED_RESULTS[name].first_view(reader, "s")


@pytest.mark.parametrize("workers", [1, 2])
def test_a_long_refresh_stores_what_it_computed_as_it_goes(db, tmp_path, monkeypatch, workers):
    """Once SAVE_EVERY_S seconds of computing wait, the refresh stores them: a page opened while a later
    result is still computing (here: while slot bias computes, with the threshold at 0) finds the cells
    stored; at the default threshold the same small pool's cells wait for the end. With two workers the
    cells and slot bias compute at once: slot bias looks until the cells are stored (they are, as soon
    as computed, while it computes), or finds them not stored at the default threshold."""
    from audit.derived import _refresh
    from ingest.store.connection import IN_PROCESS
    rows = synthetic_pool(6, seed=5)
    import_pool(db, write_jsonl_path(tmp_path / "pool.jsonl", rows), "s")
    import_verdicts(db, write_jsonl_path(tmp_path / "v.jsonl", synthetic_verdicts(rows, seed=5)), "s")
    original, seen = DERIVED_RESULTS["bias"], []

    def looking(db_, *args, **kwargs):          # what another process finds stored meanwhile
        until = time.monotonic() + (20.0 if workers > 1 and _refresh.SAVE_EVERY_S == 0 else 0.0)
        while True:
            with IN_PROCESS:                     # not beside the refresh's writer (another thread's)
                seen.append({n for (n,) in query_rows(db, "SELECT DISTINCT name FROM derived_results")})
            if "cells" in seen[-1] or time.monotonic() >= until:
                break
            time.sleep(0.05)
        return original.compute(db_, *args, **kwargs)
    monkeypatch.setitem(DERIVED_RESULTS, "bias", replace(original, compute=looking))
    for every_s, cells_stored in ((_refresh.SAVE_EVERY_S, False), (0.0, True)):
        monkeypatch.setattr(_refresh, "SAVE_EVERY_S", every_s)
        with duckdb.connect(str(db)) as con:
            con.execute("DELETE FROM derived_results")
        derived.forget()
        derived.refresh(Database(db), "s", DERIVED_RESULTS, workers=workers)
        assert ("cells" in seen[-1]) is cells_stored, (every_s, seen[-1])


def test_a_pool_replaced_by_one_of_as_many_candidates_is_read_anew_in_the_same_process(db, tmp_path):
    """The pool's results are kept in this process under their fingerprint: a pool replaced by another
    of the same size (three prompts of one candidate each, other texts) must not be served from the
    old one's copy. The first candidates' response lengths are those written: 1 then 3 characters."""
    def pool(text):
        rows = [{"prompt_id": f"p{p}", "prompt": "q", "candidate_id": "c0", "response": text} for p in range(3)]
        return write_jsonl_path(tmp_path / f"pool-{len(text)}.jsonl", rows)
    import_pool(db, pool("r"), "s")
    head = derived.read(Database(db), "s", "pool_head", results=DERIVED_RESULTS)
    assert head["response_chars"].to_list() == [1, 1, 1]
    import_pool(db, pool("rrr"), "s", replace=True)
    head = derived.read(Database(db), "s", "pool_head", results=DERIVED_RESULTS)    # no forget(): one process
    assert head["response_chars"].to_list() == [3, 3, 3]
