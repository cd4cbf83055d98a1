"""The nine wrong programs of issue 13, each applied to a copy of the code and run against the test
that must catch it. Prints one line per mutation; exits 1 if any survives.

    python tests/mutation/nine.py

mutmut mutates Python only, one operator or literal at a time; these are the hand-made,
realistic mutations the issue lists (one of them in SQL), so they are checked here by name.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# (what is wrong, file, original text, mutated text, the test that must fail)
NINE = [
    ("a one-sided tie counted as consistent", "audit/_bias.py",
     "np.mean(np.sign(v_fwd) == -np.sign(v_rev))", "np.mean(np.sign(v_fwd) * np.sign(v_rev) <= 0)",
     "tests/audit/test_bias.py::test_consistency_counts_a_tie_in_both_orders_but_not_a_one_sided_tie"),
    ("a 90% bootstrap interval reported as 95%", "audit/_bias.py",
     "np.percentile(boots, [2.5, 97.5], axis=0)", "np.percentile(boots, [5, 95], axis=0)",
     "tests/audit/test_bias.py::test_bootstrap_interval_of_plus_minus_one_items_has_the_binomial_width"),
    ("anchored scores normalised by 5 instead of 4", "audit/_scores.py",
     "(value[keep] - lo) / (hi - lo)", "(value[keep] - lo) / (hi - lo + 1)",
     "tests/audit/test_audit_hand.py::test_anchored_scores_use_forward_calls_only"),
    ("the stability subsample rounded up instead of down", "audit/_stability.py",
     "size = int(n * fraction)", "size = int(np.ceil(n * fraction))",
     "tests/audit/test_stability.py::test_stability_on_varying_scores_matches_the_hypergeometric_law"),
    ("two-letter labels matched case-sensitively", "ingest/scoring/formats/_parsers.py",
     "flags = 0 if len(key) == 1 else re.IGNORECASE", "flags = 0 if len(key) <= 2 else re.IGNORECASE",
     "tests/ingest/test_parsers.py::test_parser_table"),
    ("the curation size rounded down instead of to the nearest", "train/curate.py",
     "int(math.floor(rate * n_eligible + 0.5))", "int(math.floor(rate * n_eligible))",
     "tests/train/test_curate.py::test_keep_count_rounds_half_up"),
    ("the sign of the reference gap flipped (q_gap_corr turned around)", "audit/sql/bias_items.sql",
     "cx.reference - cy.reference AS ref_gap", "cy.reference - cx.reference AS ref_gap",
     "tests/audit/test_bias.py::test_q_gap_corr_follows_the_reference_gap_of_x_minus_y"),
    ("the position table's uniform rate as 1/mean(k) instead of mean(1/k)", "audit/_positions.py",
     "np.sum(1.0 / sizes)])", "sizes.size ** 2 / np.sum(sizes)])",    # per block: n_b / mean(k) for sum(1/k)
     "tests/audit/test_positions.py::test_audit_top1_and_position_selection_agree_through_the_database"),
    ("top-1's seeded tie-break picking the smallest key instead of the largest", "audit/_metrics.py",
     "better = jt[i] & (K[i] > best)", "better = jt[i] & ((K[i] < best) | (best < 0))",
     "tests/audit/test_audit_top1.py::test_top1_expected_by_hand_and_top1_follows_the_largest_key"),
]


def main() -> int:
    survived = 0
    for what, path, original, mutated, test in NINE:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            for part in ("audit", "ingest", "train", "app", "tests", "pyproject.toml"):
                src = REPO / part
                if src.is_dir():
                    shutil.copytree(src, work / part, ignore=shutil.ignore_patterns("__pycache__"))
                else:
                    shutil.copy2(src, work / part)
            target = work / path
            text = target.read_text(encoding="utf-8")
            if text.count(original) != 1:
                print(f"  ?       {what}: '{original}' is not (once) in {path}; update tests/mutation/nine.py")
                survived += 1
                continue
            target.write_text(text.replace(original, mutated), encoding="utf-8")
            # the copy comes first on sys.path (cwd), ahead of the editable install
            proc = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", test],
                                  cwd=work, capture_output=True, text=True)
            caught = proc.returncode == 1
            survived += not caught
            print(f"  {'killed ' if caught else 'SURVIVED'}  {what}\n           by {test}"
                  + ("" if caught or proc.returncode == 0 else f" (pytest exit {proc.returncode})"))
    print(f"{len(NINE) - survived} of {len(NINE)} killed")
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())
