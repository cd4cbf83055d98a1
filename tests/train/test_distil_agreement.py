"""A student's agreement with its teacher and with the human labels, with 95% Wilson intervals
(train/_distil_agreement.py): the interval against scipy and by hand, the two kinds of human labels by
hand, and a student's model card on a pool whose accept labels were imported (the humans' side known
here from the responses' words)."""

import json

import numpy as np
import polars as pl
import pytest
from scipy.stats import binomtest

from ingest.scoring import import_verdicts
from ingest.scoring.judges.distilled import Student
from ingest.store import import_labels, import_pool
from tests.fixtures import write_jsonl
from tests.train.test_distil import rows_of
from train._distil_agreement import human_agreement, proportion, wilson
from train.distil import distil, held_out_prompts


@pytest.mark.parametrize("k,n", [(0, 5), (1, 5), (8, 10), (37, 60), (60, 60), (113, 240)])
def test_wilson_equals_scipys(k, n):
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert wilson(k, n) == pytest.approx((ci.low, ci.high), abs=1e-12)


def test_wilson_by_hand():
    # k = 8, n = 10, z = 1.96: p = 0.8, z² = 3.8416; centre 0.8 + 3.8416 / 20 = 0.99208;
    # half 1.96 √(0.8·0.2/10 + 3.8416/400) = 1.96 √0.025604 = 0.313624; denominator 1 + 0.38416 = 1.38416
    # lo = (0.99208 − 0.313624) / 1.38416 = 0.49016, hi = (0.99208 + 0.313624) / 1.38416 = 0.94332
    assert wilson(8, 10, z=1.96) == pytest.approx((0.49016, 0.94332), abs=1e-5)
    # below 5 items: a share, no interval; none: no share
    assert proportion(np.array([True, True, False])) == {"n": 3, "k": 2, "share": 2 / 3, "lo": None, "hi": None}
    assert proportion(np.array([], dtype=bool))["share"] is None


def test_human_agreement_by_hand():
    values = {"student": {1: 0.75, 2: 0.25, 3: 0.5, 4: 1.0, 5: 0.0, 6: 0.5},
              "teacher": {1: 1.0, 2: 0.5, 3: 0.0, 4: 1.0, 5: 0.5, 6: 0.5}}
    # accept items: y is the mean of the votes (accept 1, reject 0)
    #   1: y 1   humans accept; student 0.75 >= ½ accept (agrees); teacher 1 accept (agrees)
    #   2: y 0   humans reject; student 0.25 reject (agrees); teacher 0.5 accept (disagrees)
    #   3: y ⅔   humans accept; student 0.5 accept (agrees); teacher 0 reject (disagrees)
    #   4: y ½   an even split: left out
    #   9: y 1   candidate 9 unscored: left out
    accept = pl.DataFrame({"prompt_idx": [0, 0, 0, 1, 2], "a_idx": [1, 2, 3, 4, 9], "b_idx": [None] * 5,
                           "y": [1.0, 0.0, 2 / 3, 0.5, 1.0]})
    # pair items (a_idx < b_idx, y in favour of a_idx: A above ½, B below, tie at ½)
    #   (1, 2) y 1 -> A; student 0.75 > 0.25 A (agrees); teacher 1 > 0.5 A (agrees)
    #   (4, 5) y ½ -> tie; student 1 > 0 A (disagrees); teacher 1 > 0.5 A (disagrees)
    #   (3, 6) y 0 -> B; student 0.5 = 0.5 tie (disagrees); teacher 0 < 0.5 B (agrees)
    pairs = pl.DataFrame({"prompt_idx": [0, 1, 2], "a_idx": [1, 4, 3], "b_idx": [2, 5, 6], "y": [1.0, 0.5, 0.0]})
    got = human_agreement(values, accept, pairs)
    assert got["accept"]["n_items"] == 3
    assert (got["accept"]["student"]["k"], got["accept"]["teacher"]["k"]) == (3, 1)
    assert got["pair"]["n_items"] == 3
    assert (got["pair"]["student"]["k"], got["pair"]["teacher"]["k"]) == (1, 2)
    assert got["pair"]["student"]["lo"] is None          # 3 items: too few for an interval
    empty = human_agreement(values, accept.head(0), pairs.head(0))
    assert empty["accept"]["n_items"] == empty["pair"]["n_items"] == 0 and empty["pair"]["student"]["share"] is None


def test_a_students_card_gives_both_agreements_with_intervals(db, tmp_path):
    rows, quality = rows_of(60)
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", rows), "p")
    verdicts = [{"judge": "teacher", "format": "likert5", "prompt_id": r["prompt_id"], "candidate_id": r["candidate_id"],
                 "raw": str(quality[(r["prompt_id"], r["candidate_id"])] + 1)} for r in rows]
    import_verdicts(db, write_jsonl(tmp_path / "verdicts.jsonl", verdicts), "p")
    # before any label: too few labels, with n
    card = distil(db, "p", "teacher", "likert5", tmp_path / "s0", held_out=0.25, seed=3)
    assert card["humans_held_out"]["accept"]["n_items"] == 0
    assert "accept labels: too few labels (n = 0" in (tmp_path / "s0" / "card.md").read_text()
    # the humans accept a response of quality 3 or 4 ("solid", "excellent"), reject one of 0 to 2, on
    # every candidate of the first 40 prompts; a second annotator contradicts the first on prompt p0's
    # candidates (an even split: left out)
    labelled = [r for r in rows if int(r["prompt_id"][1:]) < 40]
    labels = [{"prompt_id": r["prompt_id"], "candidate_id": r["candidate_id"], "annotator": "h1",
               "label": "accept" if quality[(r["prompt_id"], r["candidate_id"])] >= 3 else "reject"} for r in labelled]
    labels += [{**lab, "annotator": "h2", "label": "reject" if lab["label"] == "accept" else "accept"}
               for lab in labels if lab["prompt_id"] == "p0"]
    # and pair labels on (c0, c1) of the same prompts: the better quality wins, equal is a tie
    sign = {1: "A", -1: "B", 0: "tie"}
    labels += [{"prompt_id": f"p{p}", "a_id": "c0", "b_id": "c1", "annotator": "h1",
                "label": sign[int(np.sign(quality[(f"p{p}", "c0")] - quality[(f"p{p}", "c1")]))]} for p in range(40)]
    import_labels(db, write_jsonl(tmp_path / "labels.jsonl", labels), "p")
    out = tmp_path / "s"
    card = distil(db, "p", "teacher", "likert5", out, held_out=0.25, seed=3)
    test = held_out_prompts([r["prompt_id"] for r in rows], 0.25, 3)
    held = [r for r in labelled if r["prompt_id"] in test and r["prompt_id"] != "p0"]
    student = Student.load(out)
    # the student accepts when its answer's normalised value (v − 1) / 4 is ½ or more: answer 3, 4 or 5
    accepts = [int(a) >= 3 for a in student.answers([r["prompt"] for r in held], [r["response"] for r in held])]
    human = [quality[(r["prompt_id"], r["candidate_id"])] >= 3 for r in held]
    k = int(np.sum(np.array(accepts) == np.array(human)))
    # the teacher's answer q + 1 >= 3 accepts qualities 2 to 4; the humans 3 and 4: it disagrees on quality 2
    k_teacher = sum(quality[(r["prompt_id"], r["candidate_id"])] != 2 for r in held)
    got = card["humans_held_out"]["accept"]
    assert got["n_items"] == len(held) > 5
    assert (got["student"]["k"], got["teacher"]["k"]) == (k, k_teacher)
    ci = binomtest(k, len(held)).proportion_ci(method="wilson")
    assert (got["student"]["lo"], got["student"]["hi"]) == pytest.approx((ci.low, ci.high))
    # pairs: the student's side is the sign of its two values' difference, the teacher's of q0 − q1 (always right)
    pairs = [p for p in range(40) if f"p{p}" in test]
    by = {(r["prompt_id"], r["candidate_id"]): r for r in rows}
    answer = {key: int(student.answers([r["prompt"]], [r["response"]])[0]) for key, r in by.items() if key[0] in test}
    k_pair = sum(np.sign(answer[(f"p{p}", "c0")] - answer[(f"p{p}", "c1")]) ==
                 np.sign(quality[(f"p{p}", "c0")] - quality[(f"p{p}", "c1")]) for p in pairs)
    got_pair = card["humans_held_out"]["pair"]
    assert got_pair["n_items"] == len(pairs) and (got_pair["student"]["k"], got_pair["teacher"]["k"]) == (k_pair, len(pairs))
    # the teacher agreement's interval: Wilson of the exact agreements on the 60 held-out candidates
    a = card["agreement_held_out"]
    ci = binomtest(round(a["exact"] * a["n"]), a["n"]).proportion_ci(method="wilson")
    assert (a["exact_lo"], a["exact_hi"]) == pytest.approx((ci.low, ci.high))
    text = (out / "card.md").read_text()
    assert f"accept labels (n = {len(held)}): student {k / len(held):.3f} (95% CI" in text
    assert f"pair labels (n = {len(pairs)}): student" in text
    assert json.loads((out / "card.json").read_text())["humans_held_out"] == card["humans_held_out"]
