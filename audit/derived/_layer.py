"""Reading and refreshing derived results: this process's copy while what a result is computed from
is unchanged, else the stored frame when its fingerprint is current, else computed once and stored.

A result stored in parts (one per judging: a judge with a format, the cells of its verdicts) is read
part by part: only the parts whose judging's verdicts moved are computed, in one computation scoped to
those judgings (ingest.store.Database.scoped), split by judge and format and stored; the parts are then
put together in judge, then format order. A judge's new format computes that judging's part alone.
Sessions of one process that ask for the same result at once wait on one computation, which runs in a
thread of its own so that it finishes (and is stored) even when the session that started it goes away.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from typing import Callable

import polars as pl

from ingest.store.database import Database

from ._registry import RESULTS, Result, parts_by_judging, put_together

_MEMO_SIZE = 256
_memo: OrderedDict = OrderedDict()          # key -> frame or marks, this process's copies
_inflight: dict[tuple, "Computation"] = {}  # what is being computed now, by its key
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
    the session that started it goes away, and any session may wait on it with a progress bar."""

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


def no_bar():
    """A progress display that shows nothing: (show, clear)."""
    return (lambda fraction, sentence: None), (lambda: None)


class Reader:
    """The derived results of one pool in one registry: `read(name, *args)`; `read.db`, the handle."""

    def __init__(self, db: Database, pool: str, results: dict[str, Result], bar=no_bar):
        self.db, self.pool, self.results, self.bar = db, pool, results, bar

    def __call__(self, name: str, *args) -> pl.DataFrame:
        return read(self.db, self.pool, name, *args, results=self.results, bar=self.bar)


def marks_of(db: Database, pool: str, result: Result, args: tuple, reader: Reader, now=None) -> list | None:
    """The marks the result is stored under now: one per judging of the pool for a result in parts
    (in judge, then format order), else one; None when there is no such pool or the database predates
    the derived results. Kept in this process while the database file and the attached files are unchanged.
    `now`: the fingerprints a refresh took at its start (ingest.store.derived_marks_now), used as they are."""
    judges = None
    if not result.in_parts and result.judges_of is not None and result.basis != "pool":
        judges = tuple(result.judges_of(reader, pool, args))
    if now is not None:
        if result.in_parts and result.basis != "pool":
            marks = list(now.judgings(result.basis, result.reads_earlier).values())
            return marks or [now.whole(result.basis)]
        return [now.whole(result.basis, judges)]
    key = ("marks", *db.state(), pool, result.basis, result.in_parts, result.reads_earlier, judges)
    marks = _recall(key)
    if marks is None or not all(m.files_unchanged() for m in marks):
        if result.in_parts and result.basis != "pool":
            found = db.derived_judging_marks(pool, result.basis, result.reads_earlier)
            marks = None if found is None else list(found.values())
            if marks == []:                # no judging yet: the (empty) result is stored whole
                marks = [db.derived_mark(pool, result.basis)]
        else:
            found = db.derived_mark(pool, result.basis, judges)
            marks = None if found is None else [found]
        if marks is None:
            return None
        _remember(key, marks)
    return marks


def computed_parts(db: Database, pool: str, result: Result, args: tuple, missing: list, reader: "Reader"
              ) -> tuple[float, list[tuple]]:
    """Compute the parts (or the whole) under the `missing` marks: (seconds, [(mark, frame, its share of
    the seconds)]). The results it `uses` are read through the layer first (their time not counted)."""
    if not result.in_parts or not missing[0].part:
        (mark,) = missing
        used = {u: reader(u) for u in result.uses}
        t0 = time.monotonic()
        frame = result.compute(db, pool, *args, **used)
        seconds = time.monotonic() - t0
        return seconds, [(mark, frame, seconds)]
    t0 = time.monotonic()
    frame = result.compute(db.scoped([m.judging for m in missing]), pool, *args)
    seconds = time.monotonic() - t0
    total = sum(m.n_verdicts or 1 for m in missing)       # each part's share of the time, by its verdicts
    parts = parts_by_judging(frame, missing)
    return seconds, [(m, part, seconds * (m.n_verdicts or 1) / total) for m, part in parts.items()]


def _compute_missing(db: Database, pool: str, name: str, result: Result, args: tuple,
                     missing: list, reader: "Reader") -> list[tuple]:
    """Compute the parts (or the whole) under the `missing` marks and store each; [(mark, frame,
    seconds, stored)]."""
    seconds, parts = computed_parts(db, pool, result, args, missing, reader)
    stored = db.save_derived_parts(name, args, parts)
    return [(m, part, seconds, ok) for (m, part, _), ok in zip(parts, stored)]


def _whole(result: Result, frames: list[pl.DataFrame]) -> pl.DataFrame:
    """The parts put together (in the marks' order, judging by judging) and combined."""
    frame = put_together(frames)
    return result.combine(frame) if result.combine else frame


def _current(db: Database, pool: str, name: str, result: Result, args: tuple, marks: list,
             stored: dict, reader: "Reader") -> tuple[pl.DataFrame, list[tuple]]:
    """The result from the stored parts, the missing ones computed and stored: (frame, what was
    computed as [(mark, frame, seconds, stored)])."""
    missing = [m for m in marks if stored.get(m.part) is None]
    done = _compute_missing(db, pool, name, result, args, missing, reader) if missing else []
    frames = dict(stored)
    frames.update({m.part: frame for m, frame, _, _ in done})
    return _whole(result, [frames[m.part] for m in marks]), done


def _stored_parts(db: Database, name: str, args: tuple, marks: list) -> tuple[dict, tuple | None]:
    """{part: stored frame or None} under the marks, and the latest computation's timing."""
    return db.derived_parts(marks, name, args)


def _key(name: str, db: Database, pool: str, args: tuple, marks: list) -> tuple:
    """The key of this process's copy of a result: its name, database, pool, arguments and fingerprints."""
    return (name, str(db.path), pool, json.dumps(list(args), sort_keys=True, default=str),
            tuple(m.fingerprint for m in marks))


def read_under(reader: Reader, now, name: str, args: tuple, unstored: dict) -> pl.DataFrame:
    """The result `name` for `args` as `read` gives it, but under the fingerprints `now` (a refresh's,
    taken at its start; ingest.store.derived_marks_now), so that no fingerprint is taken again: each
    part as `unstored` holds it ({mark: frame}: computed under `now` and not stored, the refresh's
    own), else as stored under its mark; a part neither computed and stored as `read` does."""
    db, pool, result = reader.db, reader.pool, reader.results[name]
    if result.built_from:
        return result.build(reader(result.built_from, *args))
    marks = marks_of(db, pool, result, args, reader, now)
    key = _key(name, db, pool, args, marks)
    frame = _recall(key)
    if frame is None:
        rest = [m for m in marks if m not in unstored]
        frames = _stored_parts(db, name, args, rest)[0] if rest else {}
        frames.update({m.part: unstored[m] for m in marks if m in unstored})
        frame = _remember(key, _current(db, pool, name, result, args, marks, frames, reader)[0])
    return frame


def read(db, pool: str, name: str, *args, results: dict[str, Result] = RESULTS, bar=no_bar) -> pl.DataFrame:
    """The result `name` of the pool for `args`: this process's copy while what it is computed from is
    unchanged, else the stored frame (its parts) when current, else computed once (while `bar()`'s
    show(fraction, sentence) follows it) and stored."""
    db = Database.of(db)
    result = results[name]
    reader = Reader(db, pool, results, bar)
    if result.built_from:
        return result.build(reader(result.built_from, *args))
    marks = marks_of(db, pool, result, args, reader)
    if marks is None:                     # no such pool, or an old schema: the audit says which
        return result.compute(db, pool, *args)
    key = _key(name, db, pool, args, marks)
    frame = _recall(key)
    if frame is not None:
        return frame
    with _guard:
        job = _inflight.get(key)
    if job is None:
        stored, timing = _stored_parts(db, name, args, marks)
        if all(f is not None for f in stored.values()):
            return _remember(key, _whole(result, [stored[m.part] for m in marks]))
        todo = [m for m in marks if stored[m.part] is None]
        expected = estimate_s(timing, sum(m.n_verdicts for m in todo))

        def compute() -> pl.DataFrame:
            try:
                return _remember(key, _current(db, pool, name, result, args, marks, stored, reader)[0])
            finally:
                with _guard:
                    _inflight.pop(key, None)
        with _guard:                       # a session that asks meanwhile waits on this computation
            job = _inflight.get(key)
            frame = _memo.get(key)
            if job is None and frame is None:
                job = _inflight[key] = Computation(compute, expected)
        if frame is not None:
            return frame
    show, clear = bar()
    try:
        unit = "candidates" if result.basis == "pool" else "verdicts"
        n = sum(m.n_verdicts for m in marks)
        return job.wait(show, lambda s: progress_text(result.what, pool, n, s, job.expected, unit))
    finally:
        clear()
