"""audit/_labelling.py: the frame a new label queue draws from and the draw (nothing stored), on a
hand-made pool: every pair of a prompt's candidates (or every candidate) without a cell, the pairs a
pointwise cell scored with f = 1 / 1/2 / 0, inclusion n/M, and the requests it refuses."""

import polars as pl
import pytest

from audit import AuditError, draw_label_queue
from audit._labelling import queue_frame
from ingest.store import import_pool
from ingest.scoring import import_verdicts


def _hand_pool(db, write_jsonl):
    # prompt q: a, b, c; prompt r: d, e. Judge j, likert5: a 5, b 3, c 3, d 1, e unparsed;
    # judge t, tournament: one call (a, b)
    rows = [{"prompt_id": p, "prompt": f"question {p}", "candidate_id": c, "response": f"{c} says",
             "reference": 1.0} for p, cs in (("q", "abc"), ("r", "de")) for c in cs]
    import_pool(db, write_jsonl("p.jsonl", rows), "p")
    v = [{"judge": "j", "format": "likert5", "prompt_id": p, "candidate_id": c, "raw": raw}
         for p, c, raw in (("q", "a", "5"), ("q", "b", "3"), ("q", "c", "3"), ("r", "d", "1"), ("r", "e", "?"))]
    v.append({"judge": "t", "format": "tournament", "prompt_id": "q", "a_id": "a", "b_id": "b", "raw": "A+"})
    import_verdicts(db, write_jsonl("v.jsonl", v), "p")


def test_without_a_cell_every_pair_or_candidate_equally_likely(db, write_jsonl):
    _hand_pool(db, write_jsonl)
    # pairs within a prompt: q has 3 (ab, ac, bc), r has 1 (de): M = 4, n = 2 -> pi = 1/2 each
    out = draw_label_queue(db, "p", 2, kind="pair")
    items = out["items"]
    assert out["n_frame"] == 4 and out["active"] is False and items.height == 2
    assert items["pi"].to_list() == [0.5, 0.5]
    pairs = set(zip(items["a_id"], items["b_id"]))
    assert len(pairs) == 2 and pairs <= {("a", "b"), ("a", "c"), ("b", "c"), ("d", "e")}
    assert all(p == ("r" if a == "d" else "q") for p, a in zip(items["prompt_id"], items["a_id"]))
    # candidates: M = 5, n = 5 -> every one, pi 1
    acc = draw_label_queue(db, "p", 5, kind="accept")["items"]
    assert sorted(acc["candidate_id"]) == list("abcde") and acc["pi"].to_list() == [1.0] * 5
    assert acc["a_idx"].null_count() == 5
    # n larger than the frame: the whole frame once
    assert draw_label_queue(db, "p", 9, kind="pair")["items"].height == 4


def test_a_pointwise_cell_gives_the_pairs_it_scored(db, write_jsonl):
    _hand_pool(db, write_jsonl)
    # scored: a 5, b 3, c 3, d 1 (e unparsed): pairs ab, ac, bc of q (d has no scored partner)
    out = draw_label_queue(db, "p", 3, kind="pair", judge="j", format="likert5")
    assert out["n_frame"] == 3 and out["decoding"] == "greedy"
    assert sorted(zip(out["items"]["a_id"], out["items"]["b_id"])) == [("a", "b"), ("a", "c"), ("b", "c")]
    assert draw_label_queue(db, "p", 2, kind="accept", judge="j", format="likert5")["n_frame"] == 4


def test_the_frame_of_a_pointwise_cell_by_hand():
    # f of a pair: 1 when the lower cand_idx scored above the other, 0 below, 1/2 equal
    cands = pl.DataFrame({"prompt_idx": [0, 0, 0, 1], "cand_idx": [0, 1, 2, 3]})
    points = pl.DataFrame({"judge": "j", "format": "f", "decoding": "greedy", "cand_idx": [0, 1, 2, 3],
                           "f": [0.25, 0.75, 0.25, 1.0]})
    pairs = pl.DataFrame(schema={"judge": pl.String, "format": pl.String, "decoding": pl.String,
                                 "prompt_idx": pl.Int64, "lo_idx": pl.Int64, "hi_idx": pl.Int64, "f": pl.Float64})
    d = {"cands": cands, "points": points, "pairs": pairs}
    got = queue_frame(d, "pair", ("j", "f", "greedy")).rows()
    assert got == [(0, 0, 1, 0.0), (0, 0, 2, 0.5), (0, 1, 2, 1.0)]
    assert queue_frame(d, "accept", ("j", "f", "greedy")).sort("cand_idx")["f"].to_list() == [0.25, 0.75, 0.25, 1.0]
    assert queue_frame(d, "pair", None).select("lo_idx", "hi_idx").sort("lo_idx", "hi_idx").rows() == \
        [(0, 1), (0, 2), (1, 2)]


@pytest.mark.parametrize("kwargs, message", [
    ({"kind": "accept", "judge": "t", "format": "tournament"}, "is comparative"),
    ({"strategy": "active"}, "needs the cell"),
    ({"judge": "j"}, "both --judge and --format"),
    ({"judge": "nobody", "format": "likert5"}, "no parsed verdicts of judge 'nobody'"),
    ({"n": 0}, "at least one item"),
    ({"kind": "both"}, "use pair|accept"),
])
def test_requests_it_refuses(db, write_jsonl, kwargs, message):
    _hand_pool(db, write_jsonl)
    n = kwargs.pop("n", 2)
    with pytest.raises(AuditError, match=message):
        draw_label_queue(db, "p", n, **kwargs)
