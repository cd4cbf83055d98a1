"""Derived results (audit.derived): the audit's results stored in the database under a fingerprint of
what they come from, whole or in parts (one per judging: a judge with a format). After every kind of change (a score run, an
import, an attach, a detach, a jury, a changed attached file, a deleted pool) the stored result equals a
fresh computation, made once; a judge's verdicts that come compute that judge's parts alone; a second
session, or a restarted server, runs no audit function for them."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import replace

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import audit
from audit import AuditError, derived
from audit.derived import Reader, estimate_s, progress_text, with_progress
from ingest import Database
from ingest.scoring import ScoreRequest, attach_verdicts, import_verdicts, score
from ingest.store import detach_verdicts, import_pool, save_jury
from tests.conftest import query_rows
from tests.fixtures import synthetic_pool, synthetic_verdicts, write_jsonl
from train.derived_results import DERIVED_RESULTS

ORIGINAL = dict(DERIVED_RESULTS)                                 # the results, uncounted
NAMES = tuple(n for n, r in ORIGINAL.items() if not r.built_from)   # those computed (variance is built from cells)
PER_JUDGE = frozenset(n for n in NAMES if ORIGINAL[n].in_parts)
LABELLED = frozenset(n for n in NAMES if ORIGINAL[n].basis == "labels")
POOL_ONLY = frozenset(n for n in NAMES if ORIGINAL[n].basis == "pool")


@pytest.fixture
def counted(monkeypatch):
    """The computations behind the registry, each counting its calls: {name: n}; `counted.scopes[name]`
    lists the judgings each call was scoped to (None: every judging)."""
    calls = _Counts(dict.fromkeys(NAMES, 0))
    scopes = calls.scopes = {n: [] for n in NAMES}
    for name in NAMES:
        result = ORIGINAL[name]

        def counting(db, *args, _name=name, _fn=result.compute, **used):
            calls[_name] += 1
            scopes[_name].append(getattr(db, "judgings", None))
            return _fn(db, *args, **used)
        monkeypatch.setitem(DERIVED_RESULTS, name, replace(result, compute=counting))
    derived.forget()
    yield calls
    derived.forget()


class _Counts(dict):
    scopes: dict


def _judgings(db, *judges: str) -> tuple[tuple[str, str], ...]:
    """The judgings (judge, format) of these judges with a cell run in pool 's', sorted: what a part is
    computed for (read from the cell runs, not from the layer)."""
    return tuple(query_rows(db, "SELECT DISTINCT j.name, f.name FROM cell_runs c JOIN judges j USING (judge_id) "
                                "JOIN formats f USING (format_id) JOIN pools p USING (pool_id) WHERE p.name = 's' "
                                "AND list_contains(?, j.name) ORDER BY 1, 2", [list(judges)]))


def _no_bar():
    return (lambda fraction, sentence: None), (lambda: None)


def _args(db, name, pool="s") -> tuple:
    """The arguments a page's first view passes (what `judgeaudit derive` stores)."""
    return ORIGINAL[name].first_view(Reader(Database(db), pool, DERIVED_RESULTS, _no_bar), pool)


def _fresh(db, name, pool="s", *args):
    result = ORIGINAL[name]
    if name == "export_counts":            # stored per judging, summed when read: the audit's own counts
        return audit.export_counts(Database(db), pool)
    if name == "drift_pairs":              # stored per judging, put together when read: the whole pool's count
        return audit.drift_pairs(Database(db), pool)
    if result.built_from:
        return result.build(ORIGINAL[result.built_from].compute(Database(db), pool))
    return result.compute(Database(db), pool, *args)


def _comparable(name, frame):
    """The frame as compared with a fresh computation: the checklist without its generated_at (the
    time it was computed, the only thing that differs between two computations of one state)."""
    if name != "checklist":
        return frame
    doc = json.loads(frame["json"][0])
    doc.pop("generated_at")
    return pl.DataFrame({"json": [json.dumps(doc, sort_keys=True)]})


def _shown(db, pool="s") -> list[str]:
    """The results the pages' first views read on this pool: all but the Drift page's on a pool of one
    judge (its first view is None: the page compares nothing)."""
    return [n for n in ORIGINAL if _args(db, n, pool) is not None]


def _read(db, name, pool="s", *args):
    return derived.read(Database(db), pool, name, *args, results=DERIVED_RESULTS, bar=_no_bar)


def _session(db, pool="s"):
    """What a new server process reads: no copy in memory, the stored results only."""
    derived.forget()
    return {n: _read(db, n, pool, *_args(db, n, pool)) for n in _shown(db, pool)}


def _same_as_fresh(db, calls, pool="s", pool_too: bool = False, current=(), scope=None):
    """Two sessions after a change: the first computes each result once, but those of the pool's
    candidates alone (POOL_ONLY, computed only when `pool_too`: a new or replaced pool) and those
    `current` (a result that reads only judges the change left alone); the second computes none; both
    equal a fresh computation (taken with the original functions, not counted). `scope`: the judgings
    the results in parts were computed for (None: every judging)."""
    start = dict(calls)
    shown = _shown(db, pool)
    expected = {n: start[n] + int(n in shown and n not in current and (pool_too or n not in POOL_ONLY))
                for n in NAMES}
    first = _session(db, pool)
    assert dict(calls) == expected, (dict(calls), start)
    for n in PER_JUDGE & set(shown):
        if calls[n] > start[n]:
            assert calls.scopes[n][-1] == scope, (n, calls.scopes[n])
    second = _session(db, pool)
    assert dict(calls) == expected                                # the second session: no audit call
    for n in shown:
        fresh = _comparable(n, _fresh(db, n, pool, *_args(db, n, pool)))
        assert fresh.height == first[n].height, n
        assert_frame_equal(_comparable(n, first[n]), fresh, check_exact=False, rel_tol=1e-9, abs_tol=1e-12)
        assert_frame_equal(_comparable(n, second[n]), fresh, check_exact=False, rel_tol=1e-9, abs_tol=1e-12)
    stored = {n for (n,) in query_rows(db, "SELECT DISTINCT name FROM derived_results")}
    assert {n for n in shown if not ORIGINAL[n].built_from} <= stored <= set(NAMES)
    return first


def test_derived_results_follow_every_change(db, tmp_path, counted):
    rows = synthetic_pool(10, seed=5)
    pool_file = write_jsonl(tmp_path / "pool.jsonl", rows)
    import_pool(db, pool_file, "s")
    verdicts = pl.DataFrame(synthetic_verdicts(rows, judges=("alpha", "beta", "gamma"), seed=5))
    import_verdicts(db, write_jsonl(tmp_path / "alpha.jsonl", verdicts.filter(pl.col("judge") == "alpha")
                                    .to_dicts()), "s")
    first = _same_as_fresh(db, counted, pool_too=True, scope=_judgings(db, "alpha"))
    assert first["cells"]["judge"].unique().to_list() == ["alpha"] and first["bias"].height == 1
    curations = ("curation", "curation_overlap")        # they curate by the first judge, alpha throughout

    # a score run (the fake judge, pointwise and comparative): its parts alone are computed
    score(ScoreRequest(pool="s", judge="fake:sim?noise=0.1&slot_bias=1", formats=["likert5", "tournament"],
                       swap_sample="all", progress=False, flush_interval_s=0.05))
    assert _judgings(db, "sim") == (("sim", "likert5"), ("sim", "tournament"))
    first = _same_as_fresh(db, counted, current=curations, scope=_judgings(db, "sim"))
    assert sorted(first["cells"]["judge"].unique()) == ["alpha", "sim"]
    assert first["rank"].height > 0 and first["style_rank"].height > 0
    parts = [json.loads(p) for (p,) in query_rows(db, "SELECT part FROM derived_results WHERE name = 'cells'")]
    assert sorted(map(tuple, parts)) == sorted(_judgings(db, "alpha", "sim"))

    # the same judge in a new format: that judging's part alone; its other formats' parts stay as stored
    score(ScoreRequest(pool="s", judge="fake:sim?noise=0.1&slot_bias=1", formats=["binary"],
                       progress=False, flush_interval_s=0.05))
    first = _same_as_fresh(db, counted, current=curations, scope=(("sim", "binary"),))
    assert "binary" in first["cells"].filter(pl.col("judge") == "sim")["format"].to_list()

    # human labels imported: only the results computed from labels too are computed again, every judge's
    from ingest.store import import_labels
    by_prompt = {}
    for r in rows:
        by_prompt.setdefault(r["prompt_id"], []).append(r["candidate_id"])
    labels = [{"prompt_id": p, "a_id": c[0], "b_id": c[1], "label": "AB"[i % 2]} for i, (p, c) in enumerate(by_prompt.items())]
    import_labels(db, write_jsonl(tmp_path / "labels.jsonl", labels), "s")
    start = dict(counted)
    first, second = _session(db), _session(db)
    assert {n: counted[n] - start[n] for n in NAMES} == {n: int(n in LABELLED) for n in NAMES}
    assert {counted.scopes[n][-1] for n in LABELLED} == {_judgings(db, "alpha", "sim")}
    for n in first:
        fresh = _comparable(n, _fresh(db, n, "s", *_args(db, n)))
        assert_frame_equal(_comparable(n, first[n]), fresh, check_exact=False, rel_tol=1e-9, abs_tol=1e-12)
        assert_frame_equal(_comparable(n, second[n]), fresh, check_exact=False, rel_tol=1e-9, abs_tol=1e-12)
    assert first["estimate"].filter(pl.col("n_labelled") > 0).height > 0       # the labels count in it

    # an import of another judge's verdicts: that judge's parts; the drift's first view now compares alpha
    # with beta, computed anew
    beta = [{k: v for k, v in r.items() if v is not None} for r in verdicts.filter(pl.col("judge") == "beta").to_dicts()]
    import_verdicts(db, write_jsonl(tmp_path / "beta.jsonl", beta), "s")
    first = _same_as_fresh(db, counted, current=curations, scope=_judgings(db, "beta"))
    assert "beta" in first["bias"]["judge"].to_list()
    assert _args(db, "drift") == ("alpha", "beta")

    # an attach: gamma's verdicts as Parquet shards, read where they lie; the drift of alpha and beta stays
    shard = tmp_path / "gamma.parquet"
    verdicts.filter(pl.col("judge") == "gamma").write_parquet(shard)
    attach_verdicts(db, [str(shard)], "s")
    untouched = (*curations, "drift", "drift_items")
    first = _same_as_fresh(db, counted, current=untouched, scope=_judgings(db, "gamma"))
    assert "gamma" in first["cells"]["judge"].to_list()

    # the attached file changed on disk (the database did not): refused by name, never served from the
    # stored results nor from this process's copy (which _session left holding every result)
    verdicts.filter(pl.col("judge") == "gamma").head(40).write_parquet(shard)
    with pytest.raises(AuditError, match="gamma.parquet"):
        _read(db, "cells")

    # a detach: gamma's parts go from the whole; the others' stay as stored
    detach_verdicts(db, "s")
    start = dict(counted)
    first = _session(db)
    assert "gamma" not in first["cells"]["judge"].to_list()
    # the one read from the whole pool's verdicts: the checklist; which judges share calls is stored per
    # judging, each pair in the part of its judge of the higher id (gamma's, the last judge, gone), so the
    # others' parts put together are the whole again, nothing computed
    assert {n for n in NAMES if counted[n] > start[n]} == {"checklist"}
    assert_frame_equal(first["cells"], _fresh(db, "cells"), check_exact=False, rel_tol=1e-9, abs_tol=1e-12)
    assert_frame_equal(first["drift_pairs"], _fresh(db, "drift_pairs"))
    assert "gamma" not in first["drift_pairs"]["judge"].to_list()

    # a jury of two judges (its verdicts are rows of the store, the members' votes): every judge's parts,
    # since a result marks the jury's rows among all of them
    save_jury(db, "s", "panel", ["alpha", "beta"], "mean")
    first = _same_as_fresh(db, counted, scope=_judgings(db, "alpha", "beta", "panel", "sim"))
    assert "panel" in first["cells"]["judge"].to_list()

    # the pool deleted (import-pool --replace): its derived rows go with it
    import_pool(db, pool_file, "s", replace=True)
    assert query_rows(db, "SELECT count(*) FROM derived_results") == [(0,)]
    first = _same_as_fresh(db, counted, pool_too=True)
    assert first["cells"].height == 0


def test_one_computation_for_sessions_that_ask_at_once(db, tmp_path, monkeypatch):
    rows = synthetic_pool(8, seed=2)
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", rows), "s")
    import_verdicts(db, write_jsonl(tmp_path / "v.jsonl", synthetic_verdicts(rows, seed=2)), "s")
    fn = ORIGINAL["cells"].compute
    calls = []

    def slow(*args):
        calls.append(args)
        time.sleep(0.5)
        return fn(*args)
    monkeypatch.setitem(DERIVED_RESULTS, "cells", replace(ORIGINAL["cells"], compute=slow))
    derived.forget()
    out = [None] * 4

    def session(i):
        out[i] = _read(db, "cells")
    threads = [threading.Thread(target=session, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1
    for frame in out:
        assert_frame_equal(frame, fn(Database(db), "s"))

    # a session that goes away while it waits (Streamlit stops its script at a click elsewhere): the
    # computation runs on and is stored, and the next session waits on it rather than starting another
    import_verdicts(db, write_jsonl(tmp_path / "w.jsonl", synthetic_verdicts(rows, judges=("gamma",), seed=3)), "s")
    derived.forget()

    class Stopped(Exception):
        pass

    def stop(fraction, sentence):
        raise Stopped(sentence)
    with pytest.raises(Stopped, match=r"Computing the audit's cells .* for pool 's' .* s left"):
        derived.read(Database(db), "s", "cells", results=DERIVED_RESULTS, bar=lambda: (stop, lambda: None))
    assert len(calls) == 2 and calls[-1][0].judgings == _judgings(db, "gamma")     # gamma's parts alone
    again = _read(db, "cells")
    assert len(calls) == 2 and "gamma" in again["judge"].to_list()
    assert_frame_equal(again, fn(Database(db), "s"))
    # alpha, beta and gamma, each in binary, likert5, numeric100 and tournament
    assert query_rows(db, "SELECT count(*) FROM derived_results WHERE name = 'cells'") == [(12,)]
    derived.forget()


def test_progress_says_what_and_the_time_left():
    # the last computation took 10 s on 1,000 verdicts: on 2,000, 20 s; 5 s in, 15 s left, a quarter done
    assert estimate_s((10.0, 1000), 2000) == 20.0 and estimate_s(None, 5) is None
    fraction, text = progress_text("slot bias", "big", 2000, 5.0, 20.0)
    assert fraction == 0.25 and text == "Computing slot bias for pool 'big' (2,000 verdicts): 5 s so far, about 15 s left"
    fraction, text = progress_text("slot bias", "big", 2000, 30.0, None)      # no earlier computation
    assert fraction == 0.5 and "no estimate yet" in text                      # 30 / (30 + 30)
    assert progress_text("x", "p", 1, 25.0, 20.0)[0] == 0.99

    shown = []
    frame = with_progress(lambda: (time.sleep(0.7), pl.DataFrame({"a": [1]}))[1], lambda f, t: shown.append((f, t)),
                          lambda s: progress_text("cells", "p", 10, s, 1.4), every_s=0.1)
    assert frame["a"].to_list() == [1]
    assert len(shown) >= 3 and [f for f, _ in shown] == sorted(f for f, _ in shown)
    assert all("Computing cells for pool 'p'" in t and "s left" in t for _, t in shown)
    with pytest.raises(ZeroDivisionError):
        with_progress(lambda: 1 / 0, lambda f, t: None, lambda s: (0.0, ""))


def test_a_result_is_stored_only_under_the_fingerprint_it_was_computed_from(db, tmp_path, monkeypatch):
    import subprocess
    import sys

    from ingest.store import derived_mark, derived_result, save_derived
    rows = synthetic_pool(6, seed=1)
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", rows), "s")
    verdicts = synthetic_verdicts(rows, seed=1)
    import_verdicts(db, write_jsonl(tmp_path / "a.jsonl", [v for v in verdicts if v["judge"] == "alpha"
                                                           and v["format"] != "numeric100"]), "s")
    mark = derived_mark(db, "s")
    frame = _fresh(db, "cells")
    # a write lands while it is computed: the result is not stored under the old fingerprint
    import_verdicts(db, write_jsonl(tmp_path / "b.jsonl", [v for v in verdicts if v["judge"] == "beta"]), "s")
    assert save_derived(db, mark, "cells", (), frame, 1.0) is False
    assert query_rows(db, "SELECT count(*) FROM derived_results") == [(0,)]
    mark = derived_mark(db, "s")
    assert save_derived(db, mark, "cells", (), frame, 2.5) is True
    stored, timing = derived_result(db, mark, "cells", ())
    assert_frame_equal(stored, frame)
    assert timing == (2.5, mark.n_verdicts) and mark.n_verdicts == query_rows(db, "SELECT count(*) FROM verdicts")[0][0]
    assert derived_result(db, mark, "cells", (7,))[0] is None       # other arguments: another result
    assert derived_mark(db, "nope") is None
    # another process holds the database past the lock timeout: the result is not stored, no error
    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); "
                               "print('held', flush=True); time.sleep(30)", str(db)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        monkeypatch.setenv("JUDGEAUDIT_LOCK_TIMEOUT", "1")
        assert save_derived(db, mark, "bias", (), frame, 1.0) is False
    finally:
        holder.kill()
        holder.wait()
    assert query_rows(db, "SELECT name FROM derived_results") == [("cells",)]

    # a judging's part (a judge in one format): stored under its fingerprint, which another judge's
    # verdicts, or the same judge's in another format, leave alone
    from ingest.store import derived_judging_marks
    marks = derived_judging_marks(db, "s")
    formats = ["binary", "likert5", "numeric100", "tournament"]
    assert list(marks) == [json.dumps([j, f]) for j in ("alpha", "beta") for f in formats
                           if (j, f) != ("alpha", "numeric100")]
    likert = marks[json.dumps(["alpha", "likert5"])]
    assert (likert.part, likert.judging) == ('["alpha", "likert5"]', ("alpha", "likert5"))
    alpha = frame.filter((pl.col("judge") == "alpha") & (pl.col("format") == "likert5"))
    assert save_derived(db, likert, "cells", (), alpha, 1.0) is True
    import_verdicts(db, write_jsonl(tmp_path / "c.jsonl", [dict(v, judge="gamma") for v in verdicts
                                                           if v["judge"] == "alpha"]), "s")
    after = derived_judging_marks(db, "s")
    assert all(after[p] == m for p, m in marks.items()) and json.dumps(["gamma", "binary"]) in after
    assert_frame_equal(derived_result(db, after[likert.part], "cells", ())[0], alpha)
    assert derived_result(db, after[json.dumps(["beta", "likert5"])], "cells", ())[0] is None   # never stored
    # alpha in a format new to it: a mark of its own; none of the others moves
    import_verdicts(db, write_jsonl(tmp_path / "d.jsonl", [v for v in verdicts if v["judge"] == "alpha"
                                                           and v["format"] == "numeric100"]), "s")
    now = derived_judging_marks(db, "s")
    assert set(now) - set(after) == {json.dumps(["alpha", "numeric100"])}
    assert all(now[p] == m for p, m in after.items())
    # two judges' fingerprint (a drift's): moves when either judge's verdicts do
    pair = derived_mark(db, "s", judges=("alpha", "gamma"))
    assert derived_mark(db, "s", judges=("alpha", "gamma")) == pair
    assert pair.fingerprint != derived_mark(db, "s", judges=("alpha", "beta")).fingerprint


def test_derive_stores_what_the_pages_read_and_only_what_is_stale(db, tmp_path, capsys, counted):
    import json

    from app.cli import main
    rows = synthetic_pool(6, seed=7)
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", rows), "s")
    import_verdicts(db, write_jsonl(tmp_path / "v.jsonl", synthetic_verdicts(rows, seed=7)), "s")
    assert main(["derive", "--pool", "s", "--json", "--db", str(db)]) == 0
    doc = json.loads(capsys.readouterr().out)
    shown = [n for n in NAMES if _args(db, n) is not None]     # all but a student's overlap, shown on a choice
    assert [r["name"] for r in doc["results"]] == shown and "student_overlap" not in shown
    assert {r["status"] for r in doc["results"]} == {"computed"}
    # alpha and beta, each in binary, likert5, numeric100 and tournament
    assert {r["name"]: (r["parts"], r["computed"]) for r in doc["results"]}["cells"] == (8, 8)
    assert doc["n_verdicts"] == query_rows(db, "SELECT count(*) FROM verdicts")[0][0]
    assert dict(counted) == {n: int(n in shown) for n in NAMES}
    assert main(["derive", "--pool", "s", "--json", "--db", str(db)]) == 0
    assert {r["status"] for r in json.loads(capsys.readouterr().out)["results"]} == {"current"}
    computed = dict(counted)                                      # nothing computed the second time
    first = _session(db)                                          # a page's first view: read, not computed
    assert dict(counted) == computed
    assert_frame_equal(first["bias"], _fresh(db, "bias"))
    assert main(["derive", "--pool", "nope", "--db", str(db)]) == 1
    assert "no pool named 'nope' (known: s)" in capsys.readouterr().err


def test_the_checklist_is_made_from_the_stored_parts(db, tmp_path, monkeypatch):
    """After another judge's verdicts, the checklist (a document of the whole pool) is computed again
    from the stored cells, slot bias and consistency (the new judge's parts computed, the others read),
    never by running the audit over every judge's verdicts; and it is the checklist computed afresh."""
    import audit._report as report
    rows = synthetic_pool(6, seed=9)
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", rows), "s")
    verdicts = synthetic_verdicts(rows, judges=("alpha", "beta", "gamma"), seed=9)
    import_verdicts(db, write_jsonl(tmp_path / "ab.jsonl", [v for v in verdicts if v["judge"] != "gamma"]), "s")
    derived.refresh(Database(db), "s", DERIVED_RESULTS)
    import_verdicts(db, write_jsonl(tmp_path / "g.jsonl", [v for v in verdicts if v["judge"] == "gamma"]), "s")
    fresh = _comparable("checklist", _fresh(db, "checklist"))

    def whole_pool(*args, **kwargs):
        raise AssertionError("the checklist ran an audit function over the whole pool")
    for name in ("audit_cells", "bias", "consistency"):
        monkeypatch.setattr(report, name, whole_pool)
    derived.forget()
    done = {r["name"]: r for r in derived.refresh(Database(db), "s", DERIVED_RESULTS)["results"]}
    # gamma's four judgings (binary, likert5, numeric100, tournament) of 12
    assert done["checklist"]["status"] == "computed" and (done["cells"]["computed"], done["cells"]["parts"]) == (4, 12)
    assert_frame_equal(_comparable("checklist", _read(db, "checklist")), fresh)


def test_a_refresh_reads_the_pools_candidates_once(db, tmp_path, monkeypatch):
    """The Pool page's summary and first candidates and the systems are made from one stored digest of
    the pool's candidates, read once per refresh (not once per result), and equal what the audit's
    functions give: audit.pool_summary, audit.pool_head, and the pool's distinct candidate_ids sorted."""
    import audit._pools as pools
    rows = synthetic_pool(7, seed=3)
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", rows), "s")
    import_verdicts(db, write_jsonl(tmp_path / "v.jsonl", synthetic_verdicts(rows, seed=3)), "s")
    want = {"pool_summary": audit.pool_summary(db, "s"), "pool_head": audit.pool_head(db, "s"),
            "systems": pl.DataFrame({"candidate_id": sorted({r["candidate_id"] for r in rows})})}
    reads = []
    original = pools.pool_candidates

    def counting(*args, **kwargs):
        reads.append(args[1:])
        return original(*args, **kwargs)
    monkeypatch.setattr(pools, "pool_candidates", counting)
    derived.forget()
    done = {r["name"]: r["status"] for r in derived.refresh(Database(db), "s", DERIVED_RESULTS)["results"]}
    assert reads == [("s",)] and done["pool_digest"] == "computed"
    assert not {"pool_summary", "pool_head", "systems"} & set(done)          # made from the digest when read
    derived.forget()
    for name, frame in want.items():
        assert_frame_equal(_read(db, name), frame)
    assert reads == [("s",)]                                                # read from the stored digest
