"""The Curate & Train page's Distil section: a student classifier trained on a teacher cell's verdicts
(a background `judgeaudit distil` run, its folder the run's own beside the database), its model card's
held-out agreement with the teacher, the student scored on the pool as a judge of its own (a background
`judgeaudit score --judge distilled:DIR` run), and its curation against the teacher's: the Jaccard of
the two top-share selections, and each one's levels, D2 and top-tied share from the audit's cells."""

from __future__ import annotations

import polars as pl
import streamlit as st

from app import data, tables, url_state
from app.cli import request_for
from app.run_card import distil_card
from app.runs_panel import runs_panel
from app.views.curate.distil_apply import apply_section
from ingest import UserError
from ingest.runs import run_key
from train.distil import humans_text, interval_text

COMPARATIVE = ("anchored", "tournament")    # the built-in formats a student cannot be trained on
FEATURES = {"hashing": "hashed word n-grams (fast, no model)", "model": "the bundled model's hidden states (slow)"}


def teacher_cells(cells: pl.DataFrame) -> list[str]:
    """'judge / format / decoding' of each scored cell a student can learn from: a pointwise format,
    a judge that is not itself a student; sorted (text, as the address keeps it)."""
    if cells.height == 0:
        return []
    keep = cells.filter(~pl.col("format").is_in(COMPARATIVE) & ~pl.col("judge").str.starts_with("distilled-"))
    return [" / ".join(c) for c in sorted(set(keep.select("judge", "format", "decoding").iter_rows()))]


def distil_request(pool: str, cell: str, features: str, held_out: float):
    """The `judgeaudit distil` request of the form (no --out: the run's own folder); cell as
    teacher_cells writes it (a judge's name may hold ' / ': the format and decoding are the last two)."""
    judge, fmt, decoding = cell.rsplit(" / ", 2)
    return request_for("distil", pool=pool, judge=judge, fmt=fmt, decoding=decoding, features=features,
                       held_out=float(held_out))


def student_name(card: dict) -> str:
    """The judge name `distilled:DIR` stores the student's verdicts under (its model files' hash)."""
    return f"distilled-{card['sha256'][:12]}"


def score_request(pool: str, card: dict):
    """The `judgeaudit score` request that scores the pool with the student, in its teacher's format."""
    return request_for("score", pool=pool, judge_spec=f"distilled:{card['folder']}",
                       formats=[card["teacher"]["format"]])


def _num(x) -> str:
    return "–" if x is None else f"{x:.3f}"


def card_sentence(card: dict) -> str:
    """The card's held-out agreement with the teacher, with its n and 95% interval."""
    a, d = card["agreement_held_out"], card["data"]
    return (f"Held-out agreement with the teacher on {a['n']} candidates of {d['held_out_prompts']} held-out "
            f"prompts: exact {interval_text(a['exact'], a.get('exact_lo'), a.get('exact_hi'))}, mean absolute "
            f"difference {_num(a['mean_abs_diff'])} of the scale, Spearman {_num(a['spearman'])} (trained on "
            f"{d['train_candidates']} candidates; {card['model']}).")


def humans_lines(card: dict) -> str:
    """The card's held-out agreement with the human labels (accept and pair), the student's beside the
    teacher's, with intervals; 'too few labels' with n where a kind has fewer than audit.MIN_N items."""
    return "\n".join(f"- {line[0].upper()}{line[1:]}" for line in humans_text(card.get("humans_held_out")))


def _run_label(row: dict) -> str:
    options = (row.get("config") or {}).get("options") or {}
    return f"run {row['run_id']}: {options.get('judge', '?')} / {options.get('fmt', '?')} ({options.get('features', '?')})"


def distil_section(pool: str, scores: pl.DataFrame) -> None:
    """The section: the form, the distil runs, then the chosen finished run's student."""
    st.subheader("Distil")
    st.caption("Trains a small classifier (the student) on one cell's verdicts, as judges are distilled to "
               "score at web scale; a share of the prompts is held out to measure its agreement with its "
               "teacher. Scored on the pool, the student is a judge of its own that every page audits.")
    cells = teacher_cells(scores)
    if not cells:
        st.info("No pointwise cell scored in this pool: score it first to distil a judge.")
        return
    with st.form("distil"):     # each field kept in the address (app/url_state.py)
        if st.session_state.get(url_state.DISTIL_CELL) not in (None, *cells):     # a cell of another pool
            del st.session_state[url_state.DISTIL_CELL]
        a, b, c = st.columns([2, 2, 1])
        cell = a.selectbox("Teacher (judge / format / decoding)", cells, key=url_state.DISTIL_CELL, bind="query-params")
        features = b.radio("Features", list(FEATURES), format_func=FEATURES.get, key=url_state.DISTIL_FEATURES,
                           bind="query-params")
        share = c.slider("Held-out share", 0.05, 0.5, 0.2, 0.05, key=url_state.DISTIL_SHARE, bind="query-params")
        go = st.form_submit_button("Launch distil", type="primary", icon=":material/school:")
    if go:
        try:
            request = distil_request(pool, cell, features, share)
            key = run_key("distil", pool, request.options["judge"], request.options["fmt"])   # the run's own key
            st.success(f"Started distil run {data.launch_run(request, pool=pool, key=key)}.")
        except UserError as exc:
            st.error(str(exc))
    runs_panel("distil", pool)
    done = {r["run_id"]: r for r in data.runs_of("distil", pool)[::-1] if r["status"] == "finished"}
    if not done:
        return
    if st.session_state.get(url_state.DISTIL_RUN) not in (None, *done):
        del st.session_state[url_state.DISTIL_RUN]
    run_id = st.selectbox("Student of", list(done), format_func=lambda i: _run_label(done[i]),
                          key=url_state.DISTIL_RUN, bind="query-params")
    card = distil_card(done[run_id])
    if card is None:
        st.warning(f"Run {run_id} left no model card.")
        return
    student(pool, card, scores)


def student(pool: str, card: dict, scores: pl.DataFrame) -> None:
    """One student: its card, the button that scores the pool with it, and, once scored, its
    curation against the teacher's."""
    name, teacher = student_name(card), card["teacher"]
    st.markdown(f"**{name}**, a student of {teacher['judge']} / {teacher['format']} / {teacher['decoding']}")
    st.markdown(card_sentence(card))
    st.markdown(humans_lines(card))
    st.caption("Intervals: 95% Wilson score intervals, the held-out candidates (or labelled items) taken as "
               "independent. A candidate is accepted when its normalised score is ½ or more; of a pair, the "
               "higher score wins.")
    st.caption(f"Threshold rule: {card['threshold_rule']}. Folder: {card['folder']}")
    scored = scores.filter((pl.col("judge") == name) & (pl.col("format") == teacher["format"])).height > 0
    if st.button("Score the pool with the student" if not scored else "Score the pool with the student again",
                 key=f"distil-score-{name}"):
        try:
            run_id = data.launch_run(score_request(pool, card), pool=pool, key=data.score_key(pool, name))
            st.success(f"Started score run {run_id}: its progress shows on the Score page; the student is then "
                       f"the judge {name}.")
        except UserError as exc:
            st.error(str(exc))
    apply_section(pool, card, name)
    if not scored:
        return
    compare_curations(pool, card, name)


def compare_curations(pool: str, card: dict, name: str) -> None:
    """The two selections' overlap at each rate, and each cell's levels, D2 and top-tied share."""
    teacher = card["teacher"]
    st.markdown("**The student's curation against the teacher's**")
    overlap = data.result("student_overlap", pool, teacher["judge"], name, teacher["format"], teacher["decoding"])
    tables.show(overlap.select("rate", pl.col("n_teacher").alias("teacher keeps"),
                               pl.col("n_student").alias("student keeps"), pl.col("n_both").alias("both keep"),
                               "jaccard"))
    cells = data.result("cells", pool).filter(pl.col("format") == teacher["format"])
    both = pl.concat([cells.filter((pl.col("judge") == teacher["judge"]) & (pl.col("decoding") == teacher["decoding"])),
                      cells.filter(pl.col("judge") == name)], how="vertical_relaxed")
    tables.show(both.select("judge", "format", "decoding", "distinct", "d2", "top_tied", "n_top_prompts"))
