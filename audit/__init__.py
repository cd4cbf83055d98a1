"""Read-only metrics over the judgeaudit database. Every public function takes the database (its
handle, ingest.store.Database, or a path) and plain parameters and returns a polars DataFrame whose
columns its docstring lists.

Never imports torch, httpx, streamlit or the other packages of this project, except the store's
database handle (ingest/store/database.py). The derived results (stored once computed, read by every
session and command) are the subpackage `audit.derived`.
"""

from ._alt_test_cells import ALT_TEST_COLUMNS, alt_test
from ._bias import BIAS_COLUMNS, bias, bias_items, cell_rng
from ._calibrate import calibrate, calibrate_frames, human_agreement, human_ceiling, stored_labels
from ._cells import CELL_COLUMNS, audit_cells
from ._comparisons import COMPARISON_COLUMNS, comparisons
from ._consistency import CONSISTENCY_COLUMNS, consistency
from ._curation import baseline_values, cell_values, cells_values, curation_prompts, pool_extent
from ._decision import DECISION_COLUMNS, decisions
from ._human_scale import calibrated_values, human_items, human_scale
from ._drift import compare_verdicts, drift, drift_items, drift_pairs, drift_report, drift_sides, first_pair
from ._export import EXPORT_COLUMNS, export_counts, verdict_batches, verdict_rows
from ._judges import JUDGES_COLUMNS, judges, pareto_front
from ._intransitive import INTRANSITIVE_COLUMNS, intransitivity
from ._jury import juries, mark_juries, with_juries
from ._jury_size import SIZE_COLUMNS, jury_sizes
from ._label_page import AGREEMENT_COLUMNS, annotator_agreement, label_cells, label_queues, queue_screen
from ._labelling import draw_label_queue
from ._levels import effective_levels
from ._metrics import tiebreak_key
from ._plan import PLAN_COLUMNS, plan
from ._pool_summary import pool_head, pool_summary
from ._pools import placeholder_texts, pool_candidates, pools
from ._positions import position_selection
from ._probes import mitigations, probes
from ._rank import RANK_COLUMNS, rank_calls
from ._rank_cells import rank                    # by system aggregated in DuckDB; by prompt from every call
from ._read import AuditError
from ._report import checklist, checklist_markdown
from ._scores import candidate_scores, reference_agreement, score_values, scored_cells
from ._stability import stability
from ._stats import holm, mcnemar
from ._studies import eval_prompts, judged, stored_generations, studies, study_generations, study_outcomes
from ._style import STYLE_COLUMNS, style_rank_calls
from ._style_cells import style_rank             # each cell aggregated in DuckDB, or from its calls
from ._subsets import SUBSET_COLUMNS, candidate_texts, subset_by_hash, subsets
from ._variance import variance, variance_table
from ._worth import ESTIMATE_COLUMNS
from ._worth_cells import estimate               # each cell's inputs aggregated in DuckDB
from ._words import MIN_N, MINUS, minus, plural, signed, too_few, too_few_note

__all__ = [
    "AGREEMENT_COLUMNS", "ALT_TEST_COLUMNS", "AuditError", "BIAS_COLUMNS", "CELL_COLUMNS",
    "COMPARISON_COLUMNS", "CONSISTENCY_COLUMNS", "DECISION_COLUMNS", "ESTIMATE_COLUMNS", "EXPORT_COLUMNS",
    "INTRANSITIVE_COLUMNS", "JUDGES_COLUMNS", "MINUS", "MIN_N", "PLAN_COLUMNS", "RANK_COLUMNS",
    "SIZE_COLUMNS", "STYLE_COLUMNS", "SUBSET_COLUMNS", "alt_test", "annotator_agreement", "audit_cells",
    "baseline_values", "bias", "bias_items", "calibrate", "calibrate_frames", "calibrated_values",
    "candidate_scores", "candidate_texts", "cell_rng", "cell_values", "cells_values", "checklist", "checklist_markdown",
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
