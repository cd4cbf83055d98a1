"""audit/_label_page.py, what the Label page reads: the cells a queue may follow and the agreement
between annotators (raw agreement, Krippendorff's nominal alpha, Cohen's kappa against
scikit-learn), worked by hand."""

import pytest
from sklearn.metrics import cohen_kappa_score

from audit import AGREEMENT_COLUMNS, annotator_agreement, label_cells
from ingest.store import import_labels, import_pool
from ingest.scoring import import_verdicts


def _pool(db, write_jsonl):
    rows = [{"prompt_id": f"p{p}", "prompt": f"q{p}", "candidate_id": c, "response": f"{c} {p}"}
            for p in range(3) for c in "xyz"]
    import_pool(db, write_jsonl("pool.jsonl", rows), "tiny")


def test_agreement_of_accept_and_pair_labels_by_hand(db, write_jsonl):
    _pool(db, write_jsonl)
    acc = [("p0", "x", "accept", "accept"), ("p0", "y", "accept", "reject"), ("p0", "z", "reject", "reject"),
           ("p1", "x", "reject", "reject")]
    labels = [{"prompt_id": p, "candidate_id": c, "label": lab, "annotator": who}
              for p, c, u, v in acc for who, lab in (("u", u), ("v", v))]
    labels.append({"prompt_id": "p2", "candidate_id": "x", "label": "accept", "annotator": "u"})   # u alone
    # pairs: (x, y) of p0: u A, v A, w tie; (x, z) of p1: u A (x better), v A with z shown first (z better)
    labels += [{"prompt_id": "p0", "a_id": "x", "b_id": "y", "label": lab, "annotator": who}
               for who, lab in (("u", "A"), ("v", "A"), ("w", "tie"))]
    labels += [{"prompt_id": "p1", "a_id": "x", "b_id": "z", "label": "A", "annotator": "u"},
               {"prompt_id": "p1", "a_id": "z", "b_id": "x", "label": "A", "annotator": "v"}]
    import_labels(db, write_jsonl("labels.jsonl", labels), "tiny")
    got = {r["kind"]: r for r in annotator_agreement(db, "tiny").to_dicts()}
    assert list(annotator_agreement(db, "tiny").columns) == AGREEMENT_COLUMNS
    a = got["accept"]
    # four shared candidates (p2's x has one label): u A A R R, v A R R R; agreeing: 3 of 4 items
    assert (a["n_items"], a["n_annotators"], a["n_labels"]) == (4, 2, 8)
    assert a["agreement"] == pytest.approx(0.75)
    # kappa: po 3/4, pe = 1/2 x 1/4 + 1/2 x 3/4 = 1/2 -> (3/4 - 1/2) / (1/2) = 1/2
    assert a["kappa"] == pytest.approx(0.5)
    assert a["kappa"] == pytest.approx(cohen_kappa_score(list("AARR"), list("ARRR")))
    # alpha: coincidences o_AA 2, o_AR = o_RA 1, o_RR 4; n_A 3, n_R 5, n 8.
    # D_o = 2/8, D_e = 2 x 3 x 5 / (8 x 7) = 30/56 -> 1 - (1/4)(56/30) = 16/30
    assert a["alpha"] == pytest.approx(16 / 30)
    p = got["pair"]
    # toward the lower cand_idx: (x, y) A, A, tie: 2 of 6 ordered pairs of annotators agree; (x, z): u
    # x better (A), v z better (B): 0 of 2. Mean (1/3 + 0) / 2 = 1/6
    assert (p["n_items"], p["n_annotators"], p["n_labels"]) == (2, 3, 5)
    assert p["agreement"] == pytest.approx(1 / 6)
    # three annotators: no kappa (u and v alone would have one: po 1/2, pe 1/2 -> 0). alpha: item 1
    # (m = 3, each ordered pair 1/2): o_AA 1, o_AT = o_TA 1; item 2: o_AB = o_BA 1. n_A 3, n_T 1, n_B 1,
    # n 5: D_o = 4/5, D_e = 2 (3 + 3 + 1) / (5 x 4) = 7/10 -> alpha = 1 - 8/7 = -1/7
    assert p["kappa"] is None and p["alpha"] == pytest.approx(-1 / 7)


def test_no_shared_item_gives_an_empty_row(db, write_jsonl):
    _pool(db, write_jsonl)
    import_labels(db, write_jsonl("labels.jsonl", [{"prompt_id": "p0", "candidate_id": "x", "label": "accept",
                                                    "annotator": "u"}]), "tiny")
    rows = annotator_agreement(db, "tiny").to_dicts()
    assert [r["kind"] for r in rows] == ["pair", "accept"]
    for r in rows:
        assert (r["n_items"], r["n_annotators"], r["n_labels"]) == (0, 0, 0)
        assert r["agreement"] is None and r["alpha"] is None and r["kappa"] is None


def test_label_cells_are_the_cells_with_a_parsed_verdict(db, write_jsonl):
    _pool(db, write_jsonl)
    v = [{"judge": "j", "format": "likert5", "prompt_id": "p0", "candidate_id": "x", "raw": "4"},
         {"judge": "k", "format": "tournament", "prompt_id": "p0", "a_id": "x", "b_id": "y", "raw": "A+"},
         {"judge": "m", "format": "likert5", "prompt_id": "p0", "candidate_id": "x", "raw": "cannot say"}]
    import_verdicts(db, write_jsonl("v.jsonl", v), "tiny")
    got = sorted(label_cells(db, "tiny").select("judge", "format", "decoding", "kind").rows())
    assert got == [("j", "likert5", "greedy", "pointwise"), ("k", "tournament", "greedy", "comparative")]


def test_label_cells_found_by_ids_equal_the_cells_found_by_names(db, write_jsonl):
    """label_cells.sql finds the cells by (judge_id, format_id, the decoding's code) and names them after;
    before, a distinct over every parsed call's names and decoding text (kept in
    tests/audit/sql/label_cells_before.sql): the same rows, with both decodings, a judge under two formats,
    unparsed calls and a cell with no parsed call."""
    from audit._read import reading
    from ingest.store.database import Database
    _pool(db, write_jsonl)
    v = [{"judge": j, "format": f, "decoding": d, "prompt_id": f"p{p}", "candidate_id": c,
          "raw": "cannot say" if (j == "m" or (p + ord(c)) % 3 == 0) else str(1 + (p + ord(c)) % 5)}
         for j in ("j", "k", "m") for f in ("likert5", "numeric100") for d in ("greedy", "constrained")
         for p in range(3) for c in "xyz" if not (j == "k" and d == "constrained")]
    v += [{"judge": "k", "format": "tournament", "prompt_id": "p0", "a_id": "x", "b_id": "y", "raw": "A+"}]
    import_verdicts(db, write_jsonl("v.jsonl", v), "tiny")
    with reading(db) as read:
        pid = read.pool_id("tiny")
        got = read.frame("label_cells", pool_id=pid)
    with Database.of(db).reading(queries="tests.audit") as read:
        want = read.frame("label_cells_before", pool_id=pid)
    assert got.height == 7 and set(got["decoding"]) == {"greedy", "constrained"}
    assert got.rows() == want.rows()
