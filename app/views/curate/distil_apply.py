"""The Distil section's last part: a student applied to Parquet shards as a background `judgeaudit
apply` run (its progress, log and Stop in the runs panel), its output shards then attached to the
page's pool, and what the finished runs wrote."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from app import data, url_state
from app.cli import request_for
from app.runs_panel import runs_panel
from ingest import UserError
from train.apply import apply_key


def default_out(card: dict) -> str:
    """Where a student's applied verdicts go when the form's output folder is left empty."""
    return str(Path(card["folder"]) / "applied")


def apply_request(pool: str, card: dict, shards: str, out: str):
    """The `judgeaudit apply` request of the form: the student's folder, the shards' glob, the output
    folder (empty: default_out), and the page's pool to attach the output to once every shard is scored."""
    if not shards.strip():
        raise UserError("Shards: a glob of Parquet files with the pool file's columns, e.g. /data/shards/**/*.parquet")
    return request_for("apply", model_dir=card["folder"], shards=shards.strip(), out=out.strip() or default_out(card),
                       attach=pool)


def outcome_text(result: dict) -> str:
    """A finished (or stopped) apply run's outcome in a sentence."""
    rate = f" at {result['rows_per_s']:,.0f} candidates/s" if result.get("rows_per_s") else ""
    said = (f"{result['scored']} of {result['shards']} shards scored ({result['rows']:,} candidates{rate}), "
            f"{result['skipped']} already scored")
    if result.get("stopped"):
        return said + "; stopped on request (run it again to score the rest)."
    if result.get("attached"):
        a = result["attached"]
        return said + f"; attached to pool {a['pool']}: {a['files']} files, {a['rows']:,} verdicts."
    return said + "."


def output_shards(result: dict, shown: int = 10) -> list[str]:
    """The output folder's verdict shards, as paths under it (the first `shown`)."""
    out = Path(result["out"])
    return sorted(str(p.relative_to(out)) for p in out.rglob("*.parquet"))[:shown] if out.is_dir() else []


def apply_section(pool: str, card: dict, name: str) -> None:
    st.markdown("**Apply the student to Parquet shards**")
    st.caption("Scores Parquet shards of pool rows (prompt_id, prompt, candidate_id, response) where they lie, "
               "one verdict shard per input shard, as a background `judgeaudit apply` run; run again on the same "
               "output folder, it scores only the shards not yet written. Once every shard is scored, the "
               f"output is attached to pool {pool} (this replaces the pool's attached files), and the student "
               f"is the judge {name} there.")
    with st.form(f"apply-{name}"):
        shards = st.text_input("Shards (a glob)", placeholder="/data/shards/**/*.parquet", key=url_state.DISTIL_SHARDS,
                               bind="query-params")
        out = st.text_input("Output folder", placeholder=default_out(card), key=url_state.DISTIL_OUT,
                            bind="query-params", help="empty: a folder `applied` in the student's folder")
        go = st.form_submit_button("Apply", icon=":material/play_arrow:")
    if go:
        try:
            request = apply_request(pool, card, shards, out)
            run_id = data.launch_run(request, pool=pool, key=apply_key(request.options["out"]))
            st.success(f"Started apply run {run_id}.")
        except UserError as exc:
            st.error(str(exc))
    runs_panel("apply", pool)
    done = [r for r in data.runs_of("apply", pool) if r["status"] in ("finished", "cancelled")
            and isinstance((r.get("progress") or {}).get("result"), dict)]
    if done:
        result = done[-1]["progress"]["result"]
        st.markdown(f"Apply run {done[-1]['run_id']}: {outcome_text(result)}")
        st.caption(f"Output shards under {result['out']}:")
        st.code("\n".join(output_shards(result)) or "(none)", language=None)
