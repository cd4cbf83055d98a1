"""Issue 29: `curate` out of core (train.subsets.curate_pool: one row per prompt and the one cell's
values from the store) picks exactly what the in-memory rule (train.curate.curate over
audit.pool_candidates and audit.candidate_scores) picks, on real pools in real DuckDB files."""

from __future__ import annotations

import polars as pl
import pytest

import audit
from ingest.store import import_pool
from ingest.scoring import import_verdicts
from tests.fixtures import synthetic_pool, synthetic_verdicts
from train.curate import curate, heldout_rule
from train.subsets import curate_pool


@pytest.fixture
def scored(db, write_jsonl):
    """A 40-prompt pool (coarse references: ties, some missing; every 7th prompt marked held out in
    'marked', none in 'share') with two judges' verdicts in four formats, some unparsed."""
    rows = synthetic_pool(40, seed=11, missing_ref=0.15)
    for i, r in enumerate(rows):
        r["response"] = "x" * (3 + (i * 7) % 11)           # lengths that tie across prompts
    marked = [{**r, "split": "heldout" if int(r["prompt_id"].lstrip("p")) % 7 == 0 else "pool"} for r in rows]
    import_pool(db, write_jsonl("share.jsonl", rows), "share")
    import_pool(db, write_jsonl("marked.jsonl", marked), "marked")
    verdicts = synthetic_verdicts(rows, ("alpha", "beta"), seed=3, unparsed=0.1)
    for pool in ("share", "marked"):
        import_verdicts(db, write_jsonl(f"v-{pool}.jsonl", verdicts), pool)
    return db


CASES = [("judge", j, f) for j in ("alpha", "beta") for f in ("binary", "likert5", "numeric100", "tournament")] \
    + [("random", None, None), ("length", None, None), ("full", None, None)]


@pytest.mark.parametrize("pool", ["share", "marked"])
def test_out_of_core_curation_equals_the_in_memory_rule(scored, pool):
    cands = audit.pool_candidates(scored, pool)
    assert cands.height > 100 and cands["reference"].null_count() > 0
    n_compared = 0
    for policy, judge, fmt in CASES:
        scores = audit.candidate_scores(scored, pool, judge=judge, fmt=fmt) if policy == "judge" else None
        for rate, seed, share in ((0.25, 0, 0.1), (0.5, 3, 0.1), (1.0, 1, None), (0.05, 7, 0.3)):
            want, want_s = curate(cands, scores, policy, rate, seed, judge, fmt, holdout_share=share)
            got, got_s, rule = curate_pool(scored, pool, policy, rate, seed, judge, fmt, holdout_share=share)
            assert got.equals(want), (policy, judge, fmt, rate, seed, share)
            assert got_s == want_s
            assert rule == heldout_rule(cands, share)
            n_compared += want.height
    assert n_compared > 1000


def test_an_unscored_cell_gives_no_picks_and_the_default_decoding(scored):
    """A judge x format with no verdicts gives no picks (make_subset then names the scored cells)."""
    got, s, _ = curate_pool(scored, "share", "judge", 0.5, 0, "alpha", "no-such-format")
    assert got.height == 0 and s["n_selected"] == 0 and s["decoding"] == "greedy"
    assert audit.cell_values(scored, "share", "alpha", "likert5")[1] == "greedy"


def test_baseline_values_refuse_the_judge_policy(scored):
    with pytest.raises(ValueError, match="not a baseline"):
        audit.baseline_values(scored, "share", "judge")
    vals = audit.baseline_values(scored, "share", "full")
    ref = audit.pool_candidates(scored, "share").with_row_index("cand_idx").filter(pl.col("reference").is_not_null())
    assert sorted(vals["cand_idx"].to_list()) == ref["cand_idx"].cast(pl.Int64).to_list()
