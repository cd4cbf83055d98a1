"""The runs panel every page that starts background work shares (Score, Train, Evaluate, Probes):
the runs of one kind read from the database once a page run, so a reload or a second tab shows the
same runs; a progress bar with rate and ETA (or the loading phase with its expected time), the error
and log tail of a failed run, Stop.

Idle is nearly free: a page looks at its runs only while a run it shows is alive, and then only at
the run's live file (ingest.runs.live_state), never the database, so the look and the run's writes
never wait on each other. It looks every second while the run is young and backs off to every 5 s
as it ages (`poll_every`); when a run ends (its process gone, or its file quiet) the whole page runs
again, reading the database, so that what the run made shows without a reload. While none is alive,
a runs panel looks every WATCH_S seconds at the folder that holds the runs' folders (one listing,
no database: ingest.runs.started_since): a run of its kind started since, from a terminal or
another tab, is drawn from the row its folder keeps and followed as above, without a database read
while it writes there.
"""

from __future__ import annotations

import time
from datetime import datetime, timezone

import streamlit as st

from app import data
from ingest.runs import newest_run_id, runs_dir, started_since
from app.run_card import loading_text, outcome_text, phase_text, run_title, stored_time

ICONS = {"queued": ":material/schedule:", "running": ":material/progress_activity:",
         "finished": ":material/check_circle:", "failed": ":material/error:", "cancelled": ":material/cancel:"}
LIVE = ("queued", "running")
# how often a page looks at a live run, by the age of its youngest live run: (younger than, every) s
BACKOFF = ((30.0, 1.0), (120.0, 2.0))
SLOWEST_S = 5.0
RECHECK_S = 30.0        # a run whose file asks for the database is read there again at most this often
PACE_S = 10.0           # how often the pace of the looks is set again while a run is alive
WATCH_S = 15.0          # while none is alive, how often a runs panel looks for a run started elsewhere


def poll_every(rows: list[dict], now: datetime | None = None) -> float | None:
    """Seconds between two looks at these runs: None when none is alive (the page never reruns by
    itself); else 1 s while the youngest live run is under 30 s old, 2 s under 2 min, then 5 s."""
    live = [r for r in rows if r.get("status") in LIVE]
    if not live:
        return None
    now = now or datetime.now(timezone.utc).replace(tzinfo=None)
    starts = [stored_time(r.get("started_at") or r.get("created_at")) for r in live]
    age = min(((now - s).total_seconds() for s in starts if s is not None), default=0.0)
    return next((every for under, every in BACKOFF if age < under), SLOWEST_S)


def read_again(shown: list[dict], rechecked: dict[int, float], now: float) -> bool:
    """Whether the page should run again and read the database, given the runs as their live files
    have them (`recheck` set where one ended and its process is gone, or its file went quiet): for
    such a run not rechecked in the last RECHECK_S seconds (`rechecked`, run id -> when; updated here)."""
    due = [r["run_id"] for r in shown if r.get("recheck") and now - rechecked.get(r["run_id"], -RECHECK_S) >= RECHECK_S]
    for run_id in due:
        rechecked[run_id] = now
    return bool(due)


def follow(rows: list[dict], draw, key: str, watch: tuple[str, str | None, int] | None = None) -> None:
    """Draw `rows` (runs read from the database in this page run) with draw(rows), looking again at
    their live files while one is alive, at the pace poll_every gives (read_again: the page runs again
    when one ended). The pace is set by an outer look every PACE_S seconds, which defines the inner one
    anew: a fragment's interval is fixed when it is defined, and running the whole page to change it
    would read the database in the middle of the run. `watch` (kind, pool, the newest run id of that
    kind before the rows were read): while none is alive, a look every WATCH_S seconds draws and follows,
    above the rows, the runs of that kind and pool started since, as their folders keep them."""
    alive = poll_every(rows) is not None
    if watch and not alive:
        kind, pool, newest = watch

        shown = {r["run_id"] for r in rows}      # one recorded as the rows were read is among them already

        @st.fragment(run_every=WATCH_S)
        def started_elsewhere() -> None:
            new = [r for r in started_since(runs_dir(data.database()), kind, newest, pool) if r["run_id"] not in shown]
            if new:
                follow(new, draw, f"{key}-since")
        started_elsewhere()

    @st.fragment(run_every=PACE_S if alive else None)
    def paced() -> None:
        every = poll_every(rows)

        @st.fragment(run_every=every)
        def look() -> None:
            shown = data.live_runs(rows) if every else rows
            if every and read_again(shown, st.session_state.setdefault(f"runs-rechecked-{key}", {}),
                                    time.monotonic()):
                st.rerun(scope="app")
            draw(shown)
        look()
    paced()


def _progress(row: dict) -> None:
    p = row["progress"] or {}
    total, done = p.get("total"), p.get("done")
    if p.get("phase") == "loading" and row["status"] == "running":
        st.progress(0.0, text=loading_text(p))
    elif total:
        eta = p.get("eta_s")
        text = (f"{p['phase']} · " if p.get("phase") else "") + f"{done}/{total}" + \
            (f" · {p['rate']:.1f}/s" if p.get("rate") else "") + \
            (f" · ETA {eta:.0f} s" if eta is not None and row["status"] == "running" else "")
        if "failed" in p:
            text += f" · failed {p['failed']} · unparsed {p.get('unparsed', 0)}"
        st.progress(min(done / total, 1.0), text=text)
        if p.get("failures"):
            st.caption("Failed calls, with their reasons:")
            st.code("\n".join(sorted(set(map(str, p["failures"])))), language=None)
    elif row["status"] == "running":
        st.caption(phase_text(p, row.get("started_at")) if p.get("phase") else "Starting (loading the judge or the model)...")


def show_run(row: dict, key_prefix: str) -> None:
    head = f"Run {row['run_id']} · {row['status']} · started {row['started_at'] or row['created_at']}"
    with st.container(border=True):
        st.markdown(f"{ICONS.get(row['status'], '')} **{head}**")
        st.caption(run_title(row))          # what it does: the judge and formats, or the curation trained on
        _progress(row)
        if row["error"]:
            st.error(row["error"])
        if row.get("kind") == "train" and row["status"] in ("finished", "cancelled"):
            outcome = data.train_outcome(row)
            if outcome:
                st.markdown(outcome_text(outcome))
                st.page_link("views/evaluate/page.py", label="Evaluate this adapter", icon=":material/leaderboard:")
        if row["status"] in LIVE:
            caption = "Stop & save" if row.get("kind") == "train" else "Stop"    # a stopped training keeps its adapter
            if st.button(caption, key=f"{key_prefix}-stop-{row['run_id']}", icon=":material/stop:"):
                data.cancel_run(row["run_id"])
                st.toast(f"Asked run {row['run_id']} to stop")
        with st.expander("Config and log"):
            st.json(row["config"] or {}, expanded=False)
            st.code(data.run_log(row) or "(no output yet)", language=None)
        if row["status"] == "failed" and row["log_path"]:
            st.caption("Log tail of the failed run:")
            st.code(data.run_log(row, 1500) or "(empty log)", language=None)


def runs_panel(kind: str, pool: str | None = None, limit: int = 5) -> None:
    """The latest runs of `kind` (for `pool`), newest first, followed while one is alive (follow);
    when one ends the page runs again, so the parts of it that read the run's results show them; while
    none is alive, a run of `kind` started elsewhere shows and is followed without a reload (follow's watch)."""
    newest = newest_run_id(runs_dir(data.database()), kind)     # before the rows are read: none is missed
    rows = data.runs_of(kind, pool)[::-1][:limit]

    def draw(shown: list[dict]) -> None:
        if not shown:
            st.caption(f"No {kind} runs yet.")
        for row in shown:
            show_run(row, kind)
    follow(rows, draw, f"{kind}-{pool}", watch=(kind, pool, newest))
