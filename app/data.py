"""The dashboard's one door to the data: the database's handle, reads and writes, thin over the audit,
the derived results and the store. Pages call only this module.

Three kinds of read, each in one place:
- `result(name, pool, *args)`: a derived result (audit.derived over train.DERIVED_RESULTS): stored in
  the database once computed, read by every session and after a restart;
- the cached reads below (`pools`, `calibrate`, ...): one `st.cache_data` keyed by the database's state
  (path, modification time), so a write from any process (the command line too) shows at once;
- live reads never cached (runs, a label queue's items): two tabs and a reload read the same rows.
No DuckDB connection outlives a call.
"""

from __future__ import annotations

import json
import sys
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path

import streamlit as st

import audit
import ingest.store as store
from audit import derived
from ingest import Database, UserError, file_stem, inside, safe_name  # noqa: F401  (file_stem: the Report page)
from ingest.endpoints import base_models as configured_models, endpoints as configured_endpoints, label_price, prices
from ingest.runs import run_key
from train.derived_results import DERIVED_RESULTS

DEFAULT_POOL = "mtbench-formats"   # the bundled five-format demo: the pool a first launch opens on
_DATABASE = "_judgeaudit_database"


def database() -> Database:
    """The database this dashboard serves ($JUDGEAUDIT_DB, which `judgeaudit app` sets), its handle
    made once per session."""
    try:
        state = st.session_state
        if _DATABASE not in state:
            state[_DATABASE] = Database()
        return state[_DATABASE]
    except Exception:           # outside a running script (a test calling the facade): the path rule now
        return Database()


@st.cache_resource(show_spinner="Preparing the database (the bundled demo on first launch)...")
def ensure_demo(path: str) -> list[str]:
    """Upgrade the schema and seed an empty database with the bundled demo, once per process."""
    from ingest.demo import seed_demo
    return seed_demo(path)


def current_pool() -> str | None:
    return st.session_state.get("pool")


def page_pool(title: str) -> str:
    """Write the page title and return the pool chosen in the sidebar; stop the page without one."""
    st.header(title)
    pool = current_pool()
    if not pool:
        st.stop()
    return pool


# -- derived results (audit.derived): stored once computed, with a progress bar while computed ------------

def _progress_bar():
    """A progress bar drawn in place, and a way to remove it: (show, clear)."""
    slot = st.empty()
    return (lambda fraction, sentence: slot.progress(fraction, text=sentence)), slot.empty


def result(name: str, pool: str, *args):
    """The derived result `name` of the pool (train.DERIVED_RESULTS: cells, bias, bias_items, positions,
    variance, score_values, consistency, scored_cells, rank, estimate, export_counts, pool_summary,
    pool_head, drift, curation, curation_overlap, ...) for the page's arguments.

    The progress bar's place is drawn whether the result is computed or read: were it drawn only while
    computing, every element after it would sit one place further down on a first visit than on the
    next run, and a widget that moves is drawn anew while its copy at the old place lingers until the run
    ends; that copy, going, takes the widget's tie to the address with it (a keyed widget has one id), so
    a choice made next never reached the address."""
    slot, here = _progress_bar(), threading.get_ident()

    def bar():      # a result the computation reads in its own thread draws its bar as before
        return slot if threading.get_ident() == here else _progress_bar()
    return derived.read(database(), pool, name, *args, results=DERIVED_RESULTS, bar=bar)


def style_rank(pool: str, n_boot: int, seed: int = 0, cell: tuple[str, str, str] | None = None,
               penalty: float = 0.0):
    """audit.style_rank of one cell: without a bootstrap or a penalty, the stored fit of every cell
    filtered to it (each cell is fitted on its own: the same numbers); else that cell's fit alone
    (the Rankings page's toggles: a bootstrap, the ridge fallback), stored under those arguments."""
    import polars as pl
    if n_boot == 0 and seed == 0 and not penalty:
        frame = result("style_rank", pool, 0, 0)
        if cell is None:
            return frame
        return frame.filter((pl.col("judge") == cell[0]) & (pl.col("format") == cell[1])
                            & (pl.col("decoding") == cell[2]))
    return result("style_rank", pool, int(n_boot), int(seed), tuple(cell) if cell else None, float(penalty))


def placeholders(pool: str) -> dict:
    """audit.placeholder_texts of the pool as a dict (app.placeholders' warning)."""
    return result("placeholders", pool).to_dicts()[0]


def checklist(pool: str) -> dict:
    """audit.checklist's document (its generated_at: when it was computed from this state of the pool)."""
    return json.loads(result("checklist", pool)["json"][0])


def judges_board(pool: str):
    """audit.judges for the pool at the prices in the server's judgeaudit.toml (ingest.endpoints)."""
    return result("judges_board", pool, derived.price_args(prices(database())))


HALF_WIDTH, EPSILON = 0.05, 0.2      # the decision's ±H and ε until the page's fields change them


def decisions(pool: str, half_width: float = HALF_WIDTH, epsilon: float = EPSILON):
    """audit.decisions for the pool at ±H, ε and the prices in the server's judgeaudit.toml."""
    more = () if (half_width, epsilon) == (HALF_WIDTH, EPSILON) else (float(half_width), float(epsilon))
    return result("decisions", pool, derived.price_args(prices(database())), label_price(database()), *more)


def systems(pool: str) -> list[str]:
    """The pool's distinct candidate_ids, sorted (the baselines What labels are worth offers)."""
    return result("systems", pool)["candidate_id"].to_list()


def call_count(pool: str, formats: list[str], schedule: str, swap: str) -> dict:
    """The calls `judgeaudit score` would plan: {"total", "per_format", "chars"} (ingest.scoring.count_calls:
    chars, the characters they give the judge per format), stored per form (formats, schedule, swap as typed)."""
    frame = result("call_plan", pool, tuple(formats), schedule, str(swap))
    per = dict(zip(frame["format"].to_list(), frame["n"].to_list()))
    return {"total": sum(per.values()), "per_format": per, "chars": dict(zip(frame["format"].to_list(),
                                                                            frame["chars"].to_list()))}


def drift_items(pool: str, judge: str, against: str):
    """audit.drift_items of `judge` against `against`: the first MOVED_SHOWN calls that moved."""
    return result("drift_items", pool, judge, against, None, derived.MOVED_SHOWN)


# -- cached reads: one cache, keyed by (what, the database's state, arguments) ----------------------------

def _contrasts(db, study: str, boot: int, seed: int) -> dict:
    from train import contrasts as ct
    return ct.analyse(audit.study_outcomes(db, study), boot=boot, seed=seed)


def _prompt_differences(db, study: str, judge: str, a: str, b: str):
    from train import contrasts as ct
    return ct.prompt_differences(audit.study_outcomes(db, study), judge, a, b)


def _pair_table(db, pool: str, judge: str, min_margin: float, both_orders: bool, seed: int):
    import train
    return train.pair_table(db, pool, judge, min_margin, both_orders, seed)


def _estimate(db, per_format: tuple, chars: tuple, provider: str, decoding: str, concurrency: int, latency_ms,
              load_per_core: float | None):
    from ingest.scoring import estimate_time
    return estimate_time(db, dict(per_format), provider, decoding, concurrency, latency_ms, dict(chars), load_per_core)


def _verdicts_parquet(db, pool: str) -> bytes:
    import io
    buffer = io.BytesIO()
    audit.verdict_rows(db, pool).write_parquet(buffer, compression="zstd")
    return buffer.getvalue()


def _verdicts_jsonl(db, pool: str) -> bytes:
    lines = [line for batch in audit.verdict_batches(db, pool, json_lines=True)
             for line in batch.column("line").to_pylist()]
    return ("\n".join(lines) + "\n").encode() if lines else b""


_READS = {
    "pools": audit.pools, "calibrate": audit.calibrate, "human_ceiling": audit.human_ceiling,
    "stored_labels": audit.stored_labels, "probes": audit.probes, "mitigations": audit.mitigations,
    "annotator_agreement": audit.annotator_agreement, "juries": audit.juries, "studies": audit.studies,
    "study_outcomes": audit.study_outcomes, "study_generations": audit.study_generations,
    "contrasts": _contrasts, "prompt_differences": _prompt_differences, "pair_table": _pair_table,
    "verdicts_parquet": _verdicts_parquet, "verdicts_jsonl": _verdicts_jsonl, "estimate": _estimate,
}


@st.cache_data(show_spinner="Computing...", max_entries=128)
def _cached(name: str, path: str, mtime: float, *args):
    return _READS[name](Database(path), *args)


def _reader(name: str, doc: str):
    def read(*args):
        return _cached(name, *database().state(), *args)
    read.__name__, read.__doc__ = name, doc
    return read


pools = _reader("pools", "audit.pools: name, n_prompts, n_candidates.")
calibrate = _reader("calibrate", "audit.calibrate(pool, ...): kappa with humans per cell.")
human_ceiling = _reader("human_ceiling", "audit.human_ceiling(pool): the human-human agreement.")
stored_labels = _reader("stored_labels", "audit.stored_labels(pool): the pool's human labels.")
probes = _reader("probes", "audit.probes(pool): bias per probe type.")
mitigations = _reader("mitigations", "audit.mitigations(pool): each strategy against its baseline.")
annotator_agreement = _reader("annotator_agreement", "audit.annotator_agreement(pool): agreement between annotators.")
juries = _reader("juries", "audit.juries(pool): the pool's juries.")
studies = _reader("studies", "Evaluation studies: study, pool, created_at, n_conditions, n_prompts, ...")
study_outcomes = _reader("study_outcomes", "audit.study_outcomes(study).")
study_generations = _reader("study_generations", "audit.study_generations(study).")
contrasts = _reader("contrasts", "train.contrasts.analyse of a study's outcomes (study, boot, seed).")
prompt_differences = _reader("prompt_differences", "train.contrasts.prompt_differences (study, judge, a, b).")
pair_table = _reader("pair_table", "train.pair_table (pool, judge, min_margin, both_orders, seed).")
verdicts_parquet = _reader("verdicts_parquet", "Every stored call of the pool as Parquet (export-verdicts).")
verdicts_jsonl = _reader("verdicts_jsonl", "Every stored call of the pool as JSON lines (export-verdicts --json).")


# -- live reads: never cached --------------------------------------------------------------------------

def labelling(name: str, *args):
    """audit.NAME(db, *args) uncached (a label shows at once): label_queues(pool), label_cells(pool),
    queue_screen(queue_id)."""
    return getattr(audit, name)(database(), *args)


def runs_of(kind: str, pool: str | None = None) -> list[dict]:
    """Background runs of one kind (ingest.runs.list_runs; dead runs are marked failed first), oldest first."""
    from ingest.runs import list_runs
    return list_runs(database(), kind=kind, pool=pool)


LIVE_STALE_S = 30.0     # a live file this old (its run writes it every 2 s): the page reads the database again


def live_runs(rows: list[dict]) -> list[dict]:
    """The runs read from the database earlier in this page run, as their live files have them now
    (ingest.runs.live_state: status, progress, and `recheck` when the database should be read again):
    what a page following a run reads between two runs of its script, without the database."""
    from ingest.runs import live_state
    return [live_state(r, LIVE_STALE_S) for r in rows]


def active_run(key: str) -> dict | None:
    """The live run holding this key (run_key("score", POOL, JUDGE)), if any: a launch would be refused."""
    from ingest.runs import active
    return active(database(), key)


def score_key(pool: str, judge: str) -> str:
    """The exclusive key of a scoring run of this pool and judge (ingest.runs.run_key)."""
    return run_key("score", pool, judge)


def run_log(row: dict, n_chars: int = 3000) -> str:
    """The tail of a run's log (the run's row, read already: its log file, no database), with key-like
    strings redacted (a crash may print anything), as a terminal would have left it
    (app.run_card.clean_log: no progress-bar redraws, repeats counted)."""
    from app.run_card import clean_log
    from ingest import redact
    from ingest.runs import log_tail
    # the redraws shrink: read more
    text = clean_log(redact(log_tail(database(), row["run_id"], 4 * n_chars, row=row)))
    return text[-n_chars:].partition("\n")[2] if len(text) > n_chars else text


def train_outcome(row: dict) -> dict | None:
    """A training run's outcome from the metrics.json in its folder (app.run_card.train_outcome:
    status, steps, max_steps, train_loss, eval_loss, seconds, adapter), or None before it ends."""
    from app.run_card import train_outcome as outcome
    folder = (row.get("progress") or {}).get("out") or (row.get("config") or {}).get("out") or row["out_dir"]
    path = Path(folder) / "metrics.json" if folder else None
    steps = Path(folder) / "progress.jsonl" if folder else None
    logged = steps.read_text(encoding="utf-8") if steps and steps.is_file() else ""
    return outcome(json.loads(path.read_text(encoding="utf-8")), logged, row) if path and path.is_file() else None


def endpoints() -> dict:
    """The judge endpoints configured on the server (judgeaudit.toml beside the database); the only ones
    a page may send an API key to. {} when none."""
    return configured_endpoints(database())


def base_models() -> dict[str, str]:
    """Base models a page may offer for training: the bundled one and the server's [models]."""
    return configured_models(database())


def declared_threshold(pool: str):
    return store.declared_threshold(database(), pool)


def bundled_labels(pool: str):
    """The labels file shipped with a bundled demo pool (LLMBar gold, MT-Bench experts), or None."""
    from ingest.demo import HERE, LABEL_FILES
    path = HERE / LABEL_FILES.get(pool, "-")
    return path if path.is_file() else None


def builtin_formats() -> list[str]:
    """The five built-in formats, in the paper's order."""
    from ingest.scoring.formats import BUILTIN
    return list(BUILTIN)


def estimate(count: dict, provider: str, decoding: str, concurrency: int = 1, latency_ms: float | None = None):
    """A run's expected time for call_count's `count` (ingest.scoring.estimate_time: the bundled model's
    from what runs measured on this machine, with how many, at its load now, to a tenth a core; the
    simulated judge's from its latency; None for an endpoint)."""
    from ingest.scoring import machine_load
    load = machine_load() if provider == "local" else None
    return _cached("estimate", *database().state(), tuple(count["per_format"].items()), tuple(count.get("chars", {})
                   .items()), provider, decoding, int(concurrency), latency_ms, load and round(load, 1))


def check_call(pool: str, judge: dict, fmt: str, decoding: str) -> dict:
    """ONE real call of the judge a form names (score_form.judge_options: its judge_spec and, for a
    configured endpoint only, its api_key_env) on the pool's first candidate: raw reply and parsed label."""
    from ingest.scoring import check_call as call
    return call(database(), pool, judge["judge_spec"], fmt, api_key_env=judge["api_key_env"], decoding=decoding)


# -- writes and launches: through the store and ingest.runs ---------------------------------------------

def launch_run(request, pool: str | None = None, key: str | None = None, queue: str | None = None) -> int:
    """Start a request (ingest.runs.RunRequest) as a background run of its command (ingest.runs.launch):
    the request is the run's config, the process gets the command line derived from it
    (app.cli.command_line). Its id; UserError while a live run holds the same key."""
    from app.cli import command_line
    from ingest.runs import launch
    return launch(database(), request.command, [sys.executable, "-m", "app.cli", *command_line(request)],
                  request=request, pool=pool, key=key, queue=queue)


def launch_probe(request, judge: str) -> int:
    """Start a `judgeaudit probe` request as a background run; its id. UserError while a run of the
    same probe pool and judge (NAME+STRATEGY) is alive."""
    from ingest.scoring.probes import pool_name
    pool = pool_name(request.get("sample"), request.get("seed", 0))
    return launch_run(request, pool=pool, key=run_key("score", pool, judge))


@st.cache_resource
def probe_set() -> dict:
    """The built-in probe set in numbers (ingest.scoring.probes.probe_set): source, probed, mirrored."""
    from ingest.scoring.probes import probe_set as numbers      # deferred: the scoring package, for one page
    return numbers()


def launch_evaluation(request, pool: str, study: str) -> int:
    """Start a `judgeaudit evaluate` request (app/evaluate_form.py) as a background run; its id."""
    return launch_run(request, pool=pool, key=run_key("evaluate", study))


def launch_align(request, pool: str, judge: str) -> int:
    """Start a `judgeaudit align` request (app/views/align/form.py) as a background run; its id.
    UserError while an align run of the same pool and judge is alive."""
    return launch_run(request, pool=pool, key=run_key("align", pool, judge))


def align_result(row: dict) -> dict | None:
    """A finished align run's document (align.json in its folder), or None."""
    path = Path(row["out_dir"]) / "align.json" if row.get("out_dir") else None
    return json.loads(path.read_text(encoding="utf-8")) if path and path.is_file() else None


def cancel_run(run_id: int) -> dict:
    """Ask a run to stop; a run still alive CANCEL_GRACE_S later is killed on a later read."""
    from ingest.runs import cancel
    return cancel(database(), run_id)


def save_jury(pool: str, name: str, members: list[str], vote: str) -> dict:
    """Store a jury of judges already run on the pool (ingest.store.save_jury; UserError as the CLI's)."""
    return store.save_jury(database(), pool, safe_name(name, "Jury name"), members, vote)


def import_labels(path, pool: str, source: str = "jsonl", replace: bool = False) -> dict:
    """Store a labels file for the pool through the CLI's importer (whole file or nothing)."""
    return store.import_labels(database(), path, pool, source=source, replace=replace)


def run_calibration(pool: str, threshold, target_width: float) -> int:
    """Declare the threshold (saved before anything is computed), compute, save the result."""
    cid = store.declare_calibration(database(), pool, threshold, target_width, "stored")
    cells = calibrate(pool, None, 2000, 0, threshold, target_width)
    store.finish_calibration(database(), cid, {"pool": pool, "threshold": threshold, "cells": cells.to_dicts(),
                                               "humans": human_ceiling(pool).to_dicts()[0],
                                               "human_scale": result("human_scale", pool).to_dicts()})
    return cid


def create_label_queue(pool: str, annotator: str, kind: str, strategy: str, cell, n: int, seed: int) -> int:
    """Draw a queue (audit) and store it for the annotator (the store); its id."""
    plan = audit.draw_label_queue(database(), pool, n, kind, strategy, *(cell or (None,) * 3), annotator, seed)
    items = plan["items"].drop("prompt_id", "a_id", "b_id", "candidate_id")
    return store.save_label_queue(database(), pool, annotator, kind, strategy, *(cell or (None,) * 3)[:2],
                                  plan["decoding"], seed, plan["n_frame"], plan["active"], items)


def label_action(action: str, queue_id: int, position: int, label: str | None = None) -> None:
    """'label' (with label), 'skip' or 'undo' the queue's item at `position` (ingest.store)."""
    {"label": lambda: store.record_label(database(), queue_id, position, label),
     "skip": lambda: store.skip_item(database(), queue_id, position),
     "undo": lambda: store.undo_item(database(), queue_id, position)}[action]()


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
    pool = safe_name(name, "Pool name")
    if file_name is None:
        raise UserError("Choose a file to import.")
    with _uploaded(safe_name(Path(file_name).name, "File name"), content, "judgeaudit-upload-") as path:
        return store.import_pool(database(), path, pool, replace=replace)


def import_labels_upload(pool: str, file_name: str, content: bytes, source: str = "jsonl",
                         replace: bool = False) -> dict:
    """Store a labels file uploaded in the browser for the pool (import_labels); UserError as the CLI's."""
    with _uploaded(file_name, content, "judgeaudit-labels-") as path:
        return import_labels(path, pool, source, replace)

