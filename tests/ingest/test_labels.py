"""Human labels of both kinds and label queues (DESIGN.md 'Human labels and what they are worth'):
`import-labels` reads pairs and accept/reject rows, bad rows name file, line and field, an unknown
candidate is refused with its line, a later label of an annotator replaces the earlier one; a queue
stores each item's inclusion probability and never offers an item its annotator has labelled; the
Label page's writes (label, skip, undo) and the stored order of a pair's responses."""

import json

import numpy as np
import pytest

from audit import draw_label_queue, estimate
from ingest import UserError
from ingest.store import import_labels, import_pool, record_label, save_label_queue, skip_item, undo_item
from tests.conftest import cli_here, db_snapshot, query_rows

SYSTEMS = ("x", "y", "z")


def _pool(tmp_path, db, n_prompts=3):
    rows = [{"prompt_id": f"p{p}", "prompt": f"q{p}", "candidate_id": c, "response": f"{c} {p}"}
            for p in range(n_prompts) for c in SYSTEMS]
    path = tmp_path / "pool.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    import_pool(db, path, "tiny")


def test_both_shapes_import_and_the_annotator_defaults_to_import(db, tmp_path, write_jsonl):
    _pool(tmp_path, db)
    path = write_jsonl("labels.jsonl", [
        {"prompt_id": "p0", "a_id": "x", "b_id": "y", "label": "A"},
        {"prompt_id": "p0", "candidate_id": "x", "label": "accept"},
        {"prompt_id": "p1", "candidate_id": "z", "label": "Reject", "annotator": "ann"}])
    out = import_labels(db, path, "tiny")
    assert (out["imported"], out["n_pairs"], out["n_accept"], out["n_annotators"]) == (3, 1, 2, 2)
    assert query_rows(db, "SELECT annotator, label FROM pair_labels") == [("import", "A")]
    assert query_rows(db, "SELECT cand_idx, annotator, label, line FROM accept_labels ORDER BY cand_idx") == \
        [(0, "import", "accept", 2), (5, "ann", "reject", 3)]


@pytest.mark.parametrize("bad,message", [
    ({"prompt_id": "p0", "candidate_id": "w", "label": "accept"}, "line 2, field 'candidate_id': unknown candidate 'w'"),
    ({"prompt_id": "p0", "candidate_id": "x", "label": "good"}, "line 2, field 'label': 'good' is not a label of a candidate"),
    ({"prompt_id": "p0", "candidate_id": "x"}, "line 2, field 'label': required"),
    ({"prompt_id": "p9", "candidate_id": "x", "label": "accept"}, "line 2, field 'prompt_id': unknown prompt 'p9'"),
    ({"prompt_id": "p0", "candidate_id": "y", "label": "reject", "annotator": "u"},
     "line 2, field 'label': contradicts line 1"),
])
def test_a_bad_accept_row_refuses_the_whole_file_with_its_line(db, tmp_path, write_jsonl, bad, message, capsys):
    _pool(tmp_path, db)
    good = {"prompt_id": "p0", "candidate_id": "y", "label": "accept", "annotator": "u"}
    before = db_snapshot(db)
    path = write_jsonl("labels.jsonl", [good, bad])
    with pytest.raises(UserError, match=message.replace("(", r"\(")) as err:
        import_labels(db, path, "tiny")
    assert str(path) in str(err.value)
    assert db_snapshot(db) == before
    proc = cli_here(capsys, db, "import-labels", str(path), "--pool", "tiny")      # the CLI says the same on stderr
    assert proc.returncode == 1 and "line 2" in proc.stderr


def test_a_later_label_of_an_annotator_replaces_the_earlier(db, tmp_path, write_jsonl):
    _pool(tmp_path, db)
    import_labels(db, write_jsonl("a.jsonl", [{"prompt_id": "p0", "a_id": "x", "b_id": "y", "label": "A"},
                                              {"prompt_id": "p0", "candidate_id": "x", "label": "accept"}]), "tiny")
    out = import_labels(db, write_jsonl("b.jsonl", [{"prompt_id": "p0", "a_id": "y", "b_id": "x", "label": "A"},
                                                    {"prompt_id": "p0", "candidate_id": "x", "label": "reject"},
                                                    {"prompt_id": "p0", "a_id": "x", "b_id": "y", "label": "tie",
                                                     "annotator": "other"}]), "tiny")
    assert (out["imported"], out["replaced"]) == (3, 2)
    assert sorted(query_rows(db, "SELECT a_idx, b_idx, label, annotator FROM pair_labels")) == \
        [(0, 1, "tie", "other"), (1, 0, "A", "import")]
    assert query_rows(db, "SELECT label FROM accept_labels") == [("reject",)]


def _queue(db, n, annotator="ann", kind="pair", seed=0, **cell):
    plan = draw_label_queue(db, "tiny", n, kind=kind, annotator=annotator, seed=seed, **cell)
    qid = save_label_queue(db, "tiny", annotator, kind, cell.get("strategy", "random"), None, None, None, seed,
                           plan["n_frame"], plan["active"], plan["items"].select("prompt_idx", "a_idx", "b_idx",
                                                                                   "cand_idx", "pi"))
    return qid, plan


def test_a_queue_never_offers_an_item_its_annotator_labelled(db, tmp_path, write_jsonl):
    _pool(tmp_path, db)                                  # 3 prompts x 3 pairs = 9 pairs
    import_labels(db, write_jsonl("l.jsonl", [
        {"prompt_id": "p0", "a_id": "y", "b_id": "x", "label": "A", "annotator": "ann"},
        {"prompt_id": "p1", "a_id": "x", "b_id": "z", "label": "B", "annotator": "ann"},
        {"prompt_id": "p2", "a_id": "x", "b_id": "z", "label": "B", "annotator": "someone else"}]), "tiny")
    qid, plan = _queue(db, 5)
    items = plan["items"]
    assert plan["n_frame"] == 7 and items.height == 5
    assert np.allclose(items["pi"], 5 / 7)              # uniform: n / M
    offered = set(zip(items["prompt_id"], items["a_id"], items["b_id"]))
    assert not offered & {("p0", "x", "y"), ("p1", "x", "z")}
    # the annotator labels one item from the queue; a second queue holds neither the labelled nor the
    # still-pending items, only the 2 left
    record_label(db, qid, 0, "B")
    qid2, plan2 = _queue(db, 9, seed=1)
    left = set(zip(plan2["items"]["prompt_id"], plan2["items"]["a_id"], plan2["items"]["b_id"]))
    assert plan2["n_frame"] == 2 and not left & offered and np.allclose(plan2["items"]["pi"], 1.0)
    for pos in range(2):
        record_label(db, qid2, pos, "tie")
    with pytest.raises(Exception, match="nothing left to ask"):
        _queue(db, 1, seed=2)
    # another annotator still gets every pair
    assert _queue(db, 9, annotator="bo")[1]["n_frame"] == 9


def test_label_skip_undo_and_the_stored_order(db, tmp_path):
    _pool(tmp_path, db)
    qid, plan = _queue(db, 4)
    orders = query_rows(db, "SELECT lo_idx, hi_idx, hi_first FROM label_orders WHERE annotator = 'ann' ORDER BY ALL")
    assert len(orders) == 4
    record_label(db, qid, 0, "A")
    skip_item(db, qid, 1)
    assert query_rows(db, f"SELECT position, state FROM label_queue_items WHERE queue_id = {qid} ORDER BY 1") == \
        [(0, "labelled"), (1, "skipped"), (2, "pending"), (3, "pending")]
    record_label(db, qid, 0, "B")                     # changing one's mind replaces the label
    assert query_rows(db, "SELECT label, annotator, source, queue_id FROM pair_labels") == [("B", "ann", "app", qid)]
    undo_item(db, qid, 0)
    undo_item(db, qid, 1)
    assert query_rows(db, "SELECT count(*) FROM pair_labels") == [(0,)]
    assert {s for (s,) in query_rows(db, f"SELECT state FROM label_queue_items WHERE queue_id = {qid}")} == {"pending"}
    # a new queue for the same annotator keeps the order already drawn for a pair
    _queue(db, 5, seed=7)
    again = query_rows(db, "SELECT lo_idx, hi_idx, hi_first FROM label_orders WHERE annotator = 'ann' ORDER BY ALL")
    assert set(orders) <= set(again) and len(again) == 9
    with pytest.raises(UserError, match="not a label of a pair"):
        record_label(db, qid, 2, "accept")


def test_an_accept_queue_through_the_cli_and_its_weight_in_the_estimate(db, tmp_path, write_jsonl, capsys):
    _pool(tmp_path, db, n_prompts=20)
    rows = [{"judge": "j", "format": "likert5", "prompt_id": f"p{p}", "candidate_id": c, "raw": str(1 + (p + i) % 5)}
            for p in range(20) for i, c in enumerate(SYSTEMS)]
    assert cli_here(capsys, db, "import-verdicts", str(write_jsonl("v.jsonl", rows)), "--pool", "tiny").returncode == 0
    proc = cli_here(capsys, db, "label-queue", "--pool", "tiny", "--n", "6", "--kind", "accept", "--strategy", "active",
                "--judge", "j", "--format", "likert5", "--annotator", "ann", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["active"] is False and doc["n_frame"] == 60     # fewer than 40 labels: uniform
    assert [set(i) for i in doc["items"]] == [{"prompt_id", "candidate_id", "pi"}] * 6
    assert all(i["pi"] == pytest.approx(0.1) for i in doc["items"])
    for pos in range(6):
        record_label(db, doc["queue_id"], pos, "accept" if pos % 2 else "reject")
    (row,) = estimate(db, "tiny", "accept").to_dicts()
    assert row["n_labelled"] == 6 and row["classical_value"] == pytest.approx(0.5)   # weight m / (M pi) = 1
    bad = cli_here(capsys, db, "label-queue", "--pool", "tiny", "--n", "3", "--strategy", "active")
    assert bad.returncode == 1 and "--strategy active needs the cell" in bad.stderr


def test_an_active_queue_follows_the_residuals_after_40_labels(db, tmp_path, write_jsonl, capsys):
    _pool(tmp_path, db, n_prompts=40)                  # 120 candidates
    rows = [{"judge": "j", "format": "likert5", "prompt_id": f"p{p}", "candidate_id": c, "raw": str(1 + (p + 2 * i) % 5)}
            for p in range(40) for i, c in enumerate(SYSTEMS)]
    assert cli_here(capsys, db, "import-verdicts", str(write_jsonl("v.jsonl", rows)), "--pool", "tiny").returncode == 0
    # 50 labels by 'ann' on x and y: right at the ends (likert 1 reject, 5 accept), alternating elsewhere
    labels = []
    for p in range(25):
        for i, c in enumerate(("x", "y")):
            v = 1 + (p + 2 * i) % 5
            lab = "reject" if v == 1 else "accept" if v == 5 else ("accept" if (p + i) % 2 else "reject")
            labels.append({"prompt_id": f"p{p}", "candidate_id": c, "label": lab, "annotator": "ann"})
    import_labels(db, write_jsonl("l.jsonl", labels), "tiny")
    plan = draw_label_queue(db, "tiny", 10, kind="accept", strategy="active", judge="j", format="likert5",
                            annotator="ann", seed=3)
    assert plan["active"] and plan["n_frame"] == 120 - 50
    pi = plan["items"]["pi"].to_numpy()
    assert pi.sum() < 10 and pi.max() > 1.2 * pi.min()   # not uniform (which would be 10/70 each)


def test_labels_from_an_unequal_queue_weigh_m_over_m_frame_pi(db, tmp_path, write_jsonl, capsys):
    import polars as pl
    from audit._estimate import classical_mean, ppi_mean
    _pool(tmp_path, db, n_prompts=10)                  # 30 candidates, likert 1 + (p + i) % 5
    rows = [{"judge": "j", "format": "likert5", "prompt_id": f"p{p}", "candidate_id": c, "raw": str(1 + (p + i) % 5)}
            for p in range(10) for i, c in enumerate(SYSTEMS)]
    assert cli_here(capsys, db, "import-verdicts", str(write_jsonl("v.jsonl", rows)), "--pool", "tiny").returncode == 0
    # a queue of m = 4 drawn from M = 30 with unequal pi; a file label on a fifth candidate weighs 1
    pis = [0.05, 0.1, 0.2, 0.4]
    items = pl.DataFrame({"prompt_idx": [0, 1, 2, 3], "a_idx": [None] * 4, "b_idx": [None] * 4,
                          "cand_idx": [0, 3, 6, 9], "pi": pis})
    qid = save_label_queue(db, "tiny", "ann", "accept", "active", "j", "likert5", "greedy", 0, 30, True, items)
    for pos, label in enumerate(["accept", "reject", "accept", "accept"]):
        record_label(db, qid, pos, label)
    import_labels(db, write_jsonl("l.jsonl", [{"prompt_id": "p4", "candidate_id": "y", "label": "reject"}]), "tiny")
    (row,) = estimate(db, "tiny", "accept").to_dicts()
    # candidates 0, 3, 6, 9 are x of p0..p3 (likert 1..4), candidate 13 is y of p4 (likert 1 + 5 % 5 = 1)
    y = np.array([1.0, 0.0, 1.0, 1.0, 0.0])
    f = np.array([0.0, 0.25, 0.5, 0.75, 0.0])
    w = np.array([4 / (30 * p) for p in pis] + [1.0])   # 2.667, 1.333, 0.667, 0.333, 1
    f_all = np.array([((p + i) % 5) / 4 for p in range(10) for i in range(3)])
    ppi = ppi_mean(y, f, f_all, 0.05, w=w)
    assert row["n_labelled"] == 5 and row["ppi_value"] == pytest.approx(ppi["value"])
    # the weighted interval (−0.118 to 1.643) reaches past both ends of a share: clipped to [0, 1]
    assert ppi["lo"] < 0 and ppi["hi"] > 1 and (row["ppi_lo"], row["ppi_hi"]) == (0.0, 1.0)
    assert row["classical_value"] == pytest.approx((4 / 1.5 + 2 / 3 + 1 / 3) / 5)       # mean(w y)
    assert row["classical_lo"] == pytest.approx(max(0.0, classical_mean(y, 0.05, w=w)["lo"]))
