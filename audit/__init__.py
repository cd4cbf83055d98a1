"""Read-only metrics over the judgeaudit database. Every public function takes a database path and
plain parameters and returns a polars DataFrame whose columns its docstring lists.

Never imports torch, httpx, streamlit or the other packages of this project, except the store's
read-only connection module (ingest/store/connection.py).
"""

from ._bias import BIAS_COLUMNS, bias, bias_items, cell_rng
from ._cells import CELL_COLUMNS, audit_cells
from ._consistency import CONSISTENCY_COLUMNS, consistency
from ._read import AuditError
from ._metrics import tiebreak_key
from ._levels import effective_levels
from ._stability import stability
from ._positions import position_selection
from ._variance import variance, variance_table
from ._calibrate import calibrate, calibrate_frames, human_agreement, human_ceiling, stored_labels
from ._drift import compare_verdicts, drift, drift_items, drift_sides
from ._export import EXPORT_COLUMNS, verdict_batches, verdict_rows
from ._pools import placeholder_texts, pool_candidates, pools
from ._probes import mitigations, probes
from ._rank import RANK_COLUMNS, rank, rank_calls
from ._stats import holm, mcnemar
from ._style import STYLE_COLUMNS, style_rank, style_rank_calls
from ._report import checklist, checklist_markdown
from ._scores import candidate_scores, score_values
from ._scores import scored_cells
from ._studies import eval_prompts, judged, stored_generations, studies, study_generations, study_outcomes
from ._subsets import SUBSET_COLUMNS, candidate_texts, subset_by_hash, subsets
from ._worth import ESTIMATE_COLUMNS, estimate
from ._labelling import draw_label_queue
from ._label_page import AGREEMENT_COLUMNS, annotator_agreement, label_cells, label_queues, queue_screen

__all__ = ["AuditError", "BIAS_COLUMNS", "CELL_COLUMNS", "audit_cells", "candidate_scores", "bias", "bias_items", "cell_rng", "checklist",
           "checklist_markdown", "effective_levels", "pool_candidates", "pools", "position_selection",
           "RANK_COLUMNS", "rank", "rank_calls", "STYLE_COLUMNS", "style_rank", "style_rank_calls",
           "calibrate", "calibrate_frames",
           "holm", "human_agreement", "human_ceiling", "mcnemar", "stored_labels", "mitigations", "probes",
           "compare_verdicts", "drift", "drift_items", "drift_sides",
           "score_values", "stability", "tiebreak_key", "variance", "variance_table",
           "eval_prompts", "judged", "stored_generations", "studies", "study_generations", "study_outcomes",
           "SUBSET_COLUMNS", "candidate_texts", "subset_by_hash", "subsets",
           "EXPORT_COLUMNS", "verdict_batches", "verdict_rows", "CONSISTENCY_COLUMNS", "consistency",
           "placeholder_texts"]
__all__ += ["ESTIMATE_COLUMNS", "estimate", "draw_label_queue", "AGREEMENT_COLUMNS", "annotator_agreement",
            "label_cells", "label_queues", "queue_screen"]

from ._jury import juries, label_juries, with_juries
from ._judges import JUDGES_COLUMNS, judges, pareto_front
__all__ += ["juries", "label_juries", "with_juries", "JUDGES_COLUMNS", "judges", "pareto_front"]
__all__ += ["scored_cells"]
from ._comparisons import COMPARISON_COLUMNS, comparisons

__all__ += ["COMPARISON_COLUMNS", "comparisons"]
from ._export import export_counts  # noqa: E402  (issue 29: the Report page's count, from the database)
__all__ += ["export_counts"]
# issue 29: what `curate` reads, out of core (one cell's values, one row per prompt)
from ._curation import baseline_values, cell_values, curation_prompts, pool_extent

__all__ += ["baseline_values", "cell_values", "curation_prompts", "pool_extent"]
# issue 29: the derived results at 10M: rank (by system), style_rank and estimate read aggregated in
# DuckDB, the same numbers (the per-call readers stay in ._rank, ._style and ._worth; by='prompt' uses ._rank's)
from ._rank_cells import rank  # noqa: E402,F811
from ._style_cells import style_rank  # noqa: E402,F811
from ._worth_cells import estimate  # noqa: E402,F811
