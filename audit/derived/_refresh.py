"""The refresh: every derived result of a pool (with a page's first-view arguments) brought up to date,
computing only the parts (or wholes) that are stale or missing, after a run brings verdicts.

Results compute at once, as many as the machine has cores (WORKERS, or refresh's `workers`; 1: one after
another, for debugging): each in a thread of its own that takes a computing slot, the earliest in the
registry first, and waits (its slot given back) for the results it reads: those it `uses`, those it
`reads_stored`, and those its first view or `judges_of` read. A computation's DuckDB queries and numpy
loops release the GIL. What is stored, and the refresh's document, are the sequential refresh's: the
fingerprints are taken once at the start, each result's parts are computed under them, a result it
reads is read under them too (what it computed, else what is stored under them: no fingerprint taken
again), and one writer (_Saves) stores what waits, checking once per store that the verdicts did not
move meanwhile.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from typing import Callable, Iterator

import numpy as np
import polars as pl

from ingest.store.database import Database

from .._pools import pools
from .._read import AuditError
from ._layer import Reader, computed_parts, marks_of, read_under
from ._registry import RESULTS, Result

SAVE_EVERY_S = 30.0     # a refresh stores what it computed at least this often (in seconds computed)
# the audit's queries that several results of a refresh read with the same parameters and scope, read once
# per refresh (Database.sharing): the cells' call counts (cells, positions, consistency, scored_cells), slot
# bias's items (bias, bias_items), the label cells (alt_test, decisions twice), the candidates' and systems'
# codes (rank, style_rank, estimate); up to SHARED_BYTES of rows kept (more is read again, as before)
SHARED_READS = frozenset(("audit", name) for name in (
    "cell_calls", "bias_items", "label_cells", "rank_candidate_codes", "rank_systems"))
SHARED_BYTES = 256 << 20
WORKERS: int | None = None   # results a refresh computes at once; None: one per core (1: one after another)


class _PageAdvice:
    """numpy's huge-page advice while refreshes run in this process: off from the first one's start
    to the last one's end, then as it was."""
    lock = threading.Lock()
    running = 0
    before = True


@contextlib.contextmanager
def small_pages() -> Iterator[None]:
    """While the block runs, numpy's arrays are not advised onto 2 MiB pages; then the advice is as it
    was. numpy advises every array of 4 MiB or more (madvise MADV_HUGEPAGE, unless NUMPY_MADVISE_HUGEPAGE=0
    at its import), and a refresh allocates thousands of them (its reads' columns, their gathers):
    measured at 10M candidates on a 2-core virtual machine, the kernel's time in the refresh after a
    judge fell from 14-16 s to 10 s and the refresh from 30-33 s to 27-29 s without the advice (a huge
    page's first touch there costs more than its 512 small pages'; docs/scale.md). Only the advice
    changes: every array and number is the same."""
    advise = (getattr(np, "_core", None) or np.core).multiarray._set_madvise_hugepage   # numpy 2, numpy 1
    with _PageAdvice.lock:
        if _PageAdvice.running == 0:
            _PageAdvice.before = advise(False)
        _PageAdvice.running += 1
    try:
        yield
    finally:
        with _PageAdvice.lock:
            _PageAdvice.running -= 1
            if _PageAdvice.running == 0:
                advise(_PageAdvice.before)


def refresh_workers(workers: int | None = None) -> int:
    """How many results a refresh computes at once: `workers` when given, else WORKERS, else one per core
    this process may run on (a computation's DuckDB queries and numpy loops release the GIL, so two
    results on two cores take about the time of the longer one); at least 1."""
    n = WORKERS if workers is None else workers
    if n is None:
        n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, int(n))


class _Saves:
    """What a refresh computed, stored together (one transaction, the fingerprints now read once for
    all, each part stored only where its fingerprint still holds; ingest.store.save_derived_many) when
    it ends, before a result that `reads_stored` one of those waiting computes (its compute reads them
    from the store), and once SAVE_EVERY_S seconds of computing wait, so a page opened during a long
    refresh finds the results computed so far. The refresh's workers add to it; one flush at a time
    writes (the one writer), in the order the results were added. What is not stored (waiting, or
    refused at a flush: the verdicts moved) stays here for the refresh's reads (`unstored`)."""

    def __init__(self, db: Database):
        self.db, self.waiting, self.refused = db, [], []
        self._lock = threading.RLock()

    def add(self, entry: dict, name: str, args: tuple, parts: list[tuple]) -> None:
        with self._lock:
            self.waiting.append((entry, name, args, parts))
            if sum(waiting["seconds"] for waiting, *_ in self.waiting) >= SAVE_EVERY_S:
                self.flush()

    def flush(self) -> None:
        with self._lock:
            if not self.waiting:
                return
            waiting, self.waiting = self.waiting, []
            stored = self.db.save_derived_many([(name, args, parts) for _, name, args, parts in waiting])
            for (entry, name, args, parts), ok in zip(waiting, stored):
                entry["status"] = "computed" if all(ok) else "not stored"
                self.refused += [(name, args, part) for part, saved in zip(parts, ok) if not saved]

    def flush_for(self, names: tuple[str, ...]) -> None:
        """Flush when one of the results `names` waits (a compute is about to read them stored)."""
        with self._lock:
            if any(name in names for _, name, _, _ in self.waiting):
                self.flush()

    def unstored(self, name: str, args: tuple) -> dict:
        """{mark: frame}: the parts of the result `name` for `args` computed by this refresh and not
        stored (waiting, or refused); the others are stored, or were not computed."""
        with self._lock:
            parts = [part for _, n, a, ps in self.waiting if (n, a) == (name, args) for part in ps]
            parts += [part for n, a, part in self.refused if (n, a) == (name, args)]
        return {mark: frame for mark, frame, _ in parts}


class _Slots:
    """The refresh's computing slots: as many results compute at once as there are slots, the waiting
    one earliest in the registry first (every result waits from the start); a result that waits for another (what it reads) gives its slot
    back meanwhile, so no slot sits idle on a wait and no two results wait on each other's slot."""

    def __init__(self, n: int, count: int):
        self._free, self._waiting = n, set(range(count))
        self._turn = threading.Condition()

    def take(self, i: int) -> None:
        with self._turn:
            self._waiting.add(i)
            self._turn.wait_for(lambda: self._free > 0 and i == min(self._waiting))
            self._waiting.discard(i)
            self._free -= 1
            self._turn.notify_all()

    def give(self) -> None:
        with self._turn:
            self._free += 1
            self._turn.notify_all()


class _Plan:
    """One refresh's results, each computed in a thread of its own when a slot is free (registry order
    first): `done[name]` is set once the result is computed and added to the saves (or found current,
    or skipped), so a result that reads it (`uses`, `reads_stored`, a first view's or `judges_of`'s
    read) waits for that first. A result reads only results before it in the registry (a later one is
    read through the layer as any page reads it). After a failure the results not started are skipped."""

    def __init__(self, results: dict[str, Result], names: list[str], workers: int):
        self.results = results
        self.order = {name: i for i, name in enumerate(names)}
        self.done = {name: threading.Event() for name in names}
        self.slots = _Slots(workers, len(names))
        self.errors: dict[str, BaseException] = {}
        self.local = threading.local()          # the name of the result this thread computes

    def wait_for(self, name: str) -> None:
        """Wait (the slot given back meanwhile) until the result `name` (or the one it is built from) is
        computed, where it is one of this refresh's before the calling result; at once otherwise."""
        mine = getattr(self.local, "name", None)
        while name in self.results and self.results[name].built_from:    # made from another when read
            name = self.results[name].built_from
        if name not in self.done or mine is None or self.order[name] >= self.order[mine] \
                or self.done[name].is_set():
            return
        self.slots.give()
        try:
            self.done[name].wait()
        finally:
            self.slots.take(self.order[mine])


class _RefreshReader(Reader):
    """A refresh's Reader: a result of this refresh is read once computed, and every result under the
    fingerprints the refresh took at its start (its handle's `marks_now`), never taken again: its parts as computed
    (those not stored yet held by the saves), else as stored (read_under). So nothing is stored for
    a read, and a read sees the parts the refresh computed whether or not they were stored."""

    def __init__(self, db: Database, pool: str, results: dict[str, Result], saves: _Saves, plan: "_Plan"):
        super().__init__(db, pool, results)
        self.saves, self.plan = saves, plan

    def __call__(self, name: str, *args) -> pl.DataFrame:
        self.plan.wait_for(name)
        return read_under(self, self.db.marks_now, name, args, self.saves.unstored(name, args))


def _refresh_one(db: Database, pool: str, name: str, result: Result, reader: _RefreshReader) -> dict | None:
    """The refresh of one result: its entry ({name, status, seconds, parts, computed, n_verdicts}),
    its computed parts added to the saves; None where the page's first view computes nothing."""
    args = result.first_view(reader, pool)
    if args is None:                   # nothing the page's first view computes (Drift of one judge)
        return None
    marks = marks_of(db, pool, result, args, reader, db.marks_now)
    n_verdicts = sum(m.n_verdicts for m in marks) \
        if result.basis != "pool" and (result.in_parts or result.judges_of is None) else None
    current = db.derived_fingerprints(marks, name, args)
    missing = [m for m in marks if not current[m.part]]
    if not missing:
        return {"name": name, "status": "current", "seconds": 0.0, "parts": len(marks), "computed": 0,
                "n_verdicts": n_verdicts}
    for stored in result.reads_stored:  # its compute reads their stored parts: store those waiting
        reader.plan.wait_for(stored)
    reader.saves.flush_for(result.reads_stored)
    seconds, parts = computed_parts(db, pool, result, args, missing, reader)
    entry = {"name": name, "status": "computed", "seconds": round(seconds, 3), "parts": len(marks),
             "computed": len(parts), "n_verdicts": n_verdicts}
    reader.saves.add(entry, name, args, parts)
    return entry


def refresh(db, pool: str, results: dict[str, Result] = RESULTS, workers: int | None = None) -> dict:
    """Bring every derived result of the pool (with the arguments of a page's first view) up to date,
    computing only the parts (or wholes) that are stale or missing: after a run brings verdicts, so
    the first page view reads them. {"pool", "n_verdicts", "results": [{name, status, seconds, parts,
    computed}]}: status 'current' (every part stored under its fingerprint), 'computed' (and stored)
    or 'not stored' (the verdicts moved meanwhile, or the database could not be written); parts: how
    many the result is stored in, computed: how many of them were computed now.

    The fingerprints are taken once, at the start (what every result is computed, and every result it
    reads is read, under), and which parts are current is asked of the stored fingerprints alone; what
    is computed is stored together (at the end, before a result that reads it stored computes, and
    every SAVE_EVERY_S seconds computed), each part only if its fingerprint is still the one it was
    computed under. `workers` results (refresh_workers: one per core by default) compute at once, each
    after the results it reads; what is stored, and the document (in the registry's order), are the
    sequential refresh's (workers=1)."""
    db = Database.of(db).sharing(SHARED_READS, SHARED_BYTES)   # kept for this refresh alone
    now = db.derived_marks_now(pool)
    if now is None:                        # no such pool (the caller migrated the database first)
        known = ", ".join(pools(db)["name"]) or "none"
        raise AuditError(f"no pool named '{pool}' (known: {known})")
    db = db.at(now)                        # every read of the refresh under these (the reader, the leaderboard)
    names = [name for name, result in results.items() if not result.built_from]
    saves, plan = _Saves(db), _Plan(results, names, refresh_workers(workers))
    reader = _RefreshReader(db, pool, results, saves, plan)
    entries: dict[str, dict | None] = {}

    def run(name: str) -> None:
        i = plan.order[name]
        plan.local.name = name
        plan.slots.take(i)
        try:
            if not plan.errors:            # after a failure, what has not started is left
                entries[name] = _refresh_one(db, pool, name, results[name], reader)
        except BaseException as exc:       # raised again by the refresh, once every thread has ended
            plan.errors[name] = exc
        finally:
            plan.done[name].set()
            plan.slots.give()

    threads = [threading.Thread(target=run, args=(name,), daemon=True, name=f"judgeaudit-refresh-{name}")
               for name in names]
    with db.holding(), small_pages():      # the verdicts' blocks read once kept in memory for every result
        try:                               # what was computed is stored even when a result fails
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        finally:
            saves.flush()
    if plan.errors:
        raise plan.errors[min(plan.errors, key=plan.order.__getitem__)]
    out = [entries[name] for name in names if entries.get(name) is not None]
    n_verdicts = next((e["n_verdicts"] for e in reversed(out) if e["n_verdicts"] is not None), None)
    for entry in out:
        del entry["n_verdicts"]
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
