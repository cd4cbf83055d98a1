"""The database: connection, lock waiting, numbered migrations (`schema/`) and every read and write
that ingest and train make (docs/layout.md#the-database).

Only this package opens DuckDB. Its face exports verbs, each one short-lived connection and (for a
write) one transaction, with its SQL in `sql/NAME.sql`; a caller that reads or writes several
things as one unit (a scoring run's set-up, a verdict import) takes `writing(db)` (or `reading(db)`),
an object of named reads and writes in one transaction, never the connection: an import or a batch
of verdicts lands whole or not at all.

The names below load their module on first use, so that `audit`, which imports only the read-only
`connection` module, never loads the writers.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "database": ["Database"],
    "_database": ["ensure_current"],
    "_units": ["reading", "writing"],
    "_pools": ["import_pool", "pool_names"],
    "_judges": ["judge_identity"],
    "_verdicts": ["CALL_KEY", "VERDICT_COLUMNS", "pool_judges", "verdict_file_rows"],
    "_batches": ["BATCH_CALL_COLUMNS"],
    "_labels": ["declare_calibration", "declared_threshold", "finish_calibration", "import_labels",
                "labelled_pools", "labels_description", "labels_from_file"],
    "_subsets": ["save_subset"],
    "_label_queues": ["record_label", "save_label_queue", "skip_item", "undo_item"],
    "_runs": ["beat_run", "begin_run", "claim_run", "close_dead_runs", "close_run", "create_run", "end_run",
              "record_process", "request_cancel", "run_rows"],
    "_evaluations": ["EVALUATION_SCHEMA", "GENERATION_SCHEMA", "ensure_study", "insert_evaluations",
                     "insert_generations"],
    "_cell_runs": ["CellRunDescription"],
    "_juries": ["VOTES", "jury_names", "refresh_juries", "save_jury"],
    "_attached": ["detach_verdicts"],
    "_file_import": ["NotInPlace"],
    "_timings": ["judge_timings"],
}
_EXPORTS["_derived"] = ["derived_fingerprints", "derived_judging_marks", "derived_mark", "derived_marks_now",
                         "derived_parts", "derived_result", "params_json", "save_derived", "save_derived_many",
                         "save_derived_parts"]
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}
__all__ = sorted(_MODULE_OF)
# the verbs a Database handle offers bound to itself (`db.import_pool(path, pool)`): every function of
# the face that takes the database first
VERBS = frozenset(n for n in _MODULE_OF if n[0].islower() and n != "params_json")


def __getattr__(name: str):
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
