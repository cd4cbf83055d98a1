"""Reads kept for one pass (Database.sharing): a named query read again through a sharing handle, with
the same parameters and scope, returns the rows of its first read (so a write in between is not seen
there, while a plain handle sees it); another query, other parameters, another scope or a full budget
read anew; kept numpy arrays are read-only, plain ones are not."""

from __future__ import annotations

import numpy as np
import pytest

from ingest import Database
from ingest.scoring import import_verdicts
from ingest.store import import_pool
from tests.fixtures import synthetic_pool, synthetic_verdicts, write_jsonl

MARK = ("ingest.store", "derived_mark")       # one row: the pool's fingerprint and its count of verdicts


@pytest.fixture
def pool(db, tmp_path):
    """Pool 's' with judge alpha's verdicts; (the database, beta's verdict file, alpha's and beta's counts)."""
    rows = synthetic_pool(6, seed=3)
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", rows), "s")
    verdicts = synthetic_verdicts(rows, judges=("alpha", "beta"), seed=3)
    alpha = [v for v in verdicts if v["judge"] == "alpha"]
    beta = [v for v in verdicts if v["judge"] == "beta"]
    import_verdicts(db, write_jsonl(tmp_path / "alpha.jsonl", alpha), "s")
    return db, write_jsonl(tmp_path / "beta.jsonl", beta), len(alpha), len(beta)


def _n_verdicts(handle: Database, how: str = "frame", pool: str = "s") -> int:
    with handle.reading() as read:
        pid = read.pool_id(pool)
        if how == "numpy":
            return int(read.numpy("derived_mark", pool_id=pid)["n_verdicts"][0])
        return int(read.frame("derived_mark", pool_id=pid)["n_verdicts"][0])


def test_a_named_query_is_read_once_per_pass_and_a_plain_handle_reads_anew(pool):
    db, beta, n_alpha, n_beta = pool
    shared = Database(db).sharing({MARK}, budget_bytes=1 << 20)
    assert _n_verdicts(shared) == n_alpha
    import_verdicts(db, beta, "s")
    assert _n_verdicts(Database(db)) == n_alpha + n_beta        # the write landed
    assert _n_verdicts(shared) == n_alpha                       # the pass keeps its first read
    assert _n_verdicts(shared.scoped([("alpha", "likert5")])) == n_alpha + n_beta   # another scope: read anew
    assert _n_verdicts(shared, "numpy") == n_alpha + n_beta     # numpy's rows are kept apart from the frame's
    assert _n_verdicts(Database(db).sharing({("ingest.store", "other")}, 1 << 20)) == n_alpha + n_beta


def test_other_parameters_read_anew(pool, tmp_path):
    db, beta, n_alpha, n_beta = pool
    import_pool(db, write_jsonl(tmp_path / "t.jsonl", synthetic_pool(2, seed=4)), "t")
    shared = Database(db).sharing({MARK}, budget_bytes=1 << 20)
    assert _n_verdicts(shared, pool="t") == 0
    assert _n_verdicts(shared) == n_alpha                       # pool s's id: its own read


def test_rows_past_the_budget_are_read_again(pool):
    db, beta, n_alpha, n_beta = pool
    shared = Database(db).sharing({MARK}, budget_bytes=0)
    assert _n_verdicts(shared) == n_alpha
    import_verdicts(db, beta, "s")
    assert _n_verdicts(shared) == n_alpha + n_beta


def test_kept_arrays_are_read_only_and_each_reader_has_its_own_dict(pool):
    db, *_ = pool
    shared = Database(db).sharing({MARK}, budget_bytes=1 << 20)
    with shared.reading() as read:
        pid = read.pool_id("s")
        first = read.numpy("derived_mark", pool_id=pid)
        first["extra"] = np.zeros(1)
        again = read.numpy("derived_mark", pool_id=pid)
    assert "extra" not in again and again["n_verdicts"] is first["n_verdicts"]
    with pytest.raises(ValueError, match="read-only"):
        again["n_verdicts"][0] = 0
    with Database(db).reading() as read:
        plain = read.numpy("derived_mark", pool_id=read.pool_id("s"))
    plain["n_verdicts"][0] = 0                                  # a plain read's arrays are the caller's
