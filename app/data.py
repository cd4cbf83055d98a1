"""The dashboard's only caching layer: st.cache_data wrappers around audit functions, keyed by
the database file's path and modification time, so a new import or scoring run (from the CLI too)
shows up without a restart. No DuckDB connection outlives a call."""

from __future__ import annotations

import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

import streamlit as st

import audit
from ingest import UserError, file_stem, inside, safe_name  # noqa: F401  (file_stem: the Report page)
from ingest.runs import run_key

from app.database_state import db_file, db_state  # noqa: F401  (pages read both from here)


@st.cache_resource(show_spinner="Preparing the database (the bundled demo on first launch)...")
def ensure_demo(path: str) -> list[str]:
    """Upgrade the schema and seed an empty database with the bundled demo, once per process."""
    from ingest.demo import seed_demo
    return seed_demo(path)


_FUNCTIONS = {
    "pools": audit.pools,
    "calibrate": audit.calibrate,
    "human_ceiling": audit.human_ceiling,
    "stored_labels": audit.stored_labels,
    "probes": audit.probes,
    "mitigations": audit.mitigations,
}


@st.cache_data(show_spinner="Computing...", max_entries=128)
def _run(name: str, path: str, mtime: float, *args):
    """One cache for every audit call, keyed by (function, database path, mtime, arguments)."""
    return _FUNCTIONS[name](path, *args)


def _cached(name: str):
    return lambda *args: _run(name, *db_state(), *args)


pools = _cached("pools")
calibrate = _cached("calibrate")
human_ceiling = _cached("human_ceiling")
stored_labels = _cached("stored_labels")
probes = _cached("probes")
mitigations = _cached("mitigations")


DEFAULT_POOL = "mtbench-formats"   # the bundled five-format demo: the pool a first launch opens on


def findings(pool: str) -> dict:
    """app.findings.findings for the pool: {judge: Overview} (headline, agreement, details by format),
    from the cached audit cells and slot bias that the Formats and Slot bias pages read; the
    sentences themselves take milliseconds, so they are not cached on their own."""
    from app.views.overview.findings import findings as sentences
    return sentences(cells(pool), bias(pool))


def bias_bins(pool: str, n_bins: int = 6):
    """q_i against the reference gap, binned per cell (judge / format [/ decoding]): cell, ref_gap,
    q_i (mean), lo, hi, n (app.reading.binned_means)."""
    import polars as pl

    from app.reading import binned_means
    items = bias_items(pool).drop_nulls("ref_gap")
    label = pl.col("judge") + " / " + pl.col("format")
    if items.height and items["decoding"].n_unique() > 1:
        label = label + " / " + pl.col("decoding")
    return binned_means(items.with_columns(label.alias("cell")), "ref_gap", "q_i", "cell", n_bins)


def probe_pools() -> list[str]:
    """The pools holding the built-in probe set or a sample of it (probes, probes-N-sS)."""
    return [n for n in pools()["name"].to_list() if n == "probes" or n.startswith("probes-")]


def launch_probe(request, judge: str) -> int:
    """Start a `judgeaudit probe` request (app/views/probes/form.py probe_request) as a background
    run; its id. UserError while a run of the same probe pool and judge (NAME+STRATEGY) is alive."""
    from ingest.scoring.probes import pool_name
    pool = pool_name(request.get("sample"), request.get("seed", 0))
    return launch_run(request, pool=pool, key=run_key("score", pool, judge))


def endpoints() -> dict:
    """The judge endpoints configured on the server (ingest.endpoints: judgeaudit.toml beside the
    database); the only ones a page may send an API key to. {} when none."""
    from ingest.endpoints import endpoints as configured
    return configured(db_file())


def base_models() -> dict[str, str]:
    """Base models a page may offer for training: the bundled one and the server's [models]."""
    from ingest.endpoints import base_models as configured
    return configured(db_file())


# -- downstream evaluation (audit's study reads, train.contrasts, ingest.runs) ----------------------

def _evaluation(name: str, path: str, *args):
    from train import contrasts as ct
    if name == "contrasts":
        study, boot, seed = args
        return ct.analyse(audit.study_outcomes(path, study), boot=boot, seed=seed)
    if name == "prompt_differences":
        study, judge, a, b = args
        return ct.prompt_differences(audit.study_outcomes(path, study), judge, a, b)
    return {"studies": audit.studies, "outcomes": audit.study_outcomes,
            "generations": audit.study_generations}[name](path, *args)


@st.cache_data(show_spinner="Computing...", max_entries=64)
def _evaluation_cached(name: str, path: str, mtime: float, *args):
    return _evaluation(name, path, *args)


def studies():
    """Evaluation studies: study, pool, created_at, n_conditions, n_prompts, n_generations, n_outcomes."""
    return _evaluation_cached("studies", *db_state())


def study_outcomes(study: str):
    return _evaluation_cached("outcomes", *db_state(), study)


def study_generations(study: str):
    return _evaluation_cached("generations", *db_state(), study)


def contrasts(study: str, boot: int, seed: int) -> dict:
    """train.contrasts.analyse of the study's outcomes: friedman, contrasts, adjusted, mdd, notes."""
    return _evaluation_cached("contrasts", *db_state(), study, boot, seed)


def prompt_differences(study: str, judge: str, a: str, b: str):
    return _evaluation_cached("prompt_differences", *db_state(), study, judge, a, b)


def runs_of(kind: str, pool: str | None = None) -> list[dict]:
    """Background runs of one kind (ingest.runs.list_runs; dead runs are marked failed first),
    oldest first. Never cached: two tabs and a reloaded page read the same live rows."""
    from ingest.runs import list_runs
    return list_runs(db_file(), kind=kind, pool=pool)


def launch_run(request, pool: str | None = None, key: str | None = None, queue: str | None = None) -> int:
    """Start a request (ingest.runs.RunRequest) as a background run of its command (ingest.runs.launch):
    the request is the run's config, the process gets the command line derived from it
    (app.cli.command_line). Its id; UserError while a live run holds the same key (e.g. the same
    pool and judge)."""
    from app.cli import command_line
    from ingest.runs import launch
    return launch(db_file(), request.command, [sys.executable, "-m", "app.cli", *command_line(request)],
                  request=request, pool=pool, key=key, queue=queue)


def score_key(pool: str, judge: str) -> str:
    """The exclusive key of a scoring run of this pool and judge (ingest.runs.run_key)."""
    return run_key("score", pool, judge)


def active_run(key: str) -> dict | None:
    """The live run holding this key (run_key("score", POOL, JUDGE)), if any: a launch would be refused."""
    from ingest.runs import active
    return active(db_file(), key)


def call_count(pool: str, formats: list[str], schedule: str, swap: str) -> dict:
    """The calls `judgeaudit score` would plan: {"total", "per_format"} (ingest.scoring.count_calls)."""
    from ingest.scoring import count_calls
    return count_calls(db_file(), pool, formats, schedule, swap if swap == "all" else int(swap or 0))


def estimate_seconds(n_calls: int, provider: str, decoding: str, concurrency: int = 1,
                     latency_ms: float | None = None) -> float | None:
    from ingest.scoring import estimate_seconds as estimate
    return estimate(n_calls, provider, decoding, concurrency, latency_ms)


def builtin_formats() -> list[str]:
    """The five built-in formats, in the paper's order."""
    from ingest.scoring.formats import BUILTIN
    return list(BUILTIN)


def check_call(pool: str, judge: dict, fmt: str, decoding: str) -> dict:
    """ONE real call of the judge a form names (score_form.judge_options: its judge_spec and, for a
    configured endpoint only, its api_key_env) on the pool's first candidate: raw reply and
    parsed label."""
    from ingest.scoring import check_call as call
    return call(db_file(), pool, judge["judge_spec"], fmt, api_key_env=judge["api_key_env"], decoding=decoding)


def cancel_run(run_id: int) -> dict:
    """Ask a run to stop; a run still alive CANCEL_GRACE_S later is killed on a later read."""
    from ingest.runs import cancel
    return cancel(db_file(), run_id)


def run_log(run_id: int, n_chars: int = 3000) -> str:
    """The tail of a run's log, with key-like strings redacted (a crash may print anything), as a
    terminal would have left it (app.run_card.clean_log: no progress-bar redraws, repeats counted)."""
    from app.run_card import clean_log
    from ingest import redact
    from ingest.runs import log_tail
    text = clean_log(redact(log_tail(db_file(), run_id, 4 * n_chars)))   # the redraws shrink: read more
    return text[-n_chars:].partition("\n")[2] if len(text) > n_chars else text


def launch_evaluation(request, pool: str, study: str) -> int:
    """Start a `judgeaudit evaluate` request (app/evaluate_form.py) as a background run; its id."""
    return launch_run(request, pool=pool, key=run_key("evaluate", study))


# -- curation and training (train.curate on audit's frames; run folders of ingest.runs) --------------

def candidate_texts(pool: str, cand_idx: list[int]):
    """cand_idx, prompt_idx, prompt_id, candidate_id, prompt, response of the given candidates."""
    from audit import candidate_texts as texts
    return texts(db_file(), pool, list(cand_idx))


def train_outcome(row: dict) -> dict | None:
    """A training run's outcome from the metrics.json in its folder (app.run_card.train_outcome:
    status, steps, max_steps, train_loss, eval_loss, seconds, adapter), or None before it ends."""
    import json

    from app.run_card import train_outcome as outcome
    folder = (row.get("progress") or {}).get("out") or (row.get("config") or {}).get("out") or row["out_dir"]
    path = Path(folder) / "metrics.json" if folder else None
    steps = Path(folder) / "progress.jsonl" if folder else None
    logged = steps.read_text(encoding="utf-8") if steps and steps.is_file() else ""
    return outcome(json.loads(path.read_text(encoding="utf-8")), logged, row) if path and path.is_file() else None


def current_pool() -> str | None:
    return st.session_state.get("pool")


def page_pool(title: str) -> str:
    """Write the page title and return the pool chosen in the sidebar; stop the page without one."""
    st.header(title)
    pool = current_pool()
    if not pool:
        st.stop()
    return pool


def import_labels(path, pool: str, source: str = "jsonl", replace: bool = False) -> dict:
    """Store a labels file for the pool through the CLI's importer (whole file or nothing)."""
    from ingest.store import import_labels as run
    return run(str(db_file()), path, pool, source=source, replace=replace)


def bundled_labels(pool: str):
    """The labels file shipped with a bundled demo pool (LLMBar gold, MT-Bench experts), or None."""
    from ingest.demo import HERE, LABEL_FILES
    path = HERE / LABEL_FILES.get(pool, "-")
    return path if path.is_file() else None


def declared_threshold(pool: str):
    from ingest.store import declared_threshold as run
    return run(str(db_file()), pool)


def run_calibration(pool: str, threshold, target_width: float) -> int:
    """Declare the threshold (saved before anything is computed), compute, save the result."""
    from ingest.store import declare_calibration, finish_calibration
    cid = declare_calibration(str(db_file()), pool, threshold, target_width, "stored")
    cells = calibrate(pool, None, 2000, 0, threshold, target_width)
    finish_calibration(str(db_file()), cid, {"pool": pool, "threshold": threshold, "cells": cells.to_dicts(),
                                             "humans": human_ceiling(pool).to_dicts()[0]})
    return cid


# -- uploads: the browser's bytes become a file only for the length of one import --------------------

@contextmanager
def _uploaded(file_name: str, content: bytes, prefix: str):
    """The upload saved under the last part of its name (messages cite it) in a fresh temporary
    folder, removed afterwards; a UserError raised inside loses the folder from its message."""
    name = Path(file_name).name
    if name in ("", ".", ".."):
        raise UserError(f"File name {file_name!r}: a file name, not a folder")
    with tempfile.TemporaryDirectory(prefix=prefix) as folder:
        inside(folder, name, field="File name")
        path = Path(folder) / name
        path.write_bytes(content)
        try:
            yield path
        except UserError as exc:
            raise UserError(str(exc).replace(str(folder) + "/", "")) from exc


def import_pool_upload(name: str, file_name: str | None, content: bytes | None, replace: bool = False) -> dict:
    """Import a pool file uploaded in the browser under the name typed there (the CLI's validation
    and messages): ingest.store.import_pool's summary. UserError for a pool or file name that is not
    one plain name (never a path), no file, or a refused file."""
    from ingest.store import import_pool
    pool = safe_name(name, "Pool name")
    if file_name is None:
        raise UserError("Choose a file to import.")
    with _uploaded(safe_name(Path(file_name).name, "File name"), content, "judgeaudit-upload-") as path:
        return import_pool(str(db_file()), path, pool, replace=replace)


def import_labels_upload(pool: str, file_name: str, content: bytes, source: str = "jsonl",
                         replace: bool = False) -> dict:
    """Store a labels file uploaded in the browser for the pool (import_labels); UserError as the CLI's."""
    with _uploaded(file_name, content, "judgeaudit-labels-") as path:
        return import_labels(path, pool, source, replace)


from app.downloads import verdicts_jsonl, verdicts_parquet  # noqa: E402,F401  (the Report page)



# -- labelling (Label, Trust): queue reads uncached (a label shows at once); writes through the store --
annotator_agreement = _cached("annotator_agreement")
_FUNCTIONS.update(annotator_agreement=audit.annotator_agreement)


from app.labelling import create_label_queue, label_action, labelling  # noqa: E402,F401  (the Label page)


# -- juries and the judges' leaderboard (issue 28) --------------------------------------------------
_FUNCTIONS.update(juries=audit.juries)
juries = _cached("juries")


def save_jury(pool: str, name: str, members: list[str], vote: str) -> dict:
    """Store a jury of judges already run on the pool (ingest.store.save_jury; UserError as the CLI's)."""
    from ingest.store import save_jury as store_jury
    return store_jury(str(db_file()), pool, safe_name(name, "Jury name"), members, vote)


# -- preference pairs and DPO (train.pair_table; DPO runs' progress.jsonl) ----------------------------

@st.cache_data(show_spinner="Pairing...", max_entries=64)
def _pair_table(path: str, mtime: float, pool: str, judge: str, min_margin: float, both_orders: bool, seed: int):
    import train
    return train.pair_table(path, pool, judge, min_margin, both_orders, seed)


def pair_table(pool: str, judge: str, min_margin: float, both_orders: bool, seed: int):
    """Per format x decoding of the judge: pairs, prompts and the losses (train.pair_table)."""
    return _pair_table(*db_state(), pool, judge, float(min_margin), bool(both_orders), int(seed))


# -- issue 29: the pages' results, stored in the database once computed (app/derived.py, app/derived_data.py) --
from app.derived_data import (call_count, checklist, estimate, export_counts, judges_board, placeholders,  # noqa: E402,F401
                              drift, drift_items, pool_head, pool_summary, rank, reader, style_rank, systems)
cells, bias, bias_items, positions, variance, score_values, consistency = map(
    reader, ("cells", "bias", "bias_items", "positions", "variance", "score_values", "consistency"))
# the Curate & Train page's preview, the formats' overlap and the cell list (app/curation_view.py)
curation_view, curation_overlap_view, scored_cells = map(reader, ("curation", "curation_overlap", "scored_cells"))
