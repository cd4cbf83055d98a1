"""Derived results (migrations 017, 019): what the audit computes for a pool, stored once computed
under a fingerprint of what it was computed from, so that a new session, a restarted server or the
next command reads the stored frame instead of every verdict (docs/scale.md#derived-results-computed-once-read-by-every-session).

A fingerprint (a `Mark`) covers one of three things:

- the whole pool (`sql/derived_mark.sql`): a cell run started, finished or failed, a verdict written
  or parsed, an attached file attached, detached or changed on disk, a migration;
- one judging of the pool (`sql/derived_judging_marks.sql`: a judge with a format): the same, of that
  judging alone, so a result stored in parts (one per judging, the cells of one judge and format)
  stays current while another judge's verdicts come, or the same judge's in another format; for a
  result whose part reads the judges before its own too (`earlier`: the pairs of judges that share
  calls, a judge's part counting those it shares with each judge of a lower id), that judging's and
  theirs in its format, so a new judge (the highest id) computes its own parts alone;
- some judges of the pool (their judgings' marks put together): a result that reads only some judges
  (a drift) stays current while another judge's verdicts come;
- the pool's candidates alone (`sql/derived_pool_mark.sql`): a pool is replaced only whole.

A result computed from human labels too adds the labels' mark (`sql/derived_labels_mark.sql`). The
store keeps the frames; computing them is the audit's (audit.derived: the caller computes, then saves
here under the writer's lock). A result is Parquet bytes, so any polars frame round-trips with its types.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
from dataclasses import dataclass

import duckdb
import polars as pl

from . import _sql
from ._database import reader, transaction, writer
from .connection import find_pool

# what a result is computed from: 'verdicts' (cell runs, verdicts and attached files), 'labels' (those
# and the pool's human labels), 'pool' (the pool's candidates alone; an import of verdicts leaves them current)
BASES = ("verdicts", "labels", "pool")


@dataclass(frozen=True)
class Mark:
    """A fingerprint now: the pool's id, the fingerprint, how many verdicts it covers (candidates, for
    basis 'pool'), its attached files with their size and modification time on disk when it was
    taken, what it covers (`judges`: None for the whole pool; `judging`: the (judge, format) of a part)
    and where a result under it is stored (`part`: part_name(judge, format) for that judging's part
    of a result, '' for a whole result); `earlier`: a judging's mark that covers the judgings of the
    judges before it (by id) in its format too."""
    pool_id: int
    fingerprint: str
    n_verdicts: int
    attached: tuple[str, ...] = ()
    disk: str = ""
    basis: str = "verdicts"
    judges: tuple[str, ...] | None = None
    part: str = ""
    judging: tuple[str, str] | None = None
    earlier: bool = False

    def files_unchanged(self) -> bool:
        """Whether the attached files are on disk as when the mark was taken (no database read: a
        file rewritten in place changes no byte of the database)."""
        return _disk(self.attached) == self.disk


def params_json(params) -> str:
    """The canonical JSON of a result's arguments after the pool (tuples as lists)."""
    return json.dumps(list(params), sort_keys=True, default=str)


def _on_disk(path: str) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return "gone"
    return f"{st.st_size}:{st.st_mtime_ns}"


def _disk(paths) -> str:
    return ";".join(_on_disk(p) for p in paths)


def _check_basis(basis: str) -> None:
    if basis not in BASES:
        raise ValueError(f"basis: one of {BASES}, not {basis!r}")


def _labels(con, pool: int) -> str:
    return f"|labels {_sql.first(con, 'derived_labels_mark', pool_id=pool)[0]}"


def _pool_mark(con, pool: int, basis: str) -> Mark:
    if basis == "pool":
        mark, n = _sql.first(con, "derived_pool_mark", pool_id=pool)
        return Mark(pool, mark, int(n), basis=basis)
    mark, n = _sql.first(con, "derived_mark", pool_id=pool)
    paths = tuple(p for (p,) in _sql.rows(con, "attached_paths", pool_id=pool))
    disk = _disk(paths)
    if basis == "labels":         # a result computed from the human labels too moves with them
        mark += _labels(con, pool)
    return Mark(pool, f"{mark}|{disk}", int(n), paths, disk, basis)


def part_name(judge: str, fmt: str) -> str:
    """The name a judging's part of a result is stored under: its judge and format as a JSON list (no
    separator a name could hold)."""
    return json.dumps([judge, fmt], ensure_ascii=False)


def _judging_marks(con, pool: int, basis: str, earlier: bool = False) -> dict[str, Mark]:
    return MarksNow(con, pool).judgings(basis, earlier)


def _judging_marks_of(rows, pool: int, basis: str, labels: str, earlier: bool) -> dict[str, Mark]:
    """{part: mark} from derived_judging_marks.sql's rows (`labels`: the labels' mark, for basis 'labels')."""
    out, ids = {}, {}
    for judge, fmt, mark, n, paths, judge_id in rows:
        disk = _disk(paths)
        part = part_name(judge, fmt)
        out[part] = Mark(pool, f"{mark}{labels}|{disk}", int(n), tuple(paths), disk, basis, (judge,), part, (judge, fmt))
        ids[part] = judge_id
    return _with_earlier(out, ids) if earlier else out


def _with_earlier(marks: dict[str, Mark], ids: dict[str, int]) -> dict[str, Mark]:
    """Each judging's mark over its own and those of the judges before it (a lower id) in its format,
    hashed (the judges' marks in id order), with their attached files."""
    out = {}
    for part, mark in marks.items():
        judge_id, fmt = ids[part], mark.judging[1]
        covered = sorted((ids[p], m) for p, m in marks.items() if m.judging[1] == fmt and ids[p] <= judge_id)
        paths = tuple(p for _, m in covered for p in m.attached)
        text = ";".join(f"{i}={m.fingerprint}" for i, m in covered)
        out[part] = dataclasses.replace(mark, fingerprint=hashlib.sha256(text.encode()).hexdigest(), attached=paths,
                                        disk=_disk(paths), earlier=True)
    return out


def _judge_marks(con, pool: int, basis: str) -> dict[str, Mark]:
    """{judge: one mark over its judgings' marks} (a result that reads some judges whole)."""
    return _judge_marks_of(_judging_marks(con, pool, basis), pool, basis)


def _judge_marks_of(judgings: dict[str, Mark], pool: int, basis: str) -> dict[str, Mark]:
    by_judge: dict[str, list[Mark]] = {}
    for mark in judgings.values():
        by_judge.setdefault(mark.judging[0], []).append(mark)
    out = {}
    for judge, marks in by_judge.items():
        paths = tuple(p for m in marks for p in m.attached)
        out[judge] = Mark(pool, ";".join(f"{m.judging[1]}={m.fingerprint}" for m in marks),
                          sum(m.n_verdicts for m in marks), paths, _disk(paths), basis, (judge,))
    return out


def _of_judges(marks: dict[str, Mark], pool: int, basis: str, judges: tuple[str, ...]) -> Mark:
    """One mark over several judges' marks (a judge without verdicts in the pool marks as 'none')."""
    parts = [marks.get(j) for j in judges]
    paths = tuple(p for m in parts if m for p in m.attached)
    return Mark(pool, ";".join(f"{j}={m.fingerprint if m else 'none'}" for j, m in zip(judges, parts)),
                sum(m.n_verdicts for m in parts if m), paths, _disk(paths), basis, tuple(judges))


class MarksNow:
    """Every fingerprint of one pool now, each query run once on one connection (a refresh takes them
    at its start, a save of several results once in its transaction): the judgings' marks (one read of
    the verdicts for every basis), the labels' mark, the whole pool's mark (one more) and the candidates'."""

    def __init__(self, con, pool: int):
        self._con, self.pool_id, self._got = con, pool, {}

    def _once(self, key, make):
        if key not in self._got:
            self._got[key] = make()
        return self._got[key]

    def _labels(self) -> str:
        return self._once("labels", lambda: _labels(self._con, self.pool_id))

    def _judging_rows(self) -> list:
        return self._once("judging rows", lambda: _sql.rows(self._con, "derived_judging_marks", pool_id=self.pool_id))

    def judgings(self, basis: str, earlier: bool = False) -> dict[str, Mark]:
        """derived_judging_marks' {part: mark}."""
        return self._once(("judgings", basis, earlier), lambda: _judging_marks_of(
            self._judging_rows(), self.pool_id, basis, self._labels() if basis == "labels" else "", earlier))

    def whole(self, basis: str, judges: tuple[str, ...] | None = None) -> Mark:
        """derived_mark's mark: of the whole pool, or (`judges`) of those judges alone."""
        if judges is not None and basis != "pool":
            by_judge = self._once(("judges", basis), lambda: _judge_marks_of(self.judgings(basis), self.pool_id, basis))
            return _of_judges(by_judge, self.pool_id, basis, tuple(judges))
        if basis == "pool":
            return self._once("pool", lambda: _pool_mark(self._con, self.pool_id, "pool"))
        verdicts = self._once("verdicts", lambda: _pool_mark(self._con, self.pool_id, "verdicts"))
        if basis == "verdicts":
            return verdicts
        mark, disk = verdicts.fingerprint[:-len(verdicts.disk) - 1], verdicts.disk
        return dataclasses.replace(verdicts, fingerprint=f"{mark}{self._labels()}|{disk}", basis=basis)

    def of(self, state: Mark) -> str | None:
        """The fingerprint now of what `state` covers (None: that judging has no cell run now)."""
        if state.judges is None or state.basis == "pool":
            return self.whole(state.basis).fingerprint
        if not state.part:
            return self.whole(state.basis, state.judges).fingerprint
        marks = self.judgings(state.basis, state.earlier)
        return marks[state.part].fingerprint if state.part in marks else None


def derived_marks_now(db, pool: str) -> MarksNow | None:
    """Every fingerprint of the pool now, read on one connection as they are asked for and kept (a
    refresh's: what it computes under); None as derived_mark."""
    def take(con, pid):
        now = MarksNow(con, pid)
        now.judgings("verdicts")         # the verdicts read now, while the connection is open
        now.whole("verdicts")
        now._labels()
        now.whole("pool")
        now._con = None                  # what is asked later is made from what was read
        return now
    return _within(db, pool, take)


def _within(db, pool: str, read):
    """read(con, pool_id) on a reader, or None when there is no such pool or the database predates
    the derived results (the caller computes without storing, and the audit names the problem)."""
    with reader(db) as con:
        pid = find_pool(con, pool)
        if pid is None:
            return None
        try:
            _sql.first(con, "derived_timing", pool_id=pid, name="")
            return read(con, pid)
        except duckdb.CatalogException:
            return None


def derived_mark(db, pool: str, basis: str = "verdicts", judges: tuple[str, ...] | None = None) -> Mark | None:
    """The fingerprint now over what `basis` names (BASES), of the whole pool or (`judges`) of those
    judges alone; None when there is no such pool or the database predates the derived results."""
    _check_basis(basis)
    if judges is None or basis == "pool":
        return _within(db, pool, lambda con, pid: _pool_mark(con, pid, basis))
    return _within(db, pool, lambda con, pid: _of_judges(_judge_marks(con, pid, basis), pid, basis, tuple(judges)))


def derived_judging_marks(db, pool: str, basis: str = "verdicts", earlier: bool = False) -> dict[str, Mark] | None:
    """{part name: the fingerprint now of that judging's part} for every judging of the pool, in judge
    then format order (`earlier`: each over the judges before it in its format too, Mark.earlier); None
    as derived_mark."""
    _check_basis(basis)
    return _within(db, pool, lambda con, pid: _judging_marks(con, pid, basis, earlier))


def derived_parts(db, marks: list[Mark], name: str, params=()
                  ) -> tuple[dict[str, pl.DataFrame | None], tuple[float, int] | None]:
    """({part: frame}, timing) on one connection: for each mark (of one pool), the stored result `name`
    (or its part `mark.part`) for `params` when it was computed under that mark's fingerprint, else
    None; and the latest computation of `name` for the pool, any parameters and part, as (seconds,
    n_verdicts) (None before any): the next one's estimate."""
    out = {}
    with reader(db) as con:
        for mark in marks:
            row = _sql.first(con, "derived_result", pool_id=mark.pool_id, name=name,
                             params_json=params_json(params), part=mark.part)
            out[mark.part] = pl.read_parquet(io.BytesIO(row[1])) if row is not None and row[0] == mark.fingerprint \
                else None
        timing = _sql.first(con, "derived_timing", pool_id=marks[0].pool_id, name=name) if marks else None
    return out, (float(timing[0]), int(timing[1])) if timing else None


def derived_result(db, mark: Mark, name: str, params=()
                   ) -> tuple[pl.DataFrame | None, tuple[float, int] | None]:
    """(frame, timing) of derived_parts for one mark."""
    parts, timing = derived_parts(db, [mark], name, params)
    return parts[mark.part], timing


def save_derived(db, state: Mark, name: str, params, frame: pl.DataFrame, seconds: float) -> bool:
    """Store `frame` as the result `name` (its part `state.part`) for `params`, computed from what
    `state` fingerprinted, in one transaction under the writer's lock; whether it was stored. It is
    not when the fingerprint moved meanwhile (a write landed while it was computed: the next reader
    computes it anew), the pool was deleted, or the database cannot be written (the result is shown
    all the same)."""
    return save_derived_parts(db, name, params, [(state, frame, seconds)])[0]


def save_derived_parts(db, name: str, params, parts: list[tuple[Mark, pl.DataFrame, float]]) -> list[bool]:
    """save_derived for the parts of one computation, [(mark, frame, seconds)] of one pool, on one
    writer's connection in one transaction (the fingerprints now read once): whether each was stored."""
    return save_derived_many(db, [(name, params, parts)])[0]


def save_derived_many(db, results: list[tuple[str, object, list[tuple[Mark, pl.DataFrame, float]]]]
                      ) -> list[list[bool]]:
    """save_derived_parts for several results of one pool, [(name, params, parts)], in one transaction
    on one writer's connection, the fingerprints now read once for all (a refresh stores what it
    computed together): whether each part was stored."""
    flat = [(name, params, state, frame, seconds) for name, params, parts in results for state, frame, seconds in parts]
    if not flat:
        return [[] for _ in results]
    payloads = []
    for *_, frame, _ in flat:
        buf = io.BytesIO()
        frame.write_parquet(buf, compression="zstd")
        payloads.append(buf.getvalue())
    try:
        with writer(db) as con, transaction(con):
            if _sql.first(con, "pool_instance", pool_id=flat[0][2].pool_id) is None:
                stored = [False] * len(flat)
            else:
                now = MarksNow(con, flat[0][2].pool_id)
                stored = []
                for (name, params, state, _, seconds), payload in zip(flat, payloads):
                    ok = now.of(state) == state.fingerprint
                    if ok:
                        _sql.script(con, "save_derived", pool_id=state.pool_id, name=name,
                                    params_json=params_json(params), part=state.part, fingerprint=state.fingerprint,
                                    seconds=float(seconds), n_verdicts=state.n_verdicts, payload=payload)
                    stored.append(ok)
    except (duckdb.IOException, duckdb.ConnectionException, OSError):
        stored = [False] * len(flat)  # a database the server may read but not write (or held past the lock timeout)
    out, i = [], 0
    for _, _, parts in results:
        out.append(stored[i:i + len(parts)])
        i += len(parts)
    return out


def derived_fingerprints(db, marks: list[Mark], name: str, params=()) -> dict[str, bool]:
    """{part: whether the result `name` for `params` is stored under that mark's fingerprint} for the
    marks (of one pool), in one query that reads no stored frame (what a refresh asks)."""
    if not marks:
        return {}
    with reader(db) as con:
        stored = dict(_sql.rows(con, "derived_fingerprints", pool_id=marks[0].pool_id, name=name,
                                params_json=params_json(params)))
    return {m.part: stored.get(m.part) == m.fingerprint for m in marks}
