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

from .._pools import pools
from .._read import AuditError
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


def _marks(db: Database, pool: str, result: Result, args: tuple, reader: Reader, now=None) -> list | None:
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


def _computed(db: Database, pool: str, result: Result, args: tuple, missing: list, reader: "Reader"
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
    seconds, parts = _computed(db, pool, result, args, missing, reader)
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


def read(db, pool: str, name: str, *args, results: dict[str, Result] = RESULTS, bar=no_bar) -> pl.DataFrame:
    """The result `name` of the pool for `args`: this process's copy while what it is computed from is
    unchanged, else the stored frame (its parts) when current, else computed once (while `bar()`'s
    show(fraction, sentence) follows it) and stored."""
    db = Database.of(db)
    result = results[name]
    reader = Reader(db, pool, results, bar)
    if result.built_from:
        return result.build(reader(result.built_from, *args))
    marks = _marks(db, pool, result, args, reader)
    if marks is None:                     # no such pool, or an old schema: the audit says which
        return result.compute(db, pool, *args)
    key = (name, str(db.path), pool, json.dumps(list(args), sort_keys=True, default=str),
           tuple(m.fingerprint for m in marks))
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


SAVE_EVERY_S = 30.0     # a refresh stores what it computed at least this often (in seconds computed)


class _Saves:
    """What a refresh computed, stored together (one transaction, the fingerprints now read once for
    all; ingest.store.save_derived_many) when it ends, before anything is read through the layer (a
    result's `uses`, a first view's), so that read finds them stored, and once SAVE_EVERY_S seconds of
    computing wait, so a page opened during a long refresh finds the results computed so far."""

    def __init__(self, db: Database):
        self.db, self.waiting = db, []

    def add(self, entry: dict, name: str, args: tuple, parts: list[tuple]) -> None:
        self.waiting.append((entry, name, args, parts))
        if sum(waiting["seconds"] for waiting, *_ in self.waiting) >= SAVE_EVERY_S:
            self.flush()

    def flush(self) -> None:
        if not self.waiting:
            return
        waiting, self.waiting = self.waiting, []
        stored = self.db.save_derived_many([(name, args, parts) for _, name, args, parts in waiting])
        for (entry, *_), ok in zip(waiting, stored):
            entry["status"] = "computed" if all(ok) else "not stored"


class _SavingReader(Reader):
    """A refresh's Reader: what it computed is stored before a result is read through the layer."""

    def __init__(self, db: Database, pool: str, results: dict[str, Result], saves: _Saves):
        super().__init__(db, pool, results)
        self.saves = saves

    def __call__(self, name: str, *args) -> pl.DataFrame:
        self.saves.flush()
        return super().__call__(name, *args)


def refresh(db, pool: str, results: dict[str, Result] = RESULTS) -> dict:
    """Bring every derived result of the pool (with the arguments of a page's first view) up to date,
    computing only the parts (or wholes) that are stale or missing: after a run brings verdicts, so
    the first page view reads them. {"pool", "n_verdicts", "results": [{name, status, seconds, parts,
    computed}]}: status 'current' (every part stored under its fingerprint), 'computed' (and stored)
    or 'not stored' (the verdicts moved meanwhile, or the database could not be written); parts: how
    many the result is stored in, computed: how many of them were computed now.

    The fingerprints are taken once, at the start (what every result is computed under), and which
    parts are current is asked of the stored fingerprints alone; what is computed is stored together,
    each part only if its fingerprint is still the one it was computed under."""
    db = Database.of(db)
    saves = _Saves(db)
    reader = _SavingReader(db, pool, results, saves)
    now = db.derived_marks_now(pool)
    if now is None:                        # no such pool (the caller migrated the database first)
        known = ", ".join(pools(db)["name"]) or "none"
        raise AuditError(f"no pool named '{pool}' (known: {known})")
    out, n_verdicts = [], None
    try:                                   # what was computed is stored even when a later result fails
        for name, result in results.items():
            if result.built_from:
                continue
            args = result.first_view(reader, pool)
            if args is None:                   # nothing the page's first view computes (Drift of one judge)
                continue
            marks = _marks(db, pool, result, args, reader, now)
            if result.basis != "pool" and (result.in_parts or result.judges_of is None):
                n_verdicts = sum(m.n_verdicts for m in marks)
            current = db.derived_fingerprints(marks, name, args)
            missing = [m for m in marks if not current[m.part]]
            if not missing:
                out.append({"name": name, "status": "current", "seconds": 0.0, "parts": len(marks), "computed": 0})
                continue
            if result.reads_stored:        # its compute reads their stored parts: store what is waiting
                saves.flush()
            seconds, parts = _computed(db, pool, result, args, missing, reader)
            entry = {"name": name, "status": "computed", "seconds": round(seconds, 3), "parts": len(marks),
                     "computed": len(parts)}
            saves.add(entry, name, args, parts)
            out.append(entry)
    finally:
        saves.flush()
    return {"pool": pool, "n_verdicts": n_verdicts, "results": out}


def refresh_line(result: dict, seconds: float) -> str:
    """The line a command prints after refreshing a pool's derived results (refresh's document)."""
    done = [r for r in result["results"] if r["status"] == "computed"]
    lost = [r["name"] for r in result["results"] if r["status"] == "not stored"]
    names = [r["name"] if r["parts"] == r["computed"] else f"{r['name']} ({r['computed']} of {r['parts']} parts)"
             for r in done]
    what = f"stored {len(done)} ({', '.join(names)})" if done else "all current, none computed"
    tail = f"; not stored (the pool changed meanwhile, or the database is read-only): {', '.join(lost)}" if lost else ""
    n = result["n_verdicts"]
    return (f"derived results of pool '{result['pool']}' ({n or 0:,} verdicts): {what} "
            f"in {seconds:.1f} s{tail}")


def refresh_after(db, pool: str | None, results: dict[str, Result] = RESULTS,
                  say: Callable[[str], None] = print) -> None:
    """What a command that brought verdicts ends with: the pool's derived results refreshed (every
    pool's when the command names none: a batch file names its pools), a line per pool said. A
    failure is said, not raised: the verdicts are stored all the same, and the first page view (or
    `judgeaudit derive --pool P`) computes what is missing."""
    db = Database.of(db)
    for name in [pool] if pool else pools(db)["name"].to_list():
        t0 = time.monotonic()
        try:
            result = refresh(db, name, results)
        except Exception as exc:
            say(f"derived results of pool '{name}' not stored: {type(exc).__name__}: {exc} "
                f"(`judgeaudit derive --pool {name}` tries again)")
            continue
        say(refresh_line(result, time.monotonic() - t0))
