"""What the curation preview computes once per pool (train/curation_view.py): the held-out prompts of the
default rule (the derived result 'curation_heldout', basis pool) and the candidates' lengths (the stored
'style_counts' chars), read stored by every preview instead of hashing each prompt id and reading every
candidate's length per judging. Against independent references: the held-out prompts by the rule's
definition (blake2b keys of 'heldout|0|PROMPT_ID' sorted, the smallest round(0.1 n) kept), the lengths
as Python's len of each text, and the picks and summary of train.subsets.curate_pool (which computes its
held-out prompts itself) for every policy, on a pool of many tied values and many prompt ids."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import audit
from audit import derived
from ingest.scoring import import_verdicts
from ingest.store import import_pool
from tests.fixtures import synthetic_pool, synthetic_verdicts, write_jsonl
from train.curation_view import held_out, heldout_frame, lengths, preview_picks
from train.derived_results import DERIVED_RESULTS
from train.subsets import curate_pool

ODD = ["e\u0301", "\U0001F468\u200d\U0001F469", "a\r\nb", "\u00a0", "\u0663", "日本語", ""]


@pytest.fixture
def pools(db, tmp_path):
    """'share': 420 prompts (ids shuffled, unpadded), none marked held out, tied coarse values and
    texts with combining marks, emoji and CJK; 'marked': the same with every 9th prompt marked held out.
    Two judges' verdicts in every format on each."""
    rng = np.random.default_rng(4)
    rows = synthetic_pool(420, k_range=(2, 4), seed=4, missing_ref=0.1)
    order = rng.permutation(420)
    for r in rows:
        r["prompt_id"] = f"id-{order[int(r['prompt_id'][1:])]}"
        r["response"] = "".join(rng.choice(ODD, int(rng.integers(0, 4)))) + "z" * int(rng.integers(0, 9))
    marked = [{**r, "split": "heldout" if int(r["prompt_id"][3:]) % 9 == 0 else "pool"} for r in rows]
    import_pool(db, write_jsonl(tmp_path / "share.jsonl", rows), "share")
    import_pool(db, write_jsonl(tmp_path / "marked.jsonl", marked), "marked")
    verdicts = synthetic_verdicts(rows, ("alpha", "beta"), seed=4, unparsed=0.05)
    for name in ("share", "marked"):
        import_verdicts(db, write_jsonl(tmp_path / f"v-{name}.jsonl", verdicts), name)
        derived.refresh(db, name, DERIVED_RESULTS)          # stores 'curation_heldout' and 'style_counts'
    return db, rows, marked


def test_the_stored_held_out_prompts_are_the_rules(pools):
    db, rows, marked = pools
    ids = sorted({r["prompt_id"] for r in rows})
    assert len(ids) == 420
    # the rule by its definition: round(0.1 x 420) = 42 prompts with the smallest 8-byte blake2b keys
    keyed = sorted(ids, key=lambda p: hashlib.blake2b(f"heldout|0|{p}".encode(), digest_size=8).digest())
    want = sorted(keyed[:42])
    prompts = audit.curation_prompts(db, "share")
    by_idx = dict(zip(prompts["prompt_idx"].to_list(), prompts["prompt_id"].to_list()))
    held, rule = held_out(db, "share")
    assert sorted(by_idx[i] for i in held.to_list()) == want
    assert rule == {"rule": "share", "share": 0.1, "seed": 0, "n": 42}
    stored = derived.read(db, "share", "curation_heldout", results=DERIVED_RESULTS)
    assert stored.filter(pl.col("part") == "heldout").height == 42
    held_m, rule_m = held_out(db, "marked")
    marked_ids = sorted({r["prompt_id"] for r in marked if r["split"] == "heldout"})
    assert sorted(by_idx[i] for i in held_m.to_list()) == marked_ids
    assert rule_m == {"rule": "split", "n": len(marked_ids)}


def test_held_out_computed_where_nothing_is_stored(db, tmp_path):
    """A pool not refreshed: held_out computes the rule (the same as the stored frame's)."""
    rows = synthetic_pool(50, seed=2)
    import_pool(db, write_jsonl(tmp_path / "p.jsonl", rows), "p")
    held, rule = held_out(db, "p")
    frame = heldout_frame(db, "p")
    assert held.len() == 5 and rule["n"] == 5                   # round(0.1 x 50)
    assert sorted(frame.filter(pl.col("part") == "heldout")["prompt_idx"].to_list()) == sorted(held.to_list())
    assert json.loads(frame.filter(pl.col("part") == "rule")["json"][0]) == rule


def test_stored_lengths_are_pythons_len(pools):
    db, _, _ = pools
    texts = audit.candidate_texts(db, "share", list(range(audit.pool_candidates(db, "share").height)))
    want = {int(i): float(len(t)) for i, t in zip(texts["cand_idx"], texts["response"])}
    got = lengths(db, "share")
    assert got.height == len(want) and dict(zip(got["cand_idx"].to_list(), got["chars"].to_list())) == want
    assert any(len(t) != len(t.encode()) for t in texts["response"])          # code points, not bytes


@pytest.mark.parametrize("pool", ["share", "marked"])
def test_preview_picks_equal_curate_pools(pools, pool):
    db, _, _ = pools
    cases = [("judge", j, f) for j in ("alpha", "beta") for f in ("binary", "likert5", "tournament")] \
        + [("random", None, None), ("length", None, None), ("full", None, None)]
    for policy, judge, fmt in cases:
        for rate, seed in ((0.25, 0), (0.5, 3)):
            picks, summary = preview_picks(db, pool, policy, rate, seed, judge, fmt, None)
            want, want_summary, _ = curate_pool(db, pool, policy, rate, seed, judge, fmt)
            assert_frame_equal(picks, want)
            assert summary == want_summary
            assert summary["n_heldout_prompts"] == (42 if pool == "share" else summary["n_heldout_prompts"]) > 0
    with pytest.raises(ValueError, match="unknown policy 'best'"):
        preview_picks(db, pool, "best", 0.25, 0, None, None, None)


def test_a_refresh_hashes_the_prompt_ids_once_and_a_new_judge_not_at_all(db, tmp_path, monkeypatch):
    """The first refresh computes the held-out prompts once (curation_heldout), stored before the preview
    and the overlap read them; a judge whose verdicts come later is curated without computing them."""
    import train.curation_view as view
    rows = synthetic_pool(60, seed=6)
    verdicts = synthetic_verdicts(rows, ("alpha", "beta"), seed=6)
    import_pool(db, write_jsonl(tmp_path / "p.jsonl", rows), "p")
    import_verdicts(db, write_jsonl(tmp_path / "b.jsonl", [v for v in verdicts if v["judge"] == "beta"]), "p")
    calls = []
    real = view.pool_heldout
    monkeypatch.setattr(view, "pool_heldout", lambda *a, **k: calls.append(a) or real(*a, **k))
    derived.refresh(db, "p", DERIVED_RESULTS)
    assert len(calls) == 1
    import_verdicts(db, write_jsonl(tmp_path / "a.jsonl", [v for v in verdicts if v["judge"] == "alpha"]), "p")
    done = {r["name"]: r["status"] for r in derived.refresh(db, "p", DERIVED_RESULTS)["results"]}
    assert done["curation"] == "computed" and done["curation_heldout"] == "current" and len(calls) == 1
    picks, summary = preview_picks(db, "p", "judge", 0.25, 0, "alpha", "binary", None)
    want, want_summary, _ = curate_pool(db, "p", "judge", 0.25, 0, "alpha", "binary")
    assert_frame_equal(picks, want)
    assert summary == want_summary and summary["n_heldout_prompts"] == 6                    # round(0.1 x 60)
