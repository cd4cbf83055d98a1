"""The refresh reads the queries several results read (audit.derived._refresh.SHARED_READS) once per scope
and parameters (Database.sharing), and stores what a refresh that reads each of them every time stores:
one pool with pair labels and swapped comparative calls, two judges refreshed, then a third added."""

from __future__ import annotations

from collections import Counter

import pytest

from audit import derived
from audit.derived import _refresh
from ingest import Database
from ingest.scoring import import_verdicts
from ingest.store import database as store_database
from ingest.store import import_labels, import_pool
from tests.audit.test_derived_concurrent import _copy, _document, _same_stored, _stored
from tests.fixtures import synthetic_pool, synthetic_verdicts, write_jsonl
from train.derived_results import DERIVED_RESULTS

# read by several results of one scope: cell_calls (the cells, their selected positions, repeat consistency,
# the scored cells), label_cells (alt_test; decisions, through the alternative annotator test and the labels'
# worth) and bias_items (slot bias per cell and per item)
SHARED = ("cell_calls", "label_cells", "bias_items")


@pytest.fixture
def runs(monkeypatch):
    """Every query a reading runs while the test runs: [(name, the reading's scope, its parameters)]."""
    ran = []
    run = store_database.Reading._run

    def counting(self, name, params):
        ran.append((name, self._scope, repr(sorted(params.items()))))
        return run(self, name, params)
    monkeypatch.setattr(store_database.Reading, "_run", counting)
    return ran


def _labels(rows: list[dict]) -> list[dict]:
    """Two annotators' labels on the first two candidates of every other prompt."""
    by_prompt: dict[str, list[str]] = {}
    for r in rows:
        by_prompt.setdefault(r["prompt_id"], []).append(r["candidate_id"])
    out = []
    for i, (prompt, cands) in enumerate(sorted(by_prompt.items())):
        if i % 2 == 0 and len(cands) >= 2:
            out += [{"prompt_id": prompt, "a_id": cands[0], "b_id": cands[1], "annotator": who,
                     "label": ("A", "B", "tie")[(i + k) % 3]} for k, who in enumerate(("h1", "h2"))]
    return out


def test_shared_reads_store_what_reading_every_time_stores(db, tmp_path, monkeypatch, runs):
    shared_reads = _refresh.SHARED_READS
    assert {("audit", name) for name in SHARED} <= shared_reads
    rows = synthetic_pool(12, seed=5)
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", rows), "s")
    import_labels(db, write_jsonl(tmp_path / "labels.jsonl", _labels(rows)), "s")
    verdicts = synthetic_verdicts(rows, judges=("alpha", "beta", "gamma"), seed=5, swap_rate=0.5)
    import_verdicts(db, write_jsonl(tmp_path / "ab.jsonl", [v for v in verdicts if v["judge"] != "gamma"]), "s")
    gamma = write_jsonl(tmp_path / "g.jsonl", [v for v in verdicts if v["judge"] == "gamma"])
    plain, shared = _copy(db, tmp_path / "plain.duckdb"), _copy(db, tmp_path / "shared.duckdb")
    for step in ("nothing stored", "a third judge added"):
        if step != "nothing stored":
            import_verdicts(plain, gamma, "s")
            _copy(plain, shared)
        derived.forget()
        runs.clear()
        monkeypatch.setattr(_refresh, "SHARED_READS", frozenset())
        every_time = derived.refresh(Database(plain), "s", DERIVED_RESULTS, workers=1)
        read_plain, keys = Counter(r[0] for r in runs), Counter(r[0] for r in set(runs))
        assert all(read_plain[name] > keys[name] for name in SHARED), (step, read_plain, keys)  # read again
        derived.forget()
        runs.clear()
        monkeypatch.setattr(_refresh, "SHARED_READS", shared_reads)
        once = derived.refresh(Database(shared), "s", DERIVED_RESULTS, workers=1)
        assert {name: n for name, n in Counter(r[0] for r in runs).items() if name in SHARED} \
            == {name: keys[name] for name in SHARED}, step                # once per scope and parameters
        assert _document(once) == _document(every_time), step
        _same_stored(_stored(shared), _stored(plain))
