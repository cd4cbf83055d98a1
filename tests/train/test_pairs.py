"""Preference pairs (DESIGN.md 'Preference pairs and DPO'), worked by hand on a small pool: a tie,
a flip, a margin at exactly M, a pair judged in one order only, a tie in one order, a pointwise
cell with a tied top, held-out prompts; then the command's file and --json."""

import json
import subprocess

import numpy as np
import polars as pl
import pytest

from ingest.scoring import import_verdicts
from ingest.store import import_pool
from train import comparative_pairs, pair_cell, pointwise_pairs
from train.pairs import LOST
from tests.conftest import EXE


# pool 'hand': p0 has c0 c1 c2 (cand_idx 0 1 2), p1..p4 have c0 c1 (3 4 | 5 6 | 7 8 | 9 10); p4 is held out
SIZES = {"p0": 3, "p1": 2, "p2": 2, "p3": 2, "p4": 2}

# tournament verdicts (A++ +2, A+ +1, TIE 0, B+ -1, B++ -2), as (prompt, slot A, slot B, label);
# x is the earlier-listed candidate, its margin per order: v with x in slot A, -v with x in slot B
TOURNAMENT = [
    ("p0", "c0", "c1", "A+"), ("p0", "c1", "c0", "B+"),    # c0: +1, +1 -> mean 1 (exactly M = 1)
    ("p0", "c0", "c2", "A++"), ("p0", "c2", "c0", "B+"),   # c0: +2, +1 -> 1.5
    ("p0", "c1", "c2", "TIE"), ("p0", "c2", "c1", "A+"),   # c1: 0, -1 -> -0.5: c2 by 0.5; a tie in one order
    ("p1", "c0", "c1", "A+"), ("p1", "c1", "c0", "A+"),    # c0: +1, -1 -> 0: the order decides (a flip)
    ("p2", "c0", "c1", "TIE"), ("p2", "c1", "c0", "TIE"),  # tied in both orders
    ("p3", "c0", "c1", "B++"),                             # one order only: c1 by 2
    ("p4", "c0", "c1", "A++"), ("p4", "c1", "c0", "B++"),  # held out: never a pair
]
# likert5 (normalised (v - 1) / 4): p0 a tied top (c0, c1 at 5) over c2 at 2; p1 all 3 (tied);
# p2 4 vs 3 (0.25); p3 1 vs 5 (c1 by 1.0); p4 held out
LIKERT = {("p0", "c0"): "5", ("p0", "c1"): "5", ("p0", "c2"): "2", ("p1", "c0"): "3", ("p1", "c1"): "3",
          ("p2", "c0"): "4", ("p2", "c1"): "3", ("p3", "c0"): "1", ("p3", "c1"): "5", ("p4", "c0"): "5",
          ("p4", "c1"): "1"}


@pytest.fixture
def hand(db, write_jsonl):
    rows = [{"prompt_id": p, "prompt": f"Q {p}?", "candidate_id": f"c{c}", "response": f"answer {p}{c}",
             "split": "heldout" if p == "p4" else "pool"} for p, k in SIZES.items() for c in range(k)]
    import_pool(db, write_jsonl("pool.jsonl", rows), "hand")
    verdicts = [{"judge": "j", "format": "tournament", "prompt_id": p, "a_id": a, "b_id": b, "raw": r}
                for p, a, b, r in TOURNAMENT]
    verdicts += [{"judge": "j", "format": "likert5", "prompt_id": p, "candidate_id": c, "raw": r}
                 for (p, c), r in LIKERT.items()]
    import_verdicts(db, write_jsonl("v.jsonl", verdicts), "hand")
    return db


def as_tuples(pairs: pl.DataFrame) -> list[tuple]:
    return [(r["prompt_idx"], r["chosen"], r["rejected"], r["margin"]) for r in pairs.iter_rows(named=True)]


def test_comparative_one_pass_over_both_orders(hand):
    pairs, s = pair_cell(hand, "hand", "j", "tournament", min_margin=1.0)
    # p0: c0>c1 by 1 (exactly M: kept), c0>c2 by 1.5; c1 vs c2 by 0.5 < 1; p3: c1>c0 by 2 (one order)
    assert as_tuples(pairs) == [(0, 0, 1, 1.0), (0, 0, 2, 1.5), (3, 8, 7, 2.0)]
    # p1 (+1 and -1 average to 0) and p2 are ties; no flips or one-order losses without --both-orders
    assert s["lost"] == {"tied": 2, "flipped": 0, "below_margin": 1, "one_order_only": 0}
    assert (s["pairs"], s["prompts"], s["kind"], s["n_heldout_prompts"]) == (3, 2, "comparative", 1)


def test_comparative_both_orders(hand):
    pairs, s = pair_cell(hand, "hand", "j", "tournament", min_margin=1.0, both_orders=True)
    assert as_tuples(pairs) == [(0, 0, 1, 1.0), (0, 0, 2, 1.5)]
    # flipped: p1 (A+ both times: each order prefers the one in slot A) and p0's c1 vs c2 (a tie in
    # one order, c2 in the other); tied: p2; one order only: p3
    assert s["lost"] == {"tied": 1, "flipped": 2, "below_margin": 0, "one_order_only": 1}
    assert (s["pairs"], s["prompts"]) == (2, 1)
    # just above the exact margin, p0's c0 > c1 (mean 1) falls below it
    pairs, s = pair_cell(hand, "hand", "j", "tournament", min_margin=1.0 + 1e-6, both_orders=True)
    assert as_tuples(pairs) == [(0, 0, 2, 1.5)] and s["lost"]["below_margin"] == 1


def test_pointwise_tied_top_uses_the_audit_key(hand):
    pairs, s = pair_cell(hand, "hand", "j", "likert5", min_margin=0.5, seed=3)
    # the key of the pool's 11 candidates, drawn independently: the tied top (cand 0, 1) goes to the larger
    key = np.random.default_rng(3).random(11)
    top = 0 if key[0] > key[1] else 1
    # p0: (5 - 2) / 4 = 0.75; p3: c1 (8) over c0 (7) by (5 - 1) / 4 = 1; p1 tied; p2 0.25 < 0.5
    assert as_tuples(pairs) == [(0, top, 2, 0.75), (3, 8, 7, 1.0)]
    assert pairs["tie_broken"].to_list() == [True, False]
    assert s["lost"] == {"tied": 1, "flipped": 0, "below_margin": 1, "one_order_only": 0} and s["kind"] == "pointwise"
    # another seed's key may pick the other one; the rule stays the larger key
    for seed in range(8):
        key = np.random.default_rng(seed).random(11)
        assert pair_cell(hand, "hand", "j", "likert5", seed=seed)[0]["chosen"][0] == (0 if key[0] > key[1] else 1)


def test_pointwise_bottom_ties_and_every_item_accounted():
    # one prompt: scores .5 .5 .25 .25 -> chosen the larger-keyed of the top two, rejected the smaller-keyed bottom
    scores = pl.DataFrame({"cand_idx": [0, 1, 2, 3], "prompt_idx": [0] * 4, "s": [0.5, 0.5, 0.25, 0.25]})
    key = np.random.default_rng(0).random(4)
    pairs, lost = pointwise_pairs(scores, 4, 0.0, 0)
    assert pairs["chosen"][0] == (0 if key[0] > key[1] else 1)
    assert pairs["rejected"][0] == (2 if key[2] < key[3] else 3) and pairs["margin"][0] == 0.25
    # random cells: pairs + losses = the (non-held-out) items, and every kept margin is >= M
    rng = np.random.default_rng(1)
    for _ in range(20):
        n = 60
        calls = pl.DataFrame({"prompt_idx": rng.integers(0, 6, n), "x": rng.integers(0, 3, n),
                              "swapped": rng.random(n) < 0.5, "value": rng.integers(-2, 3, n).astype(float)})
        calls = calls.with_columns((pl.col("x") + 1 + pl.lit(rng.integers(0, 2))).alias("y"))
        items = calls.select("prompt_idx", "x", "y").unique().height
        for both in (False, True):
            m = float(rng.choice([0.0, 0.5, 1.0, 1.5]))
            pairs, lost = comparative_pairs(calls, m, both)
            assert pairs.height + sum(lost.values()) == items and set(lost) == set(LOST)
            assert (pairs["margin"] >= m).all() and (pairs["margin"] > 0).all()


def test_pairs_command_writes_trl_rows_and_json(hand, tmp_path):
    out = tmp_path / "pairs.jsonl"
    proc = subprocess.run([EXE, "pairs", "--pool", "hand", "--judge", "j", "--format", "tournament", "--min-margin", "1",
                           "--both-orders", "--out", str(out), "--json"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert (doc["pairs"], doc["prompts"]) == (2, 1)
    assert doc["lost"] == {"tied": 1, "flipped": 2, "below_margin": 0, "one_order_only": 1}
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert lines[0] == {"prompt": [{"role": "user", "content": "Q p0?"}],
                        "chosen": [{"role": "assistant", "content": "answer p00"}],
                        "rejected": [{"role": "assistant", "content": "answer p01"}],
                        "prompt_id": "p0", "chosen_id": "c0", "rejected_id": "c1", "margin": 1.0}
    assert [(x["chosen_id"], x["rejected_id"], x["margin"]) for x in lines] == [("c0", "c1", 1.0), ("c0", "c2", 1.5)]
    assert all(x["prompt_id"] != "p4" for x in lines)             # held out
    rule = json.loads((tmp_path / "pairs.rule.json").read_text())
    assert rule["both_orders"] is True and rule["min_margin"] == 1.0 and rule["format"] == "tournament"
    # plain output says what was lost; errors say what to change
    proc = subprocess.run([EXE, "pairs", "--pool", "hand", "--judge", "j", "--format", "tournament", "--both-orders",
                           "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "2 flipped" in proc.stdout and "1 one order only" in proc.stdout
    proc = subprocess.run([EXE, "pairs", "--pool", "hand", "--judge", "j", "--format", "likert5", "--both-orders",
                           "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "pointwise" in proc.stderr
    proc = subprocess.run([EXE, "pairs", "--pool", "hand", "--judge", "j", "--format", "binary", "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "no verdicts for that cell" in proc.stderr
    proc = subprocess.run([EXE, "pairs", "--pool", "hand", "--judge", "j", "--format", "tournament", "--min-margin", "3",
                           "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "no pairs" in proc.stderr and "below_margin 4" in proc.stderr


