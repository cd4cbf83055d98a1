"""The database: connection, lock waiting, numbered migrations (`schema/`) and every write.

Nothing outside this package (and `ingest.runs`, which owns the runs table) writes to the
database. Writers open a short-lived connection with `writer()` and change it inside one
`transaction()`: an import or a batch of verdicts lands whole or not at all.

The names below load their module on first use, so that `audit`, which imports only the read-only
`connection` module, never loads the writers.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "connection": ["DEFAULT_DB", "db_path", "find_pool", "lock_timeout_s", "pool_id"],
    "_database": ["ensure_current", "frame", "migrate", "next_id", "one", "reader", "transaction", "writer"],
    "_pools": ["import_pool"],
    "_judges": ["ensure_format", "ensure_judge", "judge_identity"],
    "_verdicts": ["CALL_KEY", "VERDICT_COLUMNS", "insert_answers", "insert_verdicts", "stored_statuses", "unanswered"],
    "_cell_runs": ["close_orphan_cell_runs", "finish_cell_run", "start_cell_run"],
    "_batches": ["BATCH_CALL_COLUMNS", "exported_calls", "record_batch_export"],
    "_labels": ["declare_calibration", "declared_threshold", "finish_calibration", "import_labels",
                "labels_description", "labels_from_file"],
    "_subsets": ["save_subset"],
    "_evaluations": ["EVALUATION_SCHEMA", "GENERATION_SCHEMA", "ensure_study", "insert_evaluations",
                     "insert_generations"],
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}
__all__ = sorted(_MODULE_OF)


def __getattr__(name: str):
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
