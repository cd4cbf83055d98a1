"""The refresh turns numpy's huge-page advice off while it runs (audit.derived._refresh.small_pages): on
a 2-core virtual machine a 2 MiB page's first touch cost more than its 512 small pages', a third of the
refresh's CPU at 10M candidates (docs/scale.md). The advice comes back after (as it was), and on a
kernel that huge-pages advised memory only, an array made under it lies on small pages (read from
/proc/self/smaps)."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from audit import derived
from audit.derived._refresh import small_pages
from ingest import Database
from ingest.scoring import import_verdicts
from ingest.store import import_pool
from tests.fixtures import synthetic_pool, synthetic_verdicts
from train.derived_results import DERIVED_RESULTS

ADVISE = (getattr(np, "_core", None) or np.core).multiarray._set_madvise_hugepage
THP = Path("/sys/kernel/mm/transparent_hugepage/enabled")


def advised() -> bool:
    """numpy's advice now (setting it returns what it was; set back at once)."""
    now = ADVISE(False)
    ADVISE(now)
    return bool(now)


@pytest.fixture(autouse=True)
def advice_on():
    before = ADVISE(True)
    yield
    ADVISE(before)


def test_a_refresh_computes_without_the_advice_and_gives_it_back(db, monkeypatch, write_jsonl):
    rows = synthetic_pool(4, seed=3)
    import_pool(db, write_jsonl("pool.jsonl", rows), "s")
    import_verdicts(db, write_jsonl("v.jsonl", synthetic_verdicts(rows, judges=("alpha",), seed=3)), "s")
    seen = []
    original = DERIVED_RESULTS["cells"]

    def cells(*args, **kwargs):
        seen.append(advised())
        return original.compute(*args, **kwargs)
    monkeypatch.setitem(DERIVED_RESULTS, "cells", replace(original, compute=cells))
    derived.forget()
    out = {r["name"]: r["status"] for r in derived.refresh(Database(db), "s", DERIVED_RESULTS)["results"]}
    assert out["cells"] == "computed" and seen and not any(seen)
    assert advised()


def test_an_advice_off_before_stays_off():
    ADVISE(False)
    with small_pages():
        assert not advised()
    assert not advised()


def test_refreshes_at_once_keep_it_off_until_the_last_ends():
    first_in, second_out = threading.Event(), threading.Event()
    during = []

    def second():
        first_in.wait()
        with small_pages():
            during.append(advised())
        second_out.set()

    thread = threading.Thread(target=second)
    thread.start()
    with small_pages():
        first_in.set()
        second_out.wait()
        during.append(advised())           # the second ended first: still off for this one
    thread.join()
    assert during == [False, False] and advised()


def _huge_kb(array: np.ndarray) -> int:
    """AnonHugePages (kB) of the mappings of /proc/self/smaps that overlap the array's bytes."""
    lo_byte, hi_byte = array.ctypes.data, array.ctypes.data + array.nbytes
    total, inside = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()
        if "-" in head[0] and ":" not in head[0]:          # a mapping's first line: its address range
            lo, hi = (int(x, 16) for x in head[0].split("-"))
            inside = lo < hi_byte and lo_byte < hi
        elif inside and head[0] == "AnonHugePages:":
            total += int(head[1])
    return total


@pytest.mark.skipif(not THP.exists() or "[madvise]" not in THP.read_text(),
                    reason="the kernel huge-pages advised memory alone only with THP 'madvise'")
def test_an_array_made_under_it_lies_on_small_pages():
    advised_array = np.ones(16 << 20)        # 128 MiB, advised: huge pages where the kernel has them
    with small_pages():
        plain = np.ones(16 << 20)
    assert _huge_kb(plain) == 0
    if _huge_kb(advised_array) == 0:
        pytest.skip("the kernel gave the advised array no huge page either (none free)")
