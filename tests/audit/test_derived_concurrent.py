"""The refresh's results computed at once (audit.derived.refresh, `workers` of them): what it stores and
the document it returns are the sequential refresh's (workers=1), on one pool refreshed twice from the
same database file: three judges in four formats, first two judges with nothing stored, then a third
judge added; the computing slots never hold more results at once than `workers`; a result waits for
those it reads; a failure is raised once every started result has ended, what was computed stored."""

from __future__ import annotations

import io
import json
import shutil
import threading
import time
from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from audit import derived
from audit.derived import _refresh
from ingest import Database
from ingest.scoring import import_verdicts
from ingest.store import import_pool
from tests.conftest import query_rows
from tests.fixtures import synthetic_pool, synthetic_verdicts, write_jsonl
from train.derived_results import DERIVED_RESULTS


def _stored(db: Path) -> dict:
    """{(name, params_json, part): (fingerprint, n_verdicts, frame)}: every stored part."""
    rows = query_rows(db, "SELECT name, params_json, part, fingerprint, n_verdicts, payload FROM derived_results")
    return {(n, p, part): (f, nv, pl.read_parquet(io.BytesIO(payload))) for n, p, part, f, nv, payload in rows}


def _document(done: dict) -> dict:
    """The refresh's document less the seconds (which differ from run to run)."""
    return {**done, "results": [{k: v for k, v in r.items() if k != "seconds"} for r in done["results"]]}


def _same_stored(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for key in a:
        assert a[key][:2] == b[key][:2], key
        if key[0] == "checklist":      # a document of one row, stamped with when it was made
            x, y = (json.loads(f[key][2]["json"][0]) for f in (a, b))
            assert {**x, "generated_at": None} == {**y, "generated_at": None}
            continue
        assert_frame_equal(a[key][2], b[key][2], check_exact=False, rel_tol=1e-9, abs_tol=1e-12)


def _copy(src: Path, dst: Path) -> Path:
    Path(f"{dst}.wal").unlink(missing_ok=True)
    for suffix in ("", ".wal"):
        if Path(f"{src}{suffix}").exists():
            shutil.copyfile(f"{src}{suffix}", f"{dst}{suffix}")
    return dst


def test_results_computed_at_once_store_what_one_after_another_stores(db, tmp_path):
    rows = synthetic_pool(8, seed=11)
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", rows), "s")
    verdicts = synthetic_verdicts(rows, judges=("alpha", "beta", "gamma"), seed=11)
    import_verdicts(db, write_jsonl(tmp_path / "ab.jsonl", [v for v in verdicts if v["judge"] != "gamma"]), "s")
    gamma = write_jsonl(tmp_path / "g.jsonl", [v for v in verdicts if v["judge"] == "gamma"])
    one, many = _copy(db, tmp_path / "one.duckdb"), _copy(db, tmp_path / "many.duckdb")
    for step in ("nothing stored", "a third judge added"):
        if step != "nothing stored":
            import_verdicts(one, gamma, "s")
            _copy(one, many)
        derived.forget()
        sequential = derived.refresh(Database(one), "s", DERIVED_RESULTS, workers=1)
        derived.forget()
        concurrent = derived.refresh(Database(many), "s", DERIVED_RESULTS, workers=4)
        assert _document(concurrent) == _document(sequential), step
        computed = [r for r in sequential["results"] if r["status"] == "computed"]
        assert len(computed) >= 15 and all(r["status"] in ("computed", "current") for r in sequential["results"])
        _same_stored(_stored(many), _stored(one))
    # after the third judge, its parts alone were computed: 4 of 12 in a result stored per judging
    cells = next(r for r in sequential["results"] if r["name"] == "cells")
    assert (cells["computed"], cells["parts"]) == (4, 12)


def test_the_slots_hold_at_most_workers_results_and_a_result_waits_for_those_it_reads(db, tmp_path, monkeypatch):
    """Every computation sleeps a little and counts those running beside it: never more than 2 with
    workers=2; the leaderboard (reads_stored cells, bias, consistency, style_counts), the checklist
    (uses cells, bias, consistency) and the drift (its first view reads drift_pairs) each start after
    what they read has ended."""
    rows = synthetic_pool(6, seed=12)
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", rows), "s")
    import_verdicts(db, write_jsonl(tmp_path / "v.jsonl", synthetic_verdicts(rows, seed=12)), "s")
    lock, running, most, spans = threading.Lock(), [0], [0], {}
    for name, result in list(DERIVED_RESULTS.items()):
        if result.compute is None:
            continue

        def timed(db_, *args, _compute=result.compute, _name=name, **kwargs):
            with lock:
                running[0] += 1
                most[0] = max(most[0], running[0])
            start = time.monotonic()
            time.sleep(0.05)
            try:
                return _compute(db_, *args, **kwargs)
            finally:
                with lock:
                    running[0] -= 1
                    spans.setdefault(_name, []).append((start, time.monotonic()))
        monkeypatch.setitem(DERIVED_RESULTS, name, replace(result, compute=timed))
    derived.forget()
    derived.refresh(Database(db), "s", DERIVED_RESULTS, workers=2)
    assert most[0] == 2
    for name, reads in (("judges_board", ("cells", "bias", "consistency", "style_counts")),
                        ("checklist", ("cells", "bias", "consistency")), ("drift", ("drift_pairs",))):
        assert min(s for s, _ in spans[name]) >= max(e for r in reads for _, e in spans[r]), name


def test_a_failing_result_is_raised_after_the_others_and_what_was_computed_is_stored(db, tmp_path, monkeypatch):
    rows = synthetic_pool(6, seed=13)
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", rows), "s")
    import_verdicts(db, write_jsonl(tmp_path / "v.jsonl", synthetic_verdicts(rows, seed=13)), "s")

    def failing(db_, *args, **kwargs):
        raise RuntimeError("rank failed")
    monkeypatch.setitem(DERIVED_RESULTS, "rank", replace(DERIVED_RESULTS["rank"], compute=failing))
    derived.forget()
    with pytest.raises(RuntimeError, match="rank failed"):
        derived.refresh(Database(db), "s", DERIVED_RESULTS, workers=2)
    stored = {n for (n,) in query_rows(db, "SELECT DISTINCT name FROM derived_results")}
    assert {"cells", "bias"} <= stored and "rank" not in stored


@pytest.mark.parametrize("given, default, cores, want", [(3, None, 2, 3), (None, 1, 2, 1), (None, None, 2, 2),
                                                         (0, None, 2, 1)])
def test_the_workers_are_those_given_else_the_setting_else_one_per_core(monkeypatch, given, default, cores, want):
    monkeypatch.setattr(_refresh, "WORKERS", default)
    monkeypatch.setattr(_refresh.os, "sched_getaffinity", lambda pid: set(range(cores)), raising=False)
    assert _refresh.refresh_workers(given) == want
