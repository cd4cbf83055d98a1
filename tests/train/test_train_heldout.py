"""Held-out prompts (train/heldout.py's documented rule), with the expected sets worked out here:
the prompts a pool marks; else round(share x n) prompts (at least one, halves up) with the
smallest key blake2b('heldout|SEED|PROMPT_ID') (8-byte digest)."""

import hashlib

import polars as pl
import pytest

from train.heldout import heldout_prompt_ids


def _prompts(ids, marked=None):
    return pl.DataFrame({"prompt_id": ids, "marked_heldout": marked or [None] * len(ids)},
                        schema={"prompt_id": pl.String, "marked_heldout": pl.Boolean})


def _smallest(ids, n, seed):
    key = {p: hashlib.blake2b(f"heldout|{seed}|{p}".encode(), digest_size=8).digest() for p in ids}
    return sorted(sorted(ids, key=key.get)[:n])


@pytest.mark.parametrize("share", [0, 1, -0.1, 1.5])
def test_share_must_lie_strictly_between_0_and_1(share):
    with pytest.raises(ValueError) as err:
        heldout_prompt_ids(_prompts(["a"]), share=share)
    assert str(err.value) == f"share must be in (0, 1), not {share}"


def test_marked_prompts_are_the_held_out_ones():
    ids, info = heldout_prompt_ids(_prompts(["d", "a", "c", "b"], [True, None, False, True]))
    assert ids == ["b", "d"] and info == {"rule": "split", "n": 2}      # sorted; null is not marked


def test_a_seeded_share_halves_rounded_up_and_at_least_one():
    ids = [f"p{i:02d}" for i in range(25)]
    # 0.1 x 25 = 2.5 -> 3 (halves up); 0.01 x 25 = 0.25 -> 0 -> at least 1; 0.3 x 25 = 7.5 -> 8
    for share, n in ((0.1, 3), (0.01, 1), (0.3, 8)):
        for seed in (0, 1):
            got, info = heldout_prompt_ids(_prompts(ids), share=share, seed=seed)
            assert got == _smallest(ids, n, seed)
            assert info == {"rule": "share", "share": share, "seed": seed, "n": n}
    assert heldout_prompt_ids(_prompts(ids), share=0.1, seed=0)[0] != heldout_prompt_ids(_prompts(ids), share=0.1, seed=1)[0]
    # the choice follows the prompt id, not the row order
    assert heldout_prompt_ids(_prompts(ids[::-1]))[0] == heldout_prompt_ids(_prompts(ids))[0]
    assert heldout_prompt_ids(_prompts([])) == ([], {"rule": "share", "share": 0.1, "seed": 0, "n": 0})
    assert heldout_prompt_ids(_prompts(["only"]), share=0.9)[0] == ["only"]      # min(n, 1)


def test_the_share_equals_the_keys_order_and_is_not_served_for_other_prompts():
    # issue 29: keys drawn in one pass and the last answer kept; the reference sorts by _key itself
    import polars as pl
    from train import heldout
    ids = [f"p{i}" for i in range(5000)]
    frame = pl.DataFrame({"prompt_id": ids, "marked_heldout": [False] * len(ids)})
    want = sorted(sorted(ids, key=lambda p: heldout._key(p, 3))[:500])
    assert heldout.heldout_prompt_ids(frame, 0.1, 3)[0] == want
    assert heldout.heldout_prompt_ids(frame, 0.1, 3)[0] == want            # the kept answer
    other = frame.with_columns(pl.col("prompt_id") + "x")
    assert heldout.heldout_prompt_ids(other, 0.1, 3)[0] == sorted(
        sorted(other["prompt_id"].to_list(), key=lambda p: heldout._key(p, 3))[:500])
    assert heldout.heldout_prompt_ids(frame, 0.1, 4)[0] != want             # another seed, other prompts
