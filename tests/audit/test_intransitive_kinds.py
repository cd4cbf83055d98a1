"""Intransitivity read as the prompts' kinds counted in numpy (audit._intransitive.prompt_kinds: each
prompt's pairs as a k x k array, its triads the C(k, 3) columns) against the per-prompt reading by a
three-way self-join in SQL (kept here: tournament_triads.sql's row per prompt, then pooled_share per
cell; the kinds as DuckDB counted them before, intransitive_kinds.sql, were that self-join grouped), on
random tournaments with ties, both orders, orders that disagree, repeated samples, two judges and two
decodings, prompts of 2 to 7 candidates listed in order or interleaved, in one block or many: the same
frame (the same kinds in the same order, so the same bootstrap draws)."""

import numpy as np
import polars as pl
import pytest

from audit import intransitivity
from audit._bias import cell_rng
import audit._intransitive as intransitive_module
from audit._intransitive import INTRANSITIVE_SCHEMA, RANDOM_SHARE, kinds_share, pooled_share, prompt_kinds
from ingest.scoring import import_verdicts
from ingest.store import import_pool
from ingest.store.database import Database
from tests.fixtures import write_jsonl


def per_prompt_intransitivity(db, pool: str, seed: int = 0, n_boot: int = 500) -> pl.DataFrame:
    with Database.of(db).reading(queries="tests.audit") as read:      # tests/audit/sql/tournament_triads.sql
        triads = read.frame("tournament_triads", pool_id=read.pool_id(pool))
    rows = []
    for (judge, fmt, dec), g in triads.group_by(["judge", "format", "decoding"], maintain_order=True):
        got = pooled_share(g["n_cycles"].to_numpy(), g["n_triads"].to_numpy(), n_boot, cell_rng(seed, judge, fmt, dec))
        rows.append({"judge": judge, "format": fmt, "decoding": dec, "intransitive_prompts": g.height,
                     "intransitive_triads": int(g["n_triads"].sum()), "intransitive_cycles": int(g["n_cycles"].sum()),
                     "intransitive_share": got["share"], "intransitive_lo": got["lo"], "intransitive_hi": got["hi"],
                     "intransitive_random": RANDOM_SHARE})
    return pl.DataFrame(rows, schema=INTRANSITIVE_SCHEMA)


RAWS = ["A++", "A+", "TIE", "B+", "B++", "huh"]


@pytest.mark.parametrize("seed, interleaved, block", [(0, False, None), (1, False, None), (2, False, None),
                                                     (3, True, None), (4, True, 50), (5, False, 7)])
def test_the_kinds_equal_the_per_prompt_reading(tmp_path, monkeypatch, seed, interleaved, block):
    # interleaved: the pool lists candidate c of every prompt before candidate c + 1 of any, so a prompt's
    # cand_idx are not consecutive; block: BLOCK so small that a k's prompts take many blocks (7 entries:
    # one prompt of 2 candidates a block, several blocks for the rest: per_block is at least one prompt)
    if block is not None:
        monkeypatch.setattr(intransitive_module, "BLOCK", block)
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 8, size=40)
    db = tmp_path / "t.duckdb"
    pool = [{"prompt_id": f"p{p}", "prompt": f"q{p}", "candidate_id": f"c{c}", "response": f"{c} to {p}"}
            for p, k in enumerate(sizes) for c in range(k)]
    if interleaved:
        pool.sort(key=lambda r: int(r["candidate_id"][1:]))
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", pool), "t")
    rows = []
    for judge, decoding in (("j1", "greedy"), ("j2", "greedy"), ("j2", "sampled")):
        for p, k in enumerate(sizes):
            for a in range(k):
                for b in range(k):
                    if a == b or rng.random() < 0.3:
                        continue
                    # mostly a transitive order, some noise: few cycles, many repeated kinds of prompt
                    raw = ("A+" if a < b else "B+") if rng.random() < 0.8 else RAWS[int(rng.integers(0, len(RAWS)))]
                    for sample in range(int(rng.integers(1, 3))):
                        rows.append({"judge": judge, "format": "tournament", "prompt_id": f"p{p}", "a_id": f"c{a}",
                                     "b_id": f"c{b}", "raw": raw if sample == 0 else RAWS[int(rng.integers(0, 6))],
                                     "sample": sample, "decoding": decoding})
    import_verdicts(db, write_jsonl(tmp_path / "v.jsonl", rows), "t")
    new, old = intransitivity(db, "t", seed=seed, n_boot=500), per_prompt_intransitivity(db, "t", seed=seed, n_boot=500)
    assert new.height == 3 and new["intransitive_cycles"].sum() > 0
    assert new.equals(old)


def test_kinds_share_by_hand():
    # kinds (0 cycles, 1 triad) x 3 prompts and (1, 4) x 1: share = 1 / (3 + 4) = 1/7, as pooled_share
    # of the four prompts listed one by one; the same draws from the same generator
    got = kinds_share(np.array([[0, 1], [1, 4]]), np.array([3, 1]), 300, np.random.default_rng(5))
    assert got["share"] == pytest.approx(1 / 7)
    assert got == pooled_share(np.array([0, 1, 0, 0]), np.array([1, 4, 1, 1]), 300, np.random.default_rng(5))
    assert kinds_share(np.zeros((0, 2)), np.zeros(0, np.int64), 10, np.random.default_rng(0))["share"] is None


def test_prompt_kinds_by_hand():
    # candidates 0-3 are prompt 0's, 4-6 prompt 1's, 7-8 prompt 2's (two candidates: no triad). Cell 0:
    # prompt 0 has 0 > 1, 1 > 2, 2 > 0 (a cycle: s = +1, +1, -1 toward the lower index) and 0 > 3, 1 > 3,
    # 2 ? 3 asked twice with opposite answers (not decisive): triads (0,1,2) a cycle, (0,1,3) counted, not a
    # cycle, (0,2,3) and (1,2,3) not counted -> (1 cycle, 2 triads). Prompt 1: 4 > 5, 5 > 6, 4 > 6 (+1 each,
    # transitive) and 4 ? 6 asked again with a tie: not decisive -> no triad, not a kind. Cell 1: prompt 1
    # with 4 > 5, 5 > 6, 4 > 6 -> (0 cycles, 1 triad); prompt 2's pair counts for nothing.
    cand_prompt = np.array([0, 0, 0, 0, 1, 1, 1, 2, 2])
    calls = [(0, 0, 1, 1), (0, 1, 2, 1), (0, 0, 2, -1), (0, 0, 3, 1), (0, 1, 3, 1), (0, 2, 3, 1), (0, 2, 3, -1),
             (0, 4, 5, 1), (0, 5, 6, 1), (0, 4, 6, 1), (0, 4, 6, 0),
             (1, 4, 5, 1), (1, 5, 6, 1), (1, 4, 6, 1), (1, 7, 8, 1)]
    cell, lo, hi, s = (np.array(c) for c in zip(*calls))
    assert prompt_kinds(cell, lo, hi, s, cand_prompt, 2).tolist() == [[0, 1, 2, 1], [1, 0, 1, 1]]
    # the same calls in any order, and a pair asked twice alike still decisive
    order = np.random.default_rng(0).permutation(len(calls))
    again = np.append(order, 0)
    assert prompt_kinds(cell[again], lo[again], hi[again], s[again], cand_prompt, 2).tolist() == \
        [[0, 1, 2, 1], [1, 0, 1, 1]]
    assert prompt_kinds(cell[:0], lo[:0], hi[:0], s[:0], cand_prompt, 2).shape == (0, 4)
