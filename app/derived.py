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

import json
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


# -- the other reading pages' results (issue 29: Rankings, Report, Judges, What labels are worth, Pool) --

def checklist_frame(db, pool: str) -> pl.DataFrame:
    """audit.checklist's document as one row of JSON (a frame, so it is stored like the others)."""
    return pl.DataFrame({"json": [json.dumps(audit.checklist(db, pool), default=str)]})


def judges_frame(db, pool: str, prices: tuple = ()) -> pl.DataFrame:
    """audit.judges at the prices given as price_args (a hashable, storable form of judgeaudit.toml's)."""
    return audit.judges(db, pool, {k: dict(v) for k, v in prices})


def price_args(prices: dict) -> tuple:
    """((judge, ((kind, USD), ...)), ...): judgeaudit.toml's prices as the arguments of judges_frame."""
    return tuple(sorted((k, tuple(sorted(v.items()))) for k, v in prices.items()))


def systems_frame(db, pool: str) -> pl.DataFrame:
    """The pool's systems (its distinct candidate_ids), sorted: the baselines What labels are worth offers."""
    return audit.pool_candidates(db, pool).select("candidate_id").unique().sort("candidate_id")


def pool_summary_frame(db, pool: str) -> pl.DataFrame:
    """What the Pool page draws of the pool, in one frame of (part, x, width, n): its counts (part 'count': x
    prompts, candidates, with a reference, held out), prompts per k (part 'k'), candidates per
    reference score bin and per response length bin (parts 'reference', 'chars': x the bin's start,
    30 equal bins between the least and the most; app.pool_summary)."""
    from app.pool_summary import summary
    return summary(audit.pool_candidates(db, pool))


def call_count_frame(db, pool: str, formats: list, schedule: str = "listing", swap: str = "0") -> pl.DataFrame:
    """ingest.scoring.count_calls as a frame (format, n): the calls a score run would plan, which the
    Score page shows as its form changes (swap: 'all' or a number, as typed)."""
    from ingest.scoring import count_calls
    count = count_calls(db, pool, list(formats), schedule, swap if swap == "all" else int(swap or 0))
    return pl.DataFrame({"format": list(count["per_format"]), "n": list(count["per_format"].values())},
                        schema={"format": pl.String, "n": pl.Int64})


def pool_head_frame(db, pool: str) -> pl.DataFrame:
    """The pool's first candidates, the ones the Pool page lists (app.pool_summary.HEAD)."""
    from app.pool_summary import head
    return head(audit.pool_candidates(db, pool))


DERIVED.update({
    "rank": ("the Bradley-Terry rankings", audit.rank),
    "style_rank": ("the style-controlled rankings", audit.style_rank),
    "placeholders": ("whether the pool's texts are placeholders", audit.placeholder_texts),
    "checklist": ("the reporting checklist", checklist_frame),
    "judges_board": ("the judges' leaderboard", judges_frame),
    "estimate": ("what the labels are worth (PPI++ per cell)", audit.estimate),
    "systems": ("the pool's systems", systems_frame),
    "pool_summary": ("the pool's summary", pool_summary_frame),
    "pool_head": ("the pool's first candidates", pool_head_frame),
    "export_counts": ("the verdict export's rows per sample and status", audit.export_counts),
    "call_count": ("the calls a score run would plan", call_count_frame),
    "drift": ("the drift between two judges per cell", audit.drift),
    "drift_items": ("the calls that moved between two judges", audit.drift_items),
})

# the results computed from the human labels too: their fingerprint includes the labels'
LABELLED = frozenset({"style_rank", "judges_board", "estimate"})
# the results computed from the pool's candidates alone: a score run or an import leaves them current
POOL_ONLY = frozenset({"placeholders", "systems", "pool_summary", "pool_head", "call_count"})


def basis(name: str) -> str:
    """What the result `name` is computed from (ingest.store's derived_mark basis)."""
    return "labels" if name in LABELLED else "pool" if name in POOL_ONLY else "verdicts"


def _prices(db, pool: str) -> tuple:
    from ingest.endpoints import prices
    return (price_args(prices(db)),)


MOVED_SHOWN = 1000          # the Drift page lists the first calls that moved (drift's n_moved counts them all)


def _first_two_judges(db, pool: str) -> tuple | None:
    """The Drift page's first view: its first judge (the pool's judges sorted) against the next one;
    None for a pool of one judge, where the page compares nothing. The judges are read from the
    stored audit cells (refresh computes those first), else from the audit."""
    from ingest.store import derived_mark, derived_result
    mark = derived_mark(db, pool)
    cells = derived_result(db, mark, "cells")[0] if mark is not None else None
    if cells is None:
        cells = audit.audit_cells(db, pool)
    judges = sorted(cells["judge"].unique().to_list())
    return (judges[0], judges[1]) if len(judges) >= 2 else None


def _first_moved(db, pool: str) -> tuple | None:
    """The Drift page's first list of moved calls: the first MOVED_SHOWN of _first_two_judges'."""
    judges = _first_two_judges(db, pool)
    return None if judges is None else (*judges, None, MOVED_SHOWN)


# the arguments (after the pool) a page's first view asks for, given the database and the pool: what
# `refresh` (`judgeaudit derive`, the run that brought verdicts) stores; () where not named here, and
# None where the page would show nothing to compute (the result is then not stored)
FIRST_VIEW: dict[str, Callable[[str, str], tuple | None]] = {
    "rank": lambda db, pool: ("candidate_id", 100),         # the Rankings page's defaults
    "style_rank": lambda db, pool: (0, 0),                  # every cell, no bootstrap: the page filters one
    "judges_board": _prices,
    "estimate": lambda db, pool: ("winrate", None, 0.05),   # What labels are worth's defaults
    "call_count": lambda db, pool: (("binary", "likert5", "numeric100"), "listing", "0"),   # the Score page's form
    "drift": _first_two_judges,
    "drift_items": _first_moved,
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


def progress_text(what: str, pool: str, n_verdicts: int, elapsed: float, expected: float | None,
                  unit: str = "verdicts") -> tuple[float, str]:
    """(fraction, sentence) of the progress bar of a computation `elapsed` seconds in, over n `unit`."""
    head = f"Computing {what} for pool '{pool}' ({n_verdicts:,} {unit}): {elapsed:.0f} s so far"
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
    from ingest.store import derived_mark, derived_result, params_json, save_derived
    what, fn = DERIVED[name]
    on = basis(name)
    mark = _recall(("mark", path, mtime, pool, on))
    if mark is None or not mark.files_unchanged():     # the database or an attached file changed
        mark = derived_mark(path, pool, on)
        if mark is None:                     # no such pool, or an old schema: the audit says which
            return fn(path, pool, *args)
        _remember(("mark", path, mtime, pool, on), mark)
    stored = (name, path, mark.fingerprint, pool, params_json(args))   # the stored key's form: a list argument too
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
        unit = "candidates" if mark.basis == "pool" else "verdicts"
        return job.wait(show, lambda s: progress_text(what, pool, mark.n_verdicts, s, job.expected, unit))
    finally:
        clear()


def refresh(db: str, pool: str) -> dict:
    """Bring every derived result of the pool (DERIVED, with the arguments of a page's first view:
    FIRST_VIEW) up to its fingerprint now,
    computing only those stale or missing (`judgeaudit derive`: after a run brings verdicts, so the
    first page view reads them): {"pool", "n_verdicts", "results": [{name, status, seconds}]}, status
    'current' (stored under the fingerprint), 'computed' (and stored) or 'not stored' (the pool's
    verdicts moved meanwhile, or the database could not be written)."""
    from ingest.store import derived_mark, derived_result, save_derived
    out = []
    n_verdicts = None
    for name, (_, fn) in DERIVED.items():
        mark = derived_mark(db, pool, basis(name))
        if mark is None:                     # no such pool (the caller migrated the database first)
            raise audit.AuditError(f"no pool named '{pool}' (known: {', '.join(audit.pools(db)['name']) or 'none'})")
        n_verdicts = mark.n_verdicts if mark.basis != "pool" else n_verdicts
        args = FIRST_VIEW[name](db, pool) if name in FIRST_VIEW else ()
        if args is None:                     # nothing the page's first view computes (Drift of one judge)
            continue
        if derived_result(db, mark, name, args)[0] is not None:
            out.append({"name": name, "status": "current", "seconds": 0.0})
            continue
        t0 = time.monotonic()
        frame = fn(db, pool, *args)
        seconds = time.monotonic() - t0
        stored = save_derived(db, mark, name, args, frame, seconds)
        out.append({"name": name, "status": "computed" if stored else "not stored", "seconds": round(seconds, 3)})
    return {"pool": pool, "n_verdicts": n_verdicts, "results": out}


# issue 29 (Curate & Train): the page's first view and the formats' overlap, stored like the audit's results
from app.curation_view import curation_overlap, curation_view  # noqa: E402

DERIVED["curation"] = ("the curation preview (picks, the cut, lengths)", curation_view)
DERIVED["curation_overlap"] = ("the overlap of the selected examples between formats", curation_overlap)
DERIVED["scored_cells"] = ("the scored cells (judge, format, decoding, score)", audit.scored_cells)
