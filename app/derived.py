"""The pages' derived results (issue 29; DESIGN.md 'Ten million candidates on every page'): part of
app/data.py's caching layer, which routes the names of DERIVED through `cached_result`.

A derived result is an audit function's frame for a pool (its per-cell results: cells, slot bias,
positions, score levels, ...). It is stored in the database (ingest.store.save_derived, migration
017) under a fingerprint of what it was computed from (ingest.store.derived_mark), so a new session
or a restarted server reads the stored frame and runs no audit query for it. When the fingerprint
moved (a score run, an import, an attach or detach, a jury refresh, a migration), the first reader
computes it once, with a progress bar (what, the time so far and left), and stores it; other sessions
of the same server wait for that one computation rather than starting their own. The audit stays
read-only and computes; the store keeps the frames.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Callable

import polars as pl

import audit

# name -> (what the progress bar says is computed, the audit function: (db, pool, *args) -> frame)
DERIVED: dict[str, tuple[str, Callable]] = {
    "cells": ("the audit's cells (tie probability, D2, levels per judge and format)", audit.audit_cells),
    "bias": ("slot bias per comparative cell", audit.bias),
    "bias_items": ("slot bias per item", audit.bias_items),
    "positions": ("the selected candidates' positions", audit.position_selection),
    "variance": ("the variance decomposition of the audit's cells", audit.variance),
    "score_values": ("the score levels per cell", audit.score_values),
    "consistency": ("repeat consistency per cell", audit.consistency),
}

_MEMO_SIZE = 256
_memo: OrderedDict = OrderedDict()        # (key) -> frame or Mark, this process's copies
_inflight: dict[tuple, "Computation"] = {}   # what is being computed now, by its stored key
_guard = threading.Lock()


def _remember(key, value):
    with _guard:
        _memo[key] = value
        _memo.move_to_end(key)
        while len(_memo) > _MEMO_SIZE:
            _memo.popitem(last=False)
    return value


def _recall(key):
    with _guard:
        return _memo.get(key)


def forget() -> None:
    """Drop this process's copies (what a restarted server starts with): the stored results remain."""
    with _guard:
        _memo.clear()


def estimate_s(timing: tuple[float, int] | None, n_verdicts: int) -> float | None:
    """The time a computation will take: the latest one's seconds scaled by the verdicts it read
    (None before any)."""
    if timing is None:
        return None
    seconds, n_then = timing
    return seconds * max(n_verdicts, 1) / max(n_then, 1)


def progress_text(what: str, pool: str, n_verdicts: int, elapsed: float, expected: float | None) -> tuple[float, str]:
    """(fraction, sentence) of the progress bar of a computation `elapsed` seconds in."""
    head = f"Computing {what} for pool '{pool}' ({n_verdicts:,} verdicts): {elapsed:.0f} s so far"
    if expected is None:
        return min(elapsed / (elapsed + 30.0), 0.95), f"{head}; the first time for this pool, so no estimate yet"
    left = expected - elapsed
    if left <= 0:
        return 0.99, f"{head}; it took {expected:.0f} s last time, so nearly done"
    return min(elapsed / expected, 0.99), f"{head}, about {left:.0f} s left"


class Computation:
    """compute() running in a thread of its own: it runs to its end (and stores its result) even when
    the session that started it goes away (a click elsewhere stops that session's script), and any
    session may wait on it with a progress bar."""

    def __init__(self, compute: Callable[[], pl.DataFrame], expected: float | None = None):
        self._compute, self._out, self.expected = compute, {}, expected
        self._done = threading.Event()
        self.started = time.monotonic()
        threading.Thread(target=self._run, daemon=True, name="judgeaudit-derived").start()

    def _run(self):
        try:
            self._out["frame"] = self._compute()
        except BaseException as exc:     # raised again in each waiting session's thread
            self._out["error"] = exc
        finally:
            self._done.set()

    def wait(self, show: Callable[[float, str], None], text: Callable[[float], tuple[float, str]],
             every_s: float = 0.25) -> pl.DataFrame:
        """The frame, once computed, calling `show(fraction, sentence)` every `every_s` meanwhile with
        `text(seconds since it started)`; the computation's exception raised here."""
        while not self._done.wait(every_s):
            show(*text(time.monotonic() - self.started))
        if "error" in self._out:
            raise self._out["error"]
        return self._out["frame"]


def with_progress(compute: Callable[[], pl.DataFrame], show: Callable[[float, str], None],
                  text: Callable[[float], tuple[float, str]], every_s: float = 0.25) -> pl.DataFrame:
    """compute() in a worker thread while `show(fraction, sentence)` is called every `every_s` with
    `text(elapsed)`; its result, or its exception raised here."""
    return Computation(compute).wait(show, text, every_s)


def _streamlit_bar():
    """A progress bar drawn in place, and a way to remove it: (show, clear)."""
    import streamlit as st
    slot = st.empty()
    return (lambda fraction, sentence: slot.progress(fraction, text=sentence)), slot.empty


def cached_result(name: str, path: str, mtime: float, pool: str, *args, bar=_streamlit_bar) -> pl.DataFrame:
    """The result `name` of the pool: this process's copy while the pool's fingerprint is unchanged
    (read again when the database's mtime or an attached file moved), else the stored frame when its
    fingerprint is the pool's now, else computed once (with a progress bar from `bar()`) and stored."""
    from ingest.store import derived_mark, derived_result, save_derived
    what, fn = DERIVED[name]
    mark = _recall(("mark", path, mtime, pool))
    if mark is None or not mark.files_unchanged():     # the database or an attached file changed
        mark = derived_mark(path, pool)
        if mark is None:                     # no such pool, or an old schema: the audit says which
            return fn(path, pool, *args)
        _remember(("mark", path, mtime, pool), mark)
    stored = (name, path, mark.fingerprint, pool, args)
    frame = _recall(stored)
    if frame is not None:
        return frame
    with _guard:
        job = _inflight.get(stored)
    if job is None:
        frame, timing = derived_result(path, mark, name, args)
        if frame is not None:
            return _remember(stored, frame)
        expected = estimate_s(timing, mark.n_verdicts)

        def compute() -> pl.DataFrame:
            t0 = time.monotonic()
            try:
                result = fn(path, pool, *args)
                save_derived(path, mark, name, args, result, time.monotonic() - t0)
                return _remember(stored, result)
            finally:
                with _guard:
                    _inflight.pop(stored, None)
        with _guard:                         # a session that asks meanwhile waits on this computation
            job = _inflight.get(stored)
            frame = _memo.get(stored)
            if job is None and frame is None:
                job = _inflight[stored] = Computation(compute, expected)
        if frame is not None:
            return frame
    show, clear = bar()
    try:
        return job.wait(show, lambda s: progress_text(what, pool, mark.n_verdicts, s, job.expected))
    finally:
        clear()


def refresh(db: str, pool: str) -> dict:
    """Bring every derived result of the pool (DERIVED, default arguments) up to its fingerprint now,
    computing only those stale or missing (`judgeaudit derive`: after a run brings verdicts, so the
    first page view reads them): {"pool", "n_verdicts", "results": [{name, status, seconds}]}, status
    'current' (stored under the fingerprint), 'computed' (and stored) or 'not stored' (the pool's
    verdicts moved meanwhile, or the database could not be written)."""
    from ingest.store import derived_mark, derived_result, save_derived
    out = []
    for name, (_, fn) in DERIVED.items():
        mark = derived_mark(db, pool)
        if mark is None:                     # no such pool (the caller migrated the database first)
            raise audit.AuditError(f"no pool named '{pool}' (known: {', '.join(audit.pools(db)['name']) or 'none'})")
        if derived_result(db, mark, name)[0] is not None:
            out.append({"name": name, "status": "current", "seconds": 0.0})
            continue
        t0 = time.monotonic()
        frame = fn(db, pool)
        seconds = time.monotonic() - t0
        stored = save_derived(db, mark, name, (), frame, seconds)
        out.append({"name": name, "status": "computed" if stored else "not stored", "seconds": round(seconds, 3)})
    return {"pool": pool, "n_verdicts": mark.n_verdicts, "results": out}


# issue 29 (Curate & Train): the page's first view and the formats' overlap, stored like the audit's results
from app.curation_view import curation_overlap, curation_view  # noqa: E402

DERIVED["curation"] = ("the curation preview (picks, the cut, lengths)", curation_view)
DERIVED["curation_overlap"] = ("the overlap of the selected examples between formats", curation_overlap)
DERIVED["scored_cells"] = ("the scored cells (judge, format, decoding, score)", audit.scored_cells)
DERIVED["placeholder_texts"] = ("whether the pool's texts are placeholders (a scan of every text)", audit.placeholder_texts)
