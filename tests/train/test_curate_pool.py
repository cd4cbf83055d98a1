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


def select_before_issue_29(cands, rate, seed, n_pool_candidates, n_pool_prompts):
    """train.curate.select as it was in polars before issue 29 (the reference the numpy one must equal)."""
    from audit import tiebreak_key
    from train.curate import PICK_SCHEMA, keep_count, prompt_key
    ckey = tiebreak_key(n_pool_candidates, seed)
    pkey = prompt_key(n_pool_prompts, seed)
    c = cands.select(pl.col("prompt_idx").cast(pl.Int64), pl.col("cand_idx").cast(pl.Int64),
                     pl.col("value").cast(pl.Float64)).with_columns(
        pl.Series("_key", ckey[cands["cand_idx"].to_numpy()]))
    c = c.with_columns((pl.col("value") == pl.col("value").max().over("prompt_idx")).alias("_top"))
    picks = (c.filter("_top").sort(["prompt_idx", "_key"], descending=[False, True])
             .group_by("prompt_idx", maintain_order=True)
             .agg(pl.col("cand_idx").first(), pl.col("value").first(), pl.len().cast(pl.Int64).alias("n_top")))
    picks = picks.with_columns(pl.Series("_pkey", pkey[picks["prompt_idx"].to_numpy()]))
    picks = picks.sort(["value", "_pkey"], descending=[True, True]).with_row_index("rank")
    n_keep = keep_count(rate, picks.height)
    picks = picks.with_columns(pl.col("rank").cast(pl.Int64), (pl.col("rank") < n_keep).alias("kept"))
    if 0 < n_keep:
        cut = picks["value"][n_keep - 1]
        split = picks.filter(pl.col("value") == cut)["kept"].n_unique() > 1
    else:
        cut, split = None, False
    return picks.with_columns((pl.col("n_top") >= 2).alias("pick_tied"),
                              (pl.lit(split) & (pl.col("value") == cut)).fill_null(False).alias("cut_tied")) \
        .select(list(PICK_SCHEMA))


@pytest.mark.parametrize("levels", [2, 5, 1000])
def test_select_in_numpy_equals_the_polars_select_it_replaced(levels):
    """Random pools (1-6 candidates per prompt, some prompts absent, rows shuffled or in prompt order),
    scores on `levels` values (2: nearly every pick and cut is a tie), every rate and a few seeds."""
    import numpy as np
    from train.curate import select
    rng = np.random.default_rng(levels)
    for trial in range(6):
        k = rng.integers(1, 7, size=400)
        prompt = np.repeat(np.arange(400), k)
        cand = np.arange(prompt.size)
        keep = rng.random(prompt.size) > 0.15                  # held-out or unscored candidates
        frame = pl.DataFrame({"prompt_idx": prompt[keep], "cand_idx": cand[keep],
                              "value": rng.integers(0, levels, size=int(keep.sum())) / max(levels - 1, 1)})
        if trial % 2:
            frame = frame.sample(fraction=1.0, shuffle=True, seed=trial)
        for rate in (0.05, 0.25, 0.5, 1.0):
            for seed in (0, 1, 9):
                want = select_before_issue_29(frame, rate, seed, prompt.size, 400)
                got = select(frame, rate, seed, prompt.size, 400)
                assert got.equals(want), (levels, trial, rate, seed)
                if levels == 2 and rate == 0.25:
                    assert got["cut_tied"].any() and got["pick_tied"].any()    # the ties are exercised


def test_message_lines_are_json_dumps_of_to_messages_byte_for_byte():
    import json
    from train.curate import to_messages
    from train.subsets import message_lines
    texts = pl.DataFrame({"prompt": ['say "hi"\n\tnow', "ünïcödé ✓ 漢字", "back\\slash \x00\x1f ctl", "", "\u2028 sep"],
                          "response": ["plain", 'q"uote', "emoji 🎉 and \ud7ff", "\r\n", None]})
    want = [json.dumps(row, ensure_ascii=False) for row in to_messages(texts)]
    assert message_lines(texts) == want and len(want) == 5
    assert json.loads(want[4])["completion"][0]["content"] is None
