"""The runs panel every page that starts background work shares (Score, Train, Evaluate, Probes):
the runs of one kind read from the database on every refresh, so a reload or a second tab shows the
same runs; a progress bar with rate and ETA, the error and log tail of a failed run, Stop."""

from __future__ import annotations

import streamlit as st

from app import data
from app.run_card import outcome_text, phase_text, run_title

ICONS = {"queued": ":material/schedule:", "running": ":material/progress_activity:",
         "finished": ":material/check_circle:", "failed": ":material/error:", "cancelled": ":material/cancel:"}


def _progress(row: dict) -> None:
    p = row["progress"] or {}
    total, done = p.get("total"), p.get("done")
    if total:
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
        if row["status"] in ("queued", "running"):
            caption = "Stop & save" if row.get("kind") == "train" else "Stop"    # a stopped training keeps its adapter
            if st.button(caption, key=f"{key_prefix}-stop-{row['run_id']}", icon=":material/stop:"):
                data.cancel_run(row["run_id"])
                st.toast(f"Asked run {row['run_id']} to stop")
        with st.expander("Config and log"):
            st.json(row["config"] or {}, expanded=False)
            tail = data.run_log(row["run_id"])
            st.code(tail or "(no output yet)", language=None)
        if row["status"] == "failed" and row["log_path"]:
            st.caption("Log tail of the failed run:")
            st.code(data.run_log(row["run_id"], 1500) or "(empty log)", language=None)


ENDED = ("finished", "failed", "cancelled")


def newly_ended(seen: dict[int, str] | None, rows: list[dict]) -> bool:
    """Whether a run ended since the statuses `seen` at the last refresh (None: the first look):
    one seen queued or running that is now over, or one not seen before that is already over."""
    if seen is None:
        return False
    return any(r["status"] in ENDED and seen.get(r["run_id"]) not in ENDED for r in rows)


def runs_panel(kind: str, pool: str | None = None, limit: int = 5, refresh_s: float = 1.0,
               rerun_when_ended: bool = False) -> None:
    """The latest runs of `kind` (for `pool`), newest first, refreshed every refresh_s seconds.
    rerun_when_ended: rerun the whole page when one of them ends, so the parts of the page that
    read its results (Evaluate's study) show them without a manual refresh."""
    memory = f"runs-seen-{kind}-{pool}"

    @st.fragment(run_every=refresh_s)
    def panel() -> None:
        rows = data.runs_of(kind, pool)[::-1]
        if rerun_when_ended:
            ended = newly_ended(st.session_state.get(memory), rows)
            st.session_state[memory] = {r["run_id"]: r["status"] for r in rows}
            if ended:
                st.rerun(scope="app")
        if not rows:
            st.caption(f"No {kind} runs yet.")
            return
        for row in rows[:limit]:
            show_run(row, kind)
    panel()
