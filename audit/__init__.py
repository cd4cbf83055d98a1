"""Read-only metrics over the judgeaudit database. Every public function takes the database (its
handle, ingest.store.Database, or a path) and plain parameters and returns a polars DataFrame whose
columns its docstring lists.

Never imports torch, httpx, streamlit or the other packages of this project, except the store's
database handle (ingest/store/database.py). The derived results (stored once computed, read by every
session and command) are the subpackage `audit.derived`.

The face is lazy: a name is imported from its module when first asked for (`audit.rank`, `from audit
import rank`), so a command loads only the modules it uses (`judgeaudit audit` loads neither SciPy's
statistics nor the style fit: about a second of CPU at every start, measured under load).
"""

from __future__ import annotations

import importlib

# the module of each public name
_FACE = {
    "_alt_test_cells": ("ALT_TEST_COLUMNS", "alt_test"),
    "_bias": ("BIAS_COLUMNS", "bias", "bias_items", "cell_rng"),
    "_calibrate": ("calibrate", "calibrate_frames", "human_agreement", "human_ceiling", "stored_labels"),
    "_cells": ("CELL_COLUMNS", "audit_cells"),
    "_comparisons": ("COMPARISON_COLUMNS", "comparisons"),
    "_consistency": ("CONSISTENCY_COLUMNS", "consistency"),
    "_curation": ("baseline_values", "cell_values", "cells_values", "curation_prompts", "pool_extent"),
    "_decision": ("DECISION_COLUMNS", "decisions"),
    "_human_scale": ("calibrated_values", "human_items", "human_scale"),
    "_drift": ("compare_verdicts", "drift", "drift_items", "drift_pairs", "drift_report", "drift_sides", "first_pair"),
    "_export": ("EXPORT_COLUMNS", "export_counts", "verdict_batches", "verdict_rows"),
    "_judges": ("JUDGES_COLUMNS", "judges", "pareto_front"),
    "_intransitive": ("INTRANSITIVE_COLUMNS", "intransitivity"),
    "_jury": ("juries", "mark_juries", "with_juries"),
    "_jury_size": ("SIZE_COLUMNS", "jury_sizes"),
    "_label_page": ("AGREEMENT_COLUMNS", "annotator_agreement", "label_cells", "label_queues", "queue_screen"),
    "_labelling": ("draw_label_queue",),
    "_levels": ("effective_levels",),
    "_metrics": ("tiebreak_key",),
    "_plan": ("PLAN_COLUMNS", "plan"),
    "_pool_summary": ("pool_head", "pool_summary"),
    "_pools": ("placeholder_texts", "pool_candidates", "pools"),
    "_positions": ("position_selection",),
    "_probes": ("mitigations", "probes"),
    "_rank": ("RANK_COLUMNS", "rank_calls"),
    "_rank_cells": ("rank",),
    "_read": ("AuditError",),
    "_report": ("checklist", "checklist_markdown"),
    "_score_values": ("score_values",),
    "_scores": ("candidate_scores", "reference_agreement", "scored_cells"),
    "_stability": ("stability",),
    "_stats": ("holm", "mcnemar"),
    "_studies": ("eval_prompts", "judged", "stored_generations", "studies", "study_generations", "study_outcomes"),
    "_style": ("STYLE_COLUMNS", "style_rank_calls"),
    "_style_cells": ("style_rank",),
    "_subsets": ("SUBSET_COLUMNS", "candidate_texts", "subset_by_hash", "subsets"),
    "_variance": ("variance", "variance_table"),
    "_worth": ("ESTIMATE_COLUMNS",),
    "_worth_cells": ("estimate",),
    "_words": ("MIN_N", "MINUS", "minus", "plural", "signed", "too_few", "too_few_note"),
}
_MODULE_OF = {name: module for module, names in _FACE.items() for name in names}


def __getattr__(name: str):
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'audit' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value          # asked once: later lookups find it without this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "AGREEMENT_COLUMNS", "ALT_TEST_COLUMNS", "AuditError", "BIAS_COLUMNS", "CELL_COLUMNS",
    "COMPARISON_COLUMNS", "CONSISTENCY_COLUMNS", "DECISION_COLUMNS", "ESTIMATE_COLUMNS", "EXPORT_COLUMNS",
    "INTRANSITIVE_COLUMNS", "JUDGES_COLUMNS", "MINUS", "MIN_N", "PLAN_COLUMNS", "RANK_COLUMNS",
    "SIZE_COLUMNS", "STYLE_COLUMNS", "SUBSET_COLUMNS", "alt_test", "annotator_agreement", "audit_cells",
    "baseline_values", "bias", "bias_items", "calibrate", "calibrate_frames", "calibrated_values",
    "candidate_scores", "candidate_texts", "cell_rng", "cell_values", "cells_values", "checklist",
    "checklist_markdown",
    "compare_verdicts", "comparisons", "consistency", "curation_prompts", "decisions", "draw_label_queue",
    "drift", "drift_items", "drift_pairs", "drift_report", "drift_sides", "effective_levels", "estimate", "eval_prompts",
    "export_counts", "first_pair", "holm", "human_agreement", "human_ceiling", "human_items", "human_scale",
    "intransitivity", "judged", "judges", "juries", "jury_sizes", "label_cells", "label_queues",
    "mark_juries", "mcnemar", "minus", "mitigations", "pareto_front", "placeholder_texts", "plan", "plural",
    "pool_candidates", "pool_extent", "pool_head",
    "pool_summary", "pools", "position_selection", "probes", "queue_screen", "rank", "rank_calls",
    "reference_agreement", "score_values",
    "scored_cells", "signed", "stability", "stored_generations", "stored_labels", "studies", "study_generations",
    "study_outcomes", "style_rank", "style_rank_calls", "subset_by_hash", "subsets", "tiebreak_key", "too_few", "too_few_note", "variance",
    "variance_table", "verdict_batches", "verdict_rows", "with_juries",
]
