"""The audit's building blocks on hand-sized inputs, each expected value worked out in a comment:
the slot-scheme wording and empty or degenerate pools. (Candidate scores: test_scores.py; group
layouts: test_cells.py; the metric helpers: test_metrics.py.)"""

import numpy as np
import pytest

from audit._report import _slot_scheme
from ingest.store import import_pool
from ingest.scoring import import_verdicts


pytestmark = pytest.mark.usefixtures("database_named_by_argument")   # tests/conftest.py

NO = np.zeros(0, dtype=bool)


# --- report wording ------------------------------------------------------------------------

@pytest.mark.parametrize("run, b_row, text", [
    (None, None, "unknown"),
    ({"source": "import", "schedule": None}, None, "imported verdicts"),
    ({"source": "score", "schedule": "anchored"}, None, "candidate in slot A against the prompt's anchor"),
    ({"source": "score", "schedule": "listing"}, None, "tournament, earlier-listed candidate always Response A"),
    ({"source": "score", "schedule": "balanced"}, None, "tournament, each candidate in slot A as often as in B"),
    ({"source": "score", "schedule": "both"},
     {"n_reverse_calls": 3, "n_calls": 9, "n_pairs": 2},
     "tournament, every pair in both orders; 3 of 9 calls in the reverse order, 2 items seen in both orders"),
    ({"source": "score", "schedule": "custom"}, None, "custom"),
    ({"source": "score", "schedule": None}, None, ""),
])
def test_slot_scheme_wording(run, b_row, text):
    assert _slot_scheme(run, b_row) == text


# --- empty and degenerate pools ------------------------------------------------------------

def test_a_pool_without_verdicts_gives_empty_tables_with_their_columns(db, write_jsonl):
    import audit
    import_pool(db, write_jsonl("p.jsonl", [{"prompt_id": "q", "prompt": "P", "candidate_id": "a",
                                             "response": "a"}]), "p")
    assert audit.audit_cells(db, "p").columns == audit.CELL_COLUMNS and audit.audit_cells(db, "p").height == 0
    assert audit.bias(db, "p").columns == audit.BIAS_COLUMNS and audit.bias(db, "p").height == 0
    for frame, columns in ((audit.candidate_scores(db, "p"), ["judge", "format", "decoding", "score", "cand_idx",
                                                               "prompt_idx", "position", "s", "r"]),
                           (audit.score_values(db, "p"), ["judge", "format", "decoding", "score", "s", "n", "mult5"]),
                           (audit.stability(db, "p"), ["judge", "format", "decoding", "score", "metric", "full",
                                                       "sub_size", "mean", "sd", "shift"]),
                           (audit.effective_levels(db, "p"), ["judge", "format", "decoding", "score", "alpha",
                                                              "d_alpha", "n_candidates"]),
                           (audit.position_selection(db, "p"), ["judge", "format", "decoding", "n_prompts",
                                                                "first_rate", "last_rate", "uniform_rate"])):
        assert frame.height == 0 and frame.columns == columns


def test_a_cell_without_any_parsed_verdict(db, write_jsonl):
    import audit
    import_pool(db, write_jsonl("p.jsonl", [{"prompt_id": "q", "prompt": "P", "candidate_id": c,
                                             "response": c, "reference": 1} for c in "ab"]), "p")
    v = [{"judge": "j", "format": "likert5", "prompt_id": "q", "candidate_id": c, "raw": "no idea"} for c in "ab"]
    # a tournament whose only call is a self-comparison: no candidate gets a tournament score
    v.append({"judge": "j", "format": "tournament", "prompt_id": "q", "a_id": "a", "b_id": "a", "raw": "TIE"})
    import_verdicts(db, write_jsonl("v.jsonl", v), "p")
    cells = {c["format"]: c for c in audit.audit_cells(db, "p").to_dicts()}
    for fmt, n_verdicts, rate in (("likert5", 2, 0.0), ("tournament", 1, 1.0)):
        c = cells[fmt]
        assert (c["n_verdicts"], c["parse_rate"], c["n_candidates"], c["n_prompts"], c["distinct"],
                c["n_ranked_prompts"]) == (n_verdicts, rate, 0, 0, 0, 0)
        assert c["tie_prob"] is None and c["top1"] is None and c["spearman"] is None
    pos = audit.position_selection(db, "p").to_dicts()
    assert pos == [{"judge": "j", "format": "tournament", "decoding": "greedy", "n_prompts": 0,
                    "first_rate": None, "last_rate": None, "uniform_rate": None}]


