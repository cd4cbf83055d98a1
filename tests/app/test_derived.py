"""Derived results (issue 29 part 3): the audit's per-cell results stored in the database under a
fingerprint of what they come from. After every kind of change (a score run, an import, an attach, a
detach, a jury, a changed attached file, a deleted pool) the stored result equals a fresh computation,
made once; a second session, or a restarted server, runs no audit function for them."""

from __future__ import annotations

import threading
import time

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from app import derived
from app.derived import DERIVED, FIRST_VIEW, cached_result, estimate_s, progress_text, with_progress
from audit import AuditError
from ingest.scoring import ScoreRequest, attach_verdicts, import_verdicts, score
from ingest.store import detach_verdicts, import_pool, save_jury
from tests.conftest import query_rows
from tests.fixtures import synthetic_pool, synthetic_verdicts, write_jsonl

NAMES = tuple(DERIVED)
ORIGINAL = {n: fn for n, (_, fn) in DERIVED.items()}   # the audit's functions, uncounted


@pytest.fixture
def counted(monkeypatch):
    """The audit functions behind DERIVED, each counting its calls: {name: n}."""
    calls = dict.fromkeys(NAMES, 0)
    for name, (what, fn) in list(DERIVED.items()):
        def counting(*args, _name=name, _fn=fn):
            calls[_name] += 1
            return _fn(*args)
        monkeypatch.setitem(DERIVED, name, (what, counting))
    derived.forget()
    yield calls
    derived.forget()


def _no_bar():
    return (lambda fraction, sentence: None), (lambda: None)


def _args(db, name, pool="s") -> tuple:
    """The arguments a page's first view passes (what `judgeaudit derive` stores)."""
    return FIRST_VIEW[name](str(db), pool) if name in FIRST_VIEW else ()


def _comparable(name, frame):
    """The frame as compared with a fresh computation: the checklist without its generated_at (the
    time it was computed, the only thing that differs between two computations of one state)."""
    if name != "checklist":
        return frame
    import json
    doc = json.loads(frame["json"][0])
    doc.pop("generated_at")
    return pl.DataFrame({"json": [json.dumps(doc, sort_keys=True)]})


def _shown(db, pool="s") -> list[str]:
    """The results the pages' first views read on this pool: all but the Drift page's on a pool of one
    judge (FIRST_VIEW gives None: the page compares nothing)."""
    return [n for n in NAMES if _args(db, n, pool) is not None]


def _session(db, pool="s"):
    """What a new server process reads: no copy in memory, the stored results only."""
    derived.forget()
    return {n: cached_result(n, str(db), db.stat().st_mtime, pool, *_args(db, n, pool), bar=_no_bar)
            for n in _shown(db, pool)}


def _fingerprints(db, names=NAMES, pool="s"):
    """The stored fingerprints of the results `names` computed from verdicts, with the arguments of the
    pages' first views now (a row of other arguments, e.g. Drift's judges before another judge came,
    keeps its own), less the labels' part that the results computed from labels add (LABELLED)."""
    import re

    from ingest.store import params_json
    keys = {(n, params_json(_args(db, n, pool))) for n in names if n not in derived.POOL_ONLY}
    return {re.sub(r"\|labels [^|]*", "", fp) for name, params, fp in
            query_rows(db, "SELECT name, params_json, fingerprint FROM derived_results") if (name, params) in keys}


def _same_as_fresh(db, calls, before: set, pool="s", pool_too: bool = False):
    """Two sessions after a change: the first computes each result once (those of the pool's
    candidates alone, POOL_ONLY, only when `pool_too`: a new or replaced pool), the second computes
    none; both equal a fresh computation (taken with the original functions, not counted), under a
    new fingerprint."""
    start = dict(calls)
    shown = _shown(db, pool)
    expected = {n: start[n] + int(n in shown and (pool_too or n not in derived.POOL_ONLY)) for n in NAMES}
    first = _session(db, pool)
    assert calls == expected, (calls, start)
    second = _session(db, pool)
    assert calls == expected                                  # the second session: no audit call
    fresh = {n: _comparable(n, ORIGINAL[n](str(db), pool, *_args(db, n, pool))) for n in shown}
    for n in shown:
        assert fresh[n].height == first[n].height, n
        assert_frame_equal(_comparable(n, first[n]), fresh[n], check_exact=True)
        assert_frame_equal(_comparable(n, second[n]), fresh[n], check_exact=True)
    now = _fingerprints(db, shown)
    assert len(now) == 1 and now.isdisjoint(before), (now, before)
    stored = {n for (n,) in query_rows(db, "SELECT name FROM derived_results")}
    assert set(shown) <= stored <= set(NAMES)
    return now, first


def test_derived_results_follow_every_change(db, tmp_path, counted):
    rows = synthetic_pool(10, seed=5)
    pool_file = write_jsonl(tmp_path / "pool.jsonl", rows)
    import_pool(db, pool_file, "s")
    verdicts = pl.DataFrame(synthetic_verdicts(rows, judges=("alpha", "beta", "gamma"), seed=5))
    import_verdicts(db, write_jsonl(tmp_path / "alpha.jsonl", verdicts.filter(pl.col("judge") == "alpha")
                                    .to_dicts()), "s")
    marks, first = _same_as_fresh(db, counted, set(), pool_too=True)
    assert first["cells"]["judge"].unique().to_list() == ["alpha"] and first["bias"].height == 1

    # a score run (the fake judge, pointwise and comparative)
    score(ScoreRequest(pool="s", judge="fake:sim?noise=0.1&slot_bias=1", formats=["likert5", "tournament"],
                       swap_sample="all", progress=False, flush_interval_s=0.05))
    marks, first = _same_as_fresh(db, counted, marks)
    assert sorted(first["cells"]["judge"].unique()) == ["alpha", "sim"]
    assert first["rank"].height > 0 and first["style_rank"].height > 0

    # human labels imported: only the results computed from labels too are computed again
    from ingest.store import import_labels
    by_prompt = {}
    for r in rows:
        by_prompt.setdefault(r["prompt_id"], []).append(r["candidate_id"])
    labels = [{"prompt_id": p, "a_id": c[0], "b_id": c[1], "label": "AB"[i % 2]} for i, (p, c) in enumerate(by_prompt.items())]
    import_labels(db, write_jsonl(tmp_path / "labels.jsonl", labels), "s")
    start = dict(counted)
    first, second = _session(db), _session(db)
    assert {n: counted[n] - start[n] for n in NAMES} == {n: int(n in derived.LABELLED) for n in NAMES}
    for n in NAMES:
        fresh = _comparable(n, ORIGINAL[n](str(db), "s", *_args(db, n)))
        assert_frame_equal(_comparable(n, first[n]), fresh, check_exact=True)
        assert_frame_equal(_comparable(n, second[n]), fresh, check_exact=True)
    assert first["estimate"].filter(pl.col("n_labelled") > 0).height > 0       # the labels count in it
    assert _fingerprints(db) == marks

    # an import of another judge's verdicts
    beta = [{k: v for k, v in r.items() if v is not None} for r in verdicts.filter(pl.col("judge") == "beta").to_dicts()]
    import_verdicts(db, write_jsonl(tmp_path / "beta.jsonl", beta), "s")
    marks, first = _same_as_fresh(db, counted, marks)
    assert "beta" in first["bias"]["judge"].to_list()

    # an attach: gamma's verdicts as Parquet shards, read where they lie
    shard = tmp_path / "gamma.parquet"
    verdicts.filter(pl.col("judge") == "gamma").write_parquet(shard)
    attach_verdicts(db, [str(shard)], "s")
    marks, first = _same_as_fresh(db, counted, marks)
    assert "gamma" in first["cells"]["judge"].to_list()

    # the attached file changed on disk (the database did not): refused by name, never served from the
    # stored results nor from this process's copy (which _session left holding every result)
    verdicts.filter(pl.col("judge") == "gamma").head(40).write_parquet(shard)
    with pytest.raises(AuditError, match="gamma.parquet"):
        cached_result("cells", str(db), db.stat().st_mtime, "s", bar=_no_bar)

    # a detach
    detach_verdicts(db, "s")
    marks, first = _same_as_fresh(db, counted, marks)
    assert "gamma" not in first["cells"]["judge"].to_list()

    # a jury of two judges (its verdicts are derived rows of the store)
    save_jury(db, "s", "panel", ["alpha", "beta"], "mean")
    marks, first = _same_as_fresh(db, counted, marks)
    assert "panel" in first["cells"]["judge"].to_list()

    # the pool deleted (import-pool --replace): its derived rows go with it
    import_pool(db, pool_file, "s", replace=True)
    assert query_rows(db, "SELECT count(*) FROM derived_results") == [(0,)]
    marks, first = _same_as_fresh(db, counted, marks, pool_too=True)
    assert first["cells"].height == 0


def test_one_computation_for_sessions_that_ask_at_once(db, tmp_path, monkeypatch):
    rows = synthetic_pool(8, seed=2)
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", rows), "s")
    import_verdicts(db, write_jsonl(tmp_path / "v.jsonl", synthetic_verdicts(rows, seed=2)), "s")
    what, fn = DERIVED["cells"]
    calls = []

    def slow(*args):
        calls.append(args)
        time.sleep(0.5)
        return fn(*args)
    monkeypatch.setitem(DERIVED, "cells", (what, slow))
    derived.forget()
    out = [None] * 4
    mtime = db.stat().st_mtime

    def session(i):
        out[i] = cached_result("cells", str(db), mtime, "s", bar=_no_bar)
    threads = [threading.Thread(target=session, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1
    for frame in out:
        assert_frame_equal(frame, fn(str(db), "s"))

    # a session that goes away while it waits (Streamlit stops its script at a click elsewhere): the
    # computation runs on and is stored, and the next session waits on it rather than starting another
    import_verdicts(db, write_jsonl(tmp_path / "w.jsonl", synthetic_verdicts(rows, judges=("gamma",), seed=3)), "s")
    derived.forget()

    class Stopped(Exception):
        pass

    def stop(fraction, sentence):
        raise Stopped(sentence)
    with pytest.raises(Stopped, match=r"Computing the audit's cells .* for pool 's' .* s left"):
        cached_result("cells", str(db), db.stat().st_mtime, "s", bar=lambda: (stop, lambda: None))
    assert len(calls) == 2
    again = cached_result("cells", str(db), db.stat().st_mtime, "s", bar=_no_bar)
    assert len(calls) == 2 and "gamma" in again["judge"].to_list()
    assert_frame_equal(again, fn(str(db), "s"))
    assert query_rows(db, "SELECT count(*) FROM derived_results WHERE name = 'cells'") == [(1,)]
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


def test_a_second_session_runs_no_audit_function_for_the_pages(db, tmp_path, monkeypatch, counted):
    """The Formats and Slot bias pages, in one session, then in a second one after the server's caches
    are cleared (what a restart leaves): the second draws the same tables from the stored results."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from tests.conftest import REPO
    rows = synthetic_pool(10, seed=4)
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", rows), "s")
    import_verdicts(db, write_jsonl(tmp_path / "v.jsonl", synthetic_verdicts(rows, seed=4)), "s")

    def session() -> dict:
        at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=180).run()
        at.sidebar.selectbox[0].select("s").run()
        tables = {}
        for page in ("formats", "slot_bias"):
            at.switch_page(f"views/{page}/page.py").run()
            assert not at.exception, (page, [e.value for e in at.exception])
            tables[page] = [d.value for d in at.dataframe]
        return tables

    first = session()
    computed = dict(counted)
    # the two pages read cells, consistency, score levels (Formats), bias, positions, bias items (Slot bias)
    assert all(computed[n] == 1 for n in ("cells", "bias", "bias_items", "positions")), computed
    assert len(first["slot_bias"]) >= 2 and len(first["formats"]) >= 1
    st.cache_data.clear()
    derived.forget()
    second = session()
    assert counted == computed                    # not one audit function ran for a derived result
    for page in first:
        assert len(second[page]) == len(first[page])
        for a, b in zip(first[page], second[page]):
            assert a.equals(b), page


def test_a_result_is_stored_only_under_the_fingerprint_it_was_computed_from(db, tmp_path, monkeypatch):
    import subprocess
    import sys

    from ingest.store import derived_mark, derived_result, save_derived
    rows = synthetic_pool(6, seed=1)
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", rows), "s")
    verdicts = synthetic_verdicts(rows, seed=1)
    import_verdicts(db, write_jsonl(tmp_path / "a.jsonl", [v for v in verdicts if v["judge"] == "alpha"]), "s")
    mark = derived_mark(db, "s")
    frame = ORIGINAL["cells"](str(db), "s")
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


def test_derive_stores_what_the_pages_read_and_only_what_is_stale(db, tmp_path, capsys, counted):
    import json

    from app.cli import main
    rows = synthetic_pool(6, seed=7)
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", rows), "s")
    import_verdicts(db, write_jsonl(tmp_path / "v.jsonl", synthetic_verdicts(rows, seed=7)), "s")
    assert main(["derive", "--pool", "s", "--json", "--db", str(db)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in doc["results"]] == list(NAMES) and {r["status"] for r in doc["results"]} == {"computed"}
    assert doc["n_verdicts"] == query_rows(db, "SELECT count(*) FROM verdicts")[0][0]
    assert all(n == 1 for n in counted.values())
    assert main(["derive", "--pool", "s", "--json", "--db", str(db)]) == 0
    assert {r["status"] for r in json.loads(capsys.readouterr().out)["results"]} == {"current"}
    assert all(n == 1 for n in counted.values())                 # nothing computed the second time
    first = _session(db)                                          # a page's first view: read, not computed
    assert all(n == 1 for n in counted.values())
    assert_frame_equal(first["bias"], ORIGINAL["bias"](str(db), "s"))
    assert main(["derive", "--pool", "nope", "--db", str(db)]) == 1
    assert "no pool named 'nope' (known: s)" in capsys.readouterr().err
