"""Repeat consistency read aggregated (consistency_units.sql: the repeated calls' value counts per unit,
read once for every cell) against the per-call reading it replaces (kept here: every sample of a cell
read as one row, then consistency_row), on pools with many ties, unparsed samples and answer
distributions: the same frame, to 1e-9."""

import math

import numpy as np
import polars as pl
import pytest

from audit import consistency
from audit._bias import cell_rng
from audit._consistency import CONSISTENCY_COLUMNS, consistency_row, scale_level
from audit._read import reading
from ingest.scoring import import_verdicts
from ingest.store import import_pool
from ingest.store.database import Database


def per_call_consistency(db, pool: str, seed: int = 0, n_boot: int = 200) -> pl.DataFrame:
    """The implementation the aggregated one replaced: each cell's samples read one row per call
    (consistency_calls.sql), the statistics computed from them by consistency_row."""
    rows = []
    with reading(db) as read:
        pid = read.pool_id(pool)
        cells = read.frame("cell_calls", pool_id=pid)
    with Database.of(db).reading(queries="tests.audit") as read:      # tests/audit/sql/consistency_calls.sql
        for cell in cells.iter_rows(named=True):
            calls = read.numpy("consistency_calls", pool_id=pid, judge_id=cell["judge_id"],
                               format_id=cell["format_id"], decoding=cell["decoding"])
            level = scale_level(cell["nominal_levels"])
            rng = cell_rng(seed, cell["judge"], cell["format"], cell["decoding"])
            stats = consistency_row(calls["unit"].astype(np.int64), calls["sample"], calls["value"],
                                    calls["purity"], level, n_boot, rng)
            rows.append({"judge": cell["judge"], "format": cell["format"], "decoding": cell["decoding"],
                         "level": level, **stats})
    return pl.DataFrame(rows, schema=CONSISTENCY_COLUMNS)


def assert_same(a: pl.DataFrame, b: pl.DataFrame) -> None:
    assert a.columns == b.columns and a.height == b.height
    for col in a.columns:
        for x, y in zip(a[col].to_list(), b[col].to_list()):
            if isinstance(x, float) or isinstance(y, float):
                assert x is not None and y is not None, (col, x, y)
                assert math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12), (col, x, y)
            else:
                assert x == y, (col, x, y)


RAWS = {"likert5": ["1", "2", "3", "3", "4", "nonsense"], "binary": ["ACCEPT", "REJECT", "REJECT", "maybe"],
        "tournament": ["A+", "TIE", "TIE", "B+", "A++", "??"]}


def random_pool(db, write_jsonl, seed: int, n_prompts: int = 25) -> None:
    """n_prompts x 3 candidates; judges j1 (samples 1 to 4 per call, a third of the calls once) and j2
    (one sample per call: nothing repeated) in likert5, binary and tournament, values drawn from a few
    levels (many ties), some unparsed, some sample-0 answers with a label distribution."""
    rng = np.random.default_rng(seed)
    cands = [{"prompt_id": f"q{p}", "prompt": f"prompt {p}", "candidate_id": c, "response": f"answer {p}{c}",
              "reference": int(rng.integers(0, 3))} for p in range(n_prompts) for c in "abc"]
    import_pool(db, write_jsonl("pool.jsonl", cands), "p")
    rows = []
    for judge, most in (("j1", 4), ("j2", 1)):
        for fmt, raws in RAWS.items():
            calls = [{"candidate_id": c} for c in "abc"] if fmt != "tournament" else \
                [{"a_id": x, "b_id": y} for x, y in (("a", "b"), ("b", "c"), ("c", "a"), ("b", "a"))]
            for p in range(n_prompts):
                for call in calls:
                    for sample in range(int(rng.integers(1, most + 1))):
                        row = {"judge": judge, "format": fmt, "prompt_id": f"q{p}", **call,
                               "raw": raws[int(rng.integers(0, len(raws)))], "sample": sample}
                        if fmt == "likert5" and sample == 0 and rng.random() < 0.5:
                            w = rng.random(2)
                            row["label_probs"] = {"3": float(w[0]), "4": float(w[1])}
                        rows.append(row)
    import_verdicts(db, write_jsonl("v.jsonl", rows), "p")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_aggregated_consistency_equals_the_per_call_reading(db, write_jsonl, seed):
    random_pool(db, write_jsonl, seed)
    new, old = consistency(db, "p", seed=seed, n_boot=200), per_call_consistency(db, "p", seed=seed, n_boot=200)
    assert_same(new, old)
    j1 = new.filter(pl.col("judge") == "j1")
    # drawn: 1 to 4 samples a call, so the most samples is 4 and some units are items in each cell
    assert j1["samples"].to_list() == [4, 4, 4] and all(n > 0 for n in j1["n_items"])
    assert j1.filter(pl.col("format") == "likert5")["expected_agreement"][0] is not None
    j2 = new.filter(pl.col("judge") == "j2")
    assert j2["samples"].to_list() == [1, 1, 1] and j2["n_items"].to_list() == [0, 0, 0]


def test_a_scoped_reading_equals_the_per_call_reading_of_its_judging(db, write_jsonl):
    random_pool(db, write_jsonl, 3, n_prompts=15)
    scoped = Database.of(db).scoped([("j1", "likert5")])
    new, old = consistency(scoped, "p", n_boot=100), per_call_consistency(scoped, "p", n_boot=100)
    assert new.height == 1
    assert_same(new, old)


def test_hand_counted_units(db, write_jsonl):
    # q/a: likert 4, 5, 5 (3 samples), q/b: 4 then an unparsed sample (one parsed: no item), r/a: 3, 3
    import_pool(db, write_jsonl("pool.jsonl", [
        {"prompt_id": p, "prompt": p, "candidate_id": c, "response": c, "reference": 1} for p in "qr" for c in "ab"]), "p")
    rows = [("q", "a", "4", 0, {"4": 0.5, "5": 0.5}), ("q", "a", "5", 1, None), ("q", "a", "5", 2, None),
            ("q", "b", "4", 0, {"4": 1.0}), ("q", "b", "nonsense", 1, None), ("r", "a", "3", 0, None),
            ("r", "a", "3", 1, None), ("r", "b", "2", 0, None)]
    import_verdicts(db, write_jsonl("v.jsonl", [
        {"judge": "j", "format": "likert5", "prompt_id": p, "candidate_id": c, "raw": raw, "sample": s,
         **({"label_probs": probs} if probs else {})} for p, c, raw, s, probs in rows]), "p")
    row = consistency(db, "p", n_boot=50).row(0, named=True)
    # items: q/a (4,5,5) and r/a (3,3); q/b has one parsed sample; the most samples: 3 (q/a)
    assert (row["samples"], row["n_items"]) == (3, 2)
    assert row["flip_rate"] == pytest.approx(1 / 2)                    # q/a flips, r/a does not
    assert row["agreement"] == pytest.approx((2 / 6 + 2 / 2) / 2)       # q/a: 1 equal pair of 3 (x2 ordered)
    assert row["expected_agreement"] == pytest.approx(0.5)             # q/a's sample 0: .5² + .5²; q/b is no item
