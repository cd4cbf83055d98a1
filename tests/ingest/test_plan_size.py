"""count_calls counts a run's calls and their characters from the texts' lengths (ingest.scoring._plan_size),
never building the plan: its numbers against the plan itself (plan_calls) and plan_chars over the texts,
the way count_calls counted before, on pools with prompts of 1 to 6 candidates, missing references
(seeded anchors), characters beyond ASCII and, on frames, two candidates at one position."""

from __future__ import annotations

import random

import polars as pl
import pytest

from ingest.scoring import count_calls, plan_calls, plan_chars
from ingest.scoring._plan_size import plan_size
from ingest.scoring.formats import BUILTIN
from ingest.store import import_pool

FORMATS = ["binary", "likert5", "numeric100", "anchored", "tournament"]
CASES = [("listing", 0), ("balanced", 0), ("both", 0), ("listing", "all"), ("balanced", "all"), ("listing", 3),
         ("balanced", 7), ("both", 2), ("listing", 10_000)]


def reference_count(cands: pl.DataFrame, formats: list[str], schedule, swap, seed: int = 0) -> dict:
    """count_calls as it was: the plan built, its rows counted and plan_chars over the texts."""
    fmts = [BUILTIN[f] for f in formats]
    plan, _ = plan_calls(cands.select("cand_idx", "prompt_idx", "position", "reference"), fmts, schedule, swap, seed)
    per = {f.name: plan.filter(plan["format"] == f.name).height for f in fmts}
    chars = plan_chars(plan, cands.select("prompt_idx", "prompt"), cands.select("cand_idx", "response"),
                       {f.name: f for f in fmts})
    return {"total": plan.height, "per_format": per, "chars": {f.name: chars.get(f.name, 0) for f in fmts}}


def pool_rows(seed: int, n_prompts: int = 40) -> list[dict]:
    rng = random.Random(seed)
    rows = []
    for p in range(n_prompts):
        k = rng.randint(1, 6)
        missing = rng.random() < 0.3           # a prompt without complete references: a seeded anchor
        prompt = "".join(rng.choice("abcé ü🙂") for _ in range(rng.randint(1, 30)))
        for i in range(k):
            rows.append({"prompt_id": f"p{p}", "prompt": prompt, "candidate_id": f"c{p}_{i}",
                         "response": "".join(rng.choice("xyzñ 日本") for _ in range(rng.randint(1, 50))),
                         "reference": None if missing and i == 0 else float(rng.randint(0, 4))})
    return rows


@pytest.mark.parametrize("schedule,swap", CASES)
def test_count_calls_equals_the_plan(db, write_jsonl, schedule, swap):
    import_pool(db, write_jsonl("pool.jsonl", pool_rows(1)), "p")
    from ingest.store import reading
    with reading(db) as unit:
        cands = unit.candidates_with_prompts(unit.pool_id("p"))
    for formats in (FORMATS, ["binary", "likert5", "numeric100"], ["tournament", "anchored"], ["likert5", "likert5"]):
        for seed in (0, 5):
            assert count_calls(db, "p", formats, schedule, swap, seed) == reference_count(cands, formats, schedule,
                                                                                           swap, seed)


def frame(seed: int, duplicate: bool) -> pl.DataFrame:
    """Candidates by prompt and position with texts and their lengths; duplicate: some prompts list two
    candidates at one position (the pairs are then planned, not counted by formula)."""
    rng = random.Random(seed)
    rows, cand = [], 0
    for p in range(30):
        positions = sorted(rng.choice([0, 0, 1, 2]) if duplicate else i for i in range(rng.randint(1, 5)))
        prompt = "q" * rng.randint(0, 9)
        for pos in positions:
            rows.append({"cand_idx": cand, "prompt_idx": p, "position": pos, "reference": float(rng.randint(0, 3)),
                         "response": "r" * rng.randint(0, 20), "prompt": prompt})
            cand += 1
    out = pl.DataFrame(rows, schema={"cand_idx": pl.Int32, "prompt_idx": pl.Int32, "position": pl.Int32,
                                     "reference": pl.Float64, "response": pl.String, "prompt": pl.String})
    return out.with_columns(pl.col("response").str.len_chars().cast(pl.Int64).alias("n_response"),
                            pl.col("prompt").str.len_chars().cast(pl.Int64).alias("n_prompt"))


@pytest.mark.parametrize("duplicate", [False, True])
@pytest.mark.parametrize("schedule,swap", CASES)
def test_plan_size_equals_the_plan(schedule, swap, duplicate):
    cands = frame(3, duplicate)
    for name in FORMATS:
        want = reference_count(cands, [name], schedule, swap)
        assert plan_size(cands, BUILTIN[name], schedule, swap) == (want["total"], want["chars"][name])


def test_hand_counted():
    # two prompts: "ab" with responses "x", "yy", "zzz" (k=3) and "c" with "w" (k=1), template T characters.
    # tournament, listing: 3 pairs of prompt "ab" -> 3 * (T + 2) + each response twice (2 * 6) = 3T + 18
    cands = pl.DataFrame({"cand_idx": [0, 1, 2, 3], "prompt_idx": [0, 0, 0, 1], "position": [0, 1, 2, 0],
                          "reference": [1.0, 2.0, 3.0, 1.0], "n_response": [1, 2, 3, 1], "n_prompt": [2, 2, 2, 1]})
    t = len(BUILTIN["tournament"].template)
    assert plan_size(cands, BUILTIN["tournament"]) == (3, 3 * t + 18)
    # pointwise: 4 calls, 4T + prompts (2+2+2+1) + responses (1+2+3+1) = 4T + 14
    assert plan_size(cands, BUILTIN["binary"]) == (4, 4 * len(BUILTIN["binary"].template) + 14)
    # anchored: the anchor of "ab" is index 3 // 2 = 1 by reference ("yy"), of "c" itself ("w"); 4 forward calls:
    # (2+1+2) + (2+2+2) + (2+3+2) + (1+1+1) = 21, plus 4T
    ta = len(BUILTIN["anchored"].template)
    assert plan_size(cands, BUILTIN["anchored"]) == (4, 4 * ta + 21)
    # every other call reversed too: 2 more ((2+1+2) + (2+3+2) = 12), each with its template
    assert plan_size(cands, BUILTIN["anchored"], swap_sample="all") == (6, 6 * ta + 33)
