"""Juries (docs/command-line.md#judgeaudit-jury): a named panel of judges of a pool whose
verdict on a call key (format, decoding, prompt, slot A, slot B) is the vote over its members' parsed
sample-0 values: `mean`, `median` or `majority`.

How it is kept: a jury is a judge of its own (provider `jury`; its identity is the vote and the
members, so a name stands for one panel), and its verdicts are rows of `verdicts`: its members' votes
combined in SQL (sql/jury_insert_verdicts.sql), one cell run of source `jury` per (format,
decoding). Every cell-wise command (audit, bias, rank, calibrate, consistency, curate, the report)
then reads a jury as it reads any judge, with no code of its own. The rows are not calls: raw,
endpoint, tokens and latency stay null, and `export-verdicts` leaves them out.

When they are refreshed: `jury` stores them; a unit of work that finishes cell runs (scoring, a
verdict or batch import, an attach, a batch export) then refreshes the juries that have their judges
among their members, in the same transaction (`refresh_after`, the store's `Writing.refresh_juries_of`);
and `refresh_juries` (called by `jury` and the demo) rewrites a jury whose members' verdicts moved
since (a fingerprint of their latest cell run, calls and parsed calls, `juries.mark`). A member's run
killed before it finished leaves the jury one refresh behind until the next one.
"""

from __future__ import annotations

import json
import os

from .._errors import UserError
from . import _sql
from ._attached import ensure_source
from ._database import next_id, reader, transaction, writer
from .connection import pool_id

VOTES = ("mean", "median", "majority")
PROVIDER = "jury"


def _refresh(con, pool: int, jury: int, force: bool = False) -> bool:
    """Derive the jury's verdicts anew when its members' verdicts moved (or `force`); whether it did.
    The members' calls are read through the connection's verdict_source (stored and attached rows:
    _attached.ensure_source makes it first)."""
    mark = _sql.first(con, "jury_mark", pool_id=pool, judge_id=jury)[0]
    stored = _sql.first(con, "jury_stored_mark", pool_id=pool, judge_id=jury)
    if stored is None or (not force and stored[0] == mark):
        return False
    vote, members = next((r[2], r[3]) for r in _sql.rows(con, "juries_of_pool", pool_id=pool) if r[0] == jury)
    _sql.script(con, "jury_clear_verdicts", pool_id=pool, judge_id=jury)
    for format_id, decoding in _sql.rows(con, "jury_cells", pool_id=pool, judge_id=jury):
        cell_run_id = next_id(con, "cell_runs")
        _sql.execute(con, "insert_cell_run", cell_run_id=cell_run_id, pool_id=pool, judge_id=jury,
                     format_id=format_id, source="jury", source_file=None, template=None, template_hash=None,
                     decoding_settings=json.dumps({"mode": decoding, "vote": vote, "members": list(members)}),
                     judge_model=None, schedule=None, seed=None, notes=f"{vote} of {', '.join(members)}",
                     run_id=None)
        _sql.execute(con, "jury_insert_verdicts", cell_run_id=cell_run_id, pool_id=pool, judge_id=jury,
                     format_id=format_id, decoding=decoding, vote=vote)
        _sql.execute(con, "finish_cell_run", status="finished", judge_model=None, cell_run_id=cell_run_id)
    _sql.execute(con, "jury_refreshed", mark=mark, pool_id=pool, judge_id=jury)
    return True


def refresh_after(con, cell_run_id: int) -> None:
    """Refresh the juries that have the judge of a finished cell run among their members, where their
    members' verdicts moved (in the caller's transaction)."""
    found = _sql.rows(con, "juries_of_member", cell_run_id=cell_run_id)
    if not found:
        return
    from .connection import verdict_source
    broken = verdict_source(con)      # a pool whose attached files changed waits for its next refresh
    for pool, jury in found:
        if pool not in broken:
            _refresh(con, pool, jury)


def save_jury(db: str | os.PathLike | None, pool: str, name: str, judges: list[str], vote: str = "mean") -> dict:
    """Store the jury `name` of `pool` (members `judges`, in that order; each a judge with verdicts in
    the pool, none a jury) and store its verdicts: its members' votes combined; {name, vote, members,
    n_verdicts, n_parsed}. The same name again with the same members and vote refreshes it; a name
    that already stands for another judge or panel is refused."""
    if vote not in VOTES:
        raise UserError(f"--vote {vote!r}: one of {', '.join(VOTES)}")
    members = list(dict.fromkeys(j.strip() for j in judges if j.strip()))
    if len(members) < 2:
        raise UserError("--judges: a jury needs at least two different judges (J1,J2[,...])")
    if name in members:
        raise UserError(f"--name {name!r}: a jury cannot be one of its own members")
    from ._judges import ensure_judge, judge_identity
    with writer(db) as con, transaction(con):
        pid = pool_id(con, pool)
        ensure_source(con, pid)
        found = {r[0]: (r[1], r[2]) for r in _sql.rows(con, "jury_pool_judges", names=members, pool_id=pid)}
        missing = [m for m in members if m not in found]
        if missing:
            raise UserError(f"--judges: no verdicts of {', '.join(map(repr, missing))} in pool '{pool}' "
                            "(a member must be a judge already run on the pool)")
        nested = [m for m in members if found[m][1] == PROVIDER]
        if nested:
            raise UserError(f"--judges: {', '.join(map(repr, nested))} is a jury; list its members instead")
        identity = judge_identity(PROVIDER, params={"vote": vote, "members": members})
        jury = ensure_judge(con, name, PROVIDER, settings={"vote": vote, "members": members}, identity=identity)
        _sql.script(con, "jury_delete", pool_id=pid, judge_id=jury)
        _sql.execute(con, "jury_insert", pool_id=pid, judge_id=jury, vote=vote)
        for position, member in enumerate(members):
            _sql.execute(con, "jury_insert_member", pool_id=pid, judge_id=jury, member_id=found[member][0],
                         position=position)
        _refresh(con, pid, jury, force=True)
        n, parsed = _sql.first(con, "jury_counts", pool_id=pid, judge_id=jury)
    return {"name": name, "vote": vote, "members": members, "n_verdicts": n, "n_parsed": parsed}


def refresh_juries(db: str | os.PathLike | None, pool: str) -> list[str]:
    """Refresh every jury of the pool whose members' verdicts moved since; the names refreshed."""
    with writer(db) as con, transaction(con):
        pid = pool_id(con, pool)
        ensure_source(con, pid)
        return [r[1] for r in _sql.rows(con, "juries_of_pool", pool_id=pid) if _refresh(con, pid, r[0])]


def jury_names(db: str | os.PathLike | None) -> set[tuple[str, str]]:
    """(pool, jury) of every jury stored (an empty set before schema 15)."""
    with reader(db) as con:
        if not _sql.rows(con, "has_jury_table"):
            return set()
        return {(pool, jury) for pool, jury in _sql.rows(con, "jury_names")}
