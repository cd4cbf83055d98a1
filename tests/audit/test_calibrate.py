"""Agreement with humans (`import-labels`, `calibrate`): Cohen's kappa by hand and against
scikit-learn, orientation of judgements, the human ceiling, the threshold saved before the run,
whole-file label imports, and every LLMBar judge against the gold labels."""

import json
import math
import subprocess
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from sklearn.metrics import cohen_kappa_score

from audit import calibrate, calibrate_frames, human_agreement, human_ceiling, stored_labels
from audit._calibrate import HUMAN_COLUMNS, agreement, cell_agreement, decide, kappa, oriented_pairs, pairs_needed
from ingest import UserError
from ingest.store import import_labels
from tests.conftest import EXE, db_snapshot, query_rows

DEMO = Path(__file__).resolve().parents[2] / "ingest" / "demo"


def test_kappa_by_hand():
    # humans by rows (yes, no), judge by columns: yes/yes 20, yes/no 5, no/yes 10, no/no 15.
    # p_o = 35/50 = 0.7; p_e = (25/50)(30/50) + (25/50)(20/50) = 0.3 + 0.2 = 0.5;
    # kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4
    table = np.array([[20, 5], [10, 15]])
    assert kappa(table) == pytest.approx(0.4, abs=1e-12)
    human = ["yes"] * 25 + ["no"] * 25
    judge = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert cohen_kappa_score(human, judge) == pytest.approx(0.4, abs=1e-12)


def test_kappa_and_agreement_of_a_batch_equal_those_of_each_table():
    # 3x3 tables [[5, 1, 0], [2, 3, 1], [0, 1, 2]]: agreement (5 + 3 + 2) / 15, and
    # [[1, 0, 0], [0, 0, 0], [4, 0, 0]]: 1 / 5 (each table's own trace over its own total)
    one = np.array([[5, 1, 0], [2, 3, 1], [0, 1, 2]])
    two = np.array([[1, 0, 0], [0, 0, 0], [4, 0, 0]])
    both = agreement(np.stack([one, two]))
    assert isinstance(both, np.ndarray) and both.shape == (2,)
    assert both.tolist() == pytest.approx([10 / 15, 1 / 5], abs=1e-12)
    assert agreement(one) == pytest.approx(10 / 15, abs=1e-12) and isinstance(agreement(one), float)
    human = [0] * 6 + [1] * 6 + [2] * 3
    judge = [0] * 5 + [1] + [0] * 2 + [1] * 3 + [2] + [1] + [2] * 2
    assert kappa(np.stack([one, two]))[0] == pytest.approx(cohen_kappa_score(human, judge), abs=1e-12)


def test_kappa_and_agreement_count_in_floating_point_whatever_the_table_dtype():
    # int64 counts whose products overflow: [[3e9, 1e9], [1e9, 3e9]]: n = 8e9, n^2 = 6.4e19 > 2^63;
    # p_o = 6/8 = 0.75, p_e = (4/8)(4/8) * 2 = 0.5, kappa = 0.25 / 0.5 = 0.5
    table = np.array([[3_000_000_000, 1_000_000_000], [1_000_000_000, 3_000_000_000]], dtype=np.int64)
    assert kappa(table) == pytest.approx(0.5, abs=1e-12)
    # a sum past 2^63 - 1: trace 2^62 of 2^63
    assert agreement(np.array([[2 ** 62, 0], [2 ** 62, 0]], dtype=np.int64)) == pytest.approx(0.5, abs=1e-12)


def test_undefined_kappa_and_agreement_are_nan_without_a_warning():
    # an empty table (0 / 0) and a table with all judgements in one cell (p_e = 1): NaN, quietly
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isnan(kappa(np.zeros((3, 3)))) and math.isnan(agreement(np.zeros((3, 3))))
        assert math.isnan(kappa(np.array([[4, 0], [0, 0]])))
        assert np.isnan(kappa(np.stack([np.zeros((2, 2)), np.eye(2)])))[0]


def test_oriented_pairs_follow_the_first_label_and_count_votes():
    # pair (prompt 0; 2, 0) first given as a=2, b=0: x = 2, y = 0; its votes in that orientation:
    # u says A (2 better), v says A of (0, 2) = B, w says B of (0, 2) = A -> A 2, B 1 -> human A.
    # pair (prompt 1; 0, 1): u A, v B -> an even split, tie
    labels = pl.DataFrame([
        {"prompt_idx": 0, "a_idx": 2, "b_idx": 0, "label": "A", "annotator": "u"},
        {"prompt_idx": 1, "a_idx": 0, "b_idx": 1, "label": "A", "annotator": "u"},
        {"prompt_idx": 0, "a_idx": 0, "b_idx": 2, "label": "A", "annotator": "v"},
        {"prompt_idx": 0, "a_idx": 0, "b_idx": 2, "label": "B", "annotator": "w"},
        {"prompt_idx": 1, "a_idx": 0, "b_idx": 1, "label": "B", "annotator": "v"}])
    pairs, votes = oriented_pairs(labels)
    assert pairs.select("pair", "prompt_idx", "x", "y", "lo", "hi", "n_votes", "human").rows() == [
        (0, 0, 2, 0, 0, 2, 3, 0), (1, 1, 0, 1, 0, 1, 2, 2)]
    assert votes.tolist() == [[2, 1, 0], [1, 1, 0]]


def _random_cell(seed, n_pairs=60):
    """Labels (one annotator per pair, some given B-first) and judge calls in both orders."""
    rng = np.random.default_rng(seed)
    labels, calls = [], []
    for p in range(n_pairs):
        x, y = (0, 1) if rng.random() < 0.7 else (1, 0)     # the label's orientation
        truth = rng.choice(["A", "B", "tie"], p=[0.45, 0.35, 0.2])
        labels.append({"prompt_idx": p, "a_idx": x, "b_idx": y, "label": truth, "annotator": "h"})
        for a, b in ((0, 1), (1, 0)):
            calls.append({"judge": "j", "format": "f", "decoding": "greedy", "prompt_idx": p, "a_idx": a,
                          "b_idx": b, "value": float(rng.choice([2, 1, 0, -1, -2]))})
    return pl.DataFrame(labels), pl.DataFrame(calls)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_calibrate_equals_sklearn_on_oriented_judgements(seed):
    labels, calls = _random_cell(seed)
    human, judge = [], []
    lab = {r["prompt_idx"]: r for r in labels.iter_rows(named=True)}
    for c in calls.iter_rows(named=True):
        r = lab[c["prompt_idx"]]
        slot = "A" if c["value"] > 0 else "B" if c["value"] < 0 else "tie"
        if c["a_idx"] != r["a_idx"] and slot != "tie":      # shown the other way round: turn it
            slot = "B" if slot == "A" else "A"
        human.append(r["label"])
        judge.append(slot)
    cell = calibrate_frames(calls, labels, n_boot=300, seed=seed).row(0, named=True)
    assert cell["n"] == 120 and cell["n_pairs"] == 60
    assert cell["kappa"] == pytest.approx(cohen_kappa_score(human, judge), abs=1e-12)
    assert cell["agreement"] == pytest.approx(np.mean(np.array(human) == np.array(judge)), abs=1e-12)
    keep = [(h, j) for h, j in zip(human, judge) if h != "tie" and j != "tie"]
    assert cell["n_no_ties"] == len(keep)
    assert cell["kappa_no_ties"] == pytest.approx(cohen_kappa_score(*zip(*keep)), abs=1e-12)
    assert cell["kappa_lo"] <= cell["kappa"] <= cell["kappa_hi"]
    confusion = np.array(cell["confusion"]).reshape(3, 3)
    for r, h in enumerate(["A", "B", "tie"]):
        for c, j in enumerate(["A", "B", "tie"]):
            assert confusion[r, c] == sum(1 for a, b in zip(human, judge) if a == h and b == j)


def test_human_ceiling_equals_sklearn_over_annotator_pairs():
    rng = np.random.default_rng(5)
    rows, first, second = [], [], []
    for p in range(40):
        k = int(rng.integers(1, 5))                         # 1-4 annotators; single ones do not count
        votes = list(rng.choice(["A", "B", "tie"], size=k, p=[0.5, 0.3, 0.2]))
        rows += [{"prompt_idx": p, "a_idx": 0, "b_idx": 1, "label": v, "annotator": f"h{i}"}
                 for i, v in enumerate(votes)]
        for i in range(k):
            for j in range(k):
                if i != j:
                    first.append(votes[i])
                    second.append(votes[j])
    out = human_agreement(pl.DataFrame(rows), n_boot=200).row(0, named=True)
    assert out["n_comparisons"] == len(first)
    assert out["kappa"] == pytest.approx(cohen_kappa_score(first, second), abs=1e-12)
    assert out["agreement"] == pytest.approx(np.mean(np.array(first) == np.array(second)), abs=1e-12)


def test_plurality_label_and_reversed_votes():
    # pair 0: A, A, and B given the other way round (= A) -> A; pair 1: A and B -> an even split, tie
    labels = pl.DataFrame([
        {"prompt_idx": 0, "a_idx": 0, "b_idx": 1, "label": "A", "annotator": "u"},
        {"prompt_idx": 0, "a_idx": 0, "b_idx": 1, "label": "A", "annotator": "v"},
        {"prompt_idx": 0, "a_idx": 1, "b_idx": 0, "label": "B", "annotator": "w"},
        {"prompt_idx": 1, "a_idx": 0, "b_idx": 1, "label": "A", "annotator": "u"},
        {"prompt_idx": 1, "a_idx": 0, "b_idx": 1, "label": "B", "annotator": "v"}])
    calls = pl.DataFrame([{"judge": "j", "format": "f", "decoding": "greedy", "prompt_idx": p, "a_idx": 0,
                           "b_idx": 1, "value": 1.0} for p in (0, 1)])
    cell = calibrate_frames(calls, labels, n_boot=10).row(0, named=True)
    # humans A then tie; judge A twice
    assert cell["confusion"] == [1, 0, 0, 0, 0, 0, 1, 0, 0]
    # ordered annotator pairs: pair 0 has 3 * 2 = 6, all agreeing; pair 1 has 2, none agreeing
    assert human_agreement(labels, n_boot=10)["agreement"][0] == pytest.approx(6 / 8)


def test_threshold_decision_and_pairs_needed():
    labels, calls = _random_cell(3, n_pairs=50)
    one = calibrate_frames(calls, labels, n_boot=1000, threshold=-1.0).row(0, named=True)
    assert one["decision"] == "pass" and one["passes"] is True
    assert calibrate_frames(calls, labels, n_boot=1000, threshold=0.99)["decision"][0] == "fail"
    # four copies of every pair: the same kappa, an interval about half as wide (1 / sqrt(4))
    big_labels = pl.concat([labels.with_columns(pl.col("prompt_idx") + 1000 * k) for k in range(4)])
    big_calls = pl.concat([calls.with_columns(pl.col("prompt_idx") + 1000 * k) for k in range(4)])
    four = calibrate_frames(big_calls, big_labels, n_boot=1000).row(0, named=True)
    assert four["kappa"] == pytest.approx(one["kappa"], abs=1e-12)
    ratio = (four["kappa_hi"] - four["kappa_lo"]) / (one["kappa_hi"] - one["kappa_lo"])
    assert ratio == pytest.approx(0.5, abs=0.1)
    # pairs needed for half the observed width: four times the pairs
    assert pairs_needed(50, 0.1, 0.5, 0.2) == 200
    assert one["n_pairs_needed"] == math.ceil(50 * ((one["kappa_hi"] - one["kappa_lo"]) / 0.2) ** 2)


def _pool(tmp_path, db):
    from ingest.store import import_pool
    rows = [{"prompt_id": f"p{p}", "prompt": f"q{p}", "candidate_id": c, "response": f"{c} {p}"}
            for p in range(3) for c in ("x", "y", "z")]
    path = tmp_path / "pool.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    import_pool(db, path, "tiny")


def test_label_import_is_whole_or_nothing_with_located_errors(db, tmp_path, write_jsonl):
    _pool(tmp_path, db)
    good = {"prompt_id": "p0", "a_id": "x", "b_id": "y", "label": "A"}
    cases = [({**good, "label": "better"}, "line 2, field 'label'"),
             ({**good, "b_id": "w"}, "line 2, field 'b_id': unknown candidate 'w'"),
             ({**good, "prompt_id": "p9"}, "line 2, field 'prompt_id': unknown prompt 'p9'"),
             ({k: v for k, v in good.items() if k != "a_id"}, "line 2, field 'a_id': required"),
             ({**good, "a_id": "y", "b_id": "x", "label": "A"}, "line 2, field 'label': contradicts line 1"),
             ("{not json", "line 2: not valid JSON")]
    before = db_snapshot(db)
    for bad, message in cases:
        path = write_jsonl("labels.jsonl", [good, bad])
        with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)")):
            import_labels(db, path, "tiny")
        assert db_snapshot(db) == before
    path = write_jsonl("labels.jsonl", [good, {**good, "a_id": "y", "b_id": "x", "label": "B"},
                                        {**good, "annotator": "second", "label": "tie"}])
    out = import_labels(db, path, "tiny")
    assert out["imported"] == 2 and out["skipped"] == {"repeated label": 1} and out["n_annotators"] == 2
    assert import_labels(db, path, "tiny")["imported"] == 0           # importing again changes nothing
    assert query_rows(db, "SELECT count(*) FROM pair_labels") == [(2,)]


def test_calibrate_cli_saves_the_threshold_with_the_result(db, tmp_path, write_jsonl):
    _pool(tmp_path, db)
    verdicts = write_jsonl("v.jsonl", [
        {"judge": "j", "format": "tournament", "prompt_id": f"p{p}", "a_id": a, "b_id": b, "raw": raw}
        for p in range(3) for (a, b, raw) in (("x", "y", "A+"), ("y", "x", "B+"), ("x", "z", "TIE"))])
    subprocess.run([EXE, "import-verdicts", verdicts, "--pool", "tiny"], check=True, capture_output=True)
    labels = write_jsonl("l.jsonl", [{"prompt_id": f"p{p}", "a_id": "x", "b_id": "y", "label": "A"} for p in range(3)]
                         + [{"prompt_id": "p0", "a_id": "x", "b_id": "z", "label": "B"}])
    proc = subprocess.run([EXE, "calibrate", "--pool", "tiny", "--labels", labels, "--threshold", "0.5",
                           "--n-boot", "200", "--json"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    cell = doc["cells"][0]
    assert {"judge", "format", "n", "agreement", "kappa", "kappa_lo", "kappa_hi"} <= set(cell)
    # 6 judgements A on x-y pairs (humans A), 1 tie on x-z (humans B): agreement 6/7
    assert cell["n"] == 7 and cell["agreement"] == pytest.approx(6 / 7)
    assert cell["confusion"]["A"]["A"] == 6 and cell["confusion"]["B"]["tie"] == 1
    assert doc["threshold"] == 0.5 and cell["threshold"] == 0.5
    saved = query_rows(db, "SELECT threshold, result IS NOT NULL, labels FROM calibrations")
    assert saved[0][:2] == (0.5, True) and saved[0][2].startswith(str(labels))
    # without --labels nothing is stored yet; after import-labels the stored labels are used, and
    # the threshold declared before applies again
    proc = subprocess.run([EXE, "calibrate", "--pool", "tiny", "--json"], capture_output=True, text=True)
    assert proc.returncode != 0 and "has no labels" in proc.stderr
    subprocess.run([EXE, "import-labels", labels, "--pool", "tiny"], check=True, capture_output=True)
    again = json.loads(subprocess.run([EXE, "calibrate", "--pool", "tiny", "--json", "--n-boot", "200"],
                                      capture_output=True, text=True, check=True).stdout)
    assert again["threshold"] == 0.5 and again["cells"][0]["kappa"] == cell["kappa"]


def test_every_llmbar_judge_against_gold(db, capsys):
    """The bundled LLMBar pool against its gold labels: GPT-4 agrees best (LLMBar's own finding)."""
    from ingest.demo import seed_demo
    seed_demo(db, pools=("llmbar",))
    import_labels(db, DEMO / "llmbar-gold-labels.jsonl", "llmbar")
    cells = calibrate(db, "llmbar", n_boot=1000)
    assert cells.height >= 20 and (cells["n_pairs"] > 0).all()
    with capsys.disabled():
        print("\nLLMBar judges against gold: kappa [95% interval] (n judgements)")
        for c in cells.sort("format", "kappa", descending=[False, True]).iter_rows(named=True):
            print(f"  {c['judge']:>13} {c['format']:<34} {c['kappa']:.3f} [{c['kappa_lo']:.3f}, "
                  f"{c['kappa_hi']:.3f}]  n={c['n']}")
    for fmt, part in cells.group_by("format"):
        best = part.sort("kappa", descending=True)["judge"][0]
        assert best == "GPT-4", (fmt, part)
    # gold labels have no ties, and the binary verdicts none either: both kappas are the same
    assert (cells["kappa"] - cells["kappa_no_ties"]).abs().max() < 1e-12


def test_llmfao_crowd_votes_and_mtbench_votes_as_they_come(db, tmp_path, write_jsonl):
    """The public layouts: only crowd votes are labels, candidates by numeric id or name; MT-Bench
    second-turn votes are skipped."""
    from ingest.store import import_pool
    pool = write_jsonl("pool.jsonl", [{"prompt_id": "8", "prompt": "haiku", "candidate_id": c, "response": c}
                                      for c in ("97", "Weaver 12k", "29")])
    import_pool(db, pool, "fao")
    base = {"pair_set": "crowd", "pair_id": 0, "prompt_id": 8, "model_x": 97, "model_y": 98,
            "model_x_name": "Airoboros L2 70B", "model_y_name": "Weaver 12k"}
    rows = [{**base, "judge": "crowd", "worker": 58, "winner": "tie"},
            {**base, "judge": "crowd", "worker": 14, "winner": "y"},
            {**base, "judge": "gpt-4", "worker": None, "winner": "x"},
            {**base, "prompt_id": 99, "judge": "crowd", "worker": 3, "winner": "x"}]
    out = import_labels(db, write_jsonl("fao.jsonl", rows), "fao", source="llmfao")
    assert out["imported"] == 2 and out["n_annotators"] == 2
    assert out["skipped"] == {"not a crowd vote": 1, "prompt not in the pool": 1}
    assert sorted(query_rows(db, "SELECT label, annotator FROM pair_labels")) == [("B", "crowd:14"), ("tie", "crowd:58")]
    mt = [{"question_id": 8, "turn": 1, "model_a": "29", "model_b": "97", "winner": "model_a", "judge": "expert_1"},
          {"question_id": 8, "turn": 2, "model_a": "29", "model_b": "97", "winner": "model_b", "judge": "expert_1"},
          {"question_id": 8, "turn": 1, "model_a": "29", "model_b": "97", "winner": "which?", "judge": "expert_2"}]
    with pytest.raises(UserError, match="line 3, field 'winner'"):
        import_labels(db, write_jsonl("mt.jsonl", mt), "fao", source="mtbench")
    out = import_labels(db, write_jsonl("mt.jsonl", mt[:2]), "fao", source="mtbench")
    assert out["imported"] == 1 and out["skipped"] == {"second turn": 1}


def test_calibration_page_imports_the_bundled_labels_and_declares_a_threshold(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from ingest.demo import seed_demo
    from tests.conftest import REPO
    db = tmp_path / "demo.duckdb"
    seed_demo(db, pools=("llmbar",))
    _pool(tmp_path, db)                  # a pool of the user's own: the app seeds nothing more
    monkeypatch.setenv("JUDGEAUDIT_DB", str(db))
    at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=300).run()
    at.sidebar.selectbox[0].select("llmbar").run()
    at.switch_page("views/calibration/page.py").run()
    assert not at.exception and "No human labels" in at.info[0].value
    next(b for b in at.button if "bundled labels" in b.label).click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert {m.label: m.value for m in at.metric}["labelled pairs"] == "351"
    at.number_input[0].set_value(0.5).run()
    next(b for b in at.button if b.label == "Declare threshold and run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert query_rows(db, "SELECT threshold, result IS NOT NULL FROM calibrations") == [(0.5, True)]
    assert {m.label: m.value for m in at.metric}["declared threshold"] == "0.50"


def test_scoring_another_judge_leaves_a_cells_interval_unchanged():
    # the bootstrap of a cell is seeded by (seed, judge, format, decoding), not by its row: adding a
    # judge that sorts before 'j' (so 'j' moves from the first row to the second) changes nothing of j's
    labels, calls = _random_cell(4)
    alone = calibrate_frames(calls, labels, n_boot=300, seed=5).row(0, named=True)
    other = calls.with_columns(pl.lit("aaa").alias("judge"), (-pl.col("value")).alias("value"))
    both = calibrate_frames(pl.concat([other, calls]), labels, n_boot=300, seed=5)
    assert both["judge"].to_list() == ["aaa", "j"]
    j = both.row(1, named=True)
    for key in ("kappa", "kappa_lo", "kappa_hi", "kappa_no_ties_lo", "kappa_no_ties_hi"):
        assert j[key] == alone[key], key
    # another seed does move the interval (the check above can fail)
    assert calibrate_frames(calls, labels, n_boot=300, seed=6).row(0, named=True)["kappa_lo"] != alone["kappa_lo"]


def _annotated_pairs(seed, n_pairs=31):
    """Labels of pairs (0, 1) of prompts 0.. by 1-4 annotators h0.. (some gave theirs as (1, 0) with
    the label turned), and each pair's votes {annotator: vote} in the (0, 1) orientation."""
    rng = np.random.default_rng(seed)
    rows, votes = [], {}
    for p in range(n_pairs):
        truth = rng.choice(["A", "B", "tie"], p=[0.5, 0.3, 0.2])
        k = int(rng.integers(1, 5))
        votes[p] = {f"h{i}": truth if rng.random() < 0.6 else str(rng.choice(["A", "B", "tie"])) for i in range(k)}
        for i, (ann, v) in enumerate(votes[p].items()):
            if i and rng.random() < 0.3:                    # not the first row: (1, 0), label turned
                rows.append({"prompt_idx": p, "a_idx": 1, "b_idx": 0,
                             "label": {"A": "B", "B": "A", "tie": "tie"}[v], "annotator": ann})
            else:
                rows.append({"prompt_idx": p, "a_idx": 0, "b_idx": 1, "label": v, "annotator": ann})
    return pl.DataFrame(rows), votes


def _resampled_interval(first, second, pair_of, n_boot, rng, n_pairs=None):
    """Percentiles 2.5 and 97.5 of kappa over n_boot resamples of the pairs with replacement: pair p
    drawn w[b, p] times, w ~ Multinomial(n_pairs, uniform) from `rng`; each judgement weighted by its
    pair's draws; undefined kappas (p_e = 1) left out. n_pairs: the pairs resampled, by default
    max(pair_of) + 1 (give it when the last pairs have no judgement here)."""
    n = int(max(pair_of)) + 1 if n_pairs is None else n_pairs
    w = rng.multinomial(n, [1 / n] * n, size=n_boot)[:, pair_of].astype(float)
    total = w.sum(axis=1)
    p_o = (w * (first == second)).sum(axis=1) / total
    p_e = sum((w * (first == c)).sum(axis=1) / total * (w * (second == c)).sum(axis=1) / total
              for c in ("A", "B", "tie"))
    with np.errstate(invalid="ignore", divide="ignore"):
        draws = (p_o - p_e) / (1 - p_e)
    # the weighted formula is scikit-learn's with sample weights
    assert draws[0] == pytest.approx(cohen_kappa_score(first, second, sample_weight=w[0]), abs=1e-12)
    lo, hi = np.percentile(draws[~np.isnan(draws)], [2.5, 97.5])
    return lo, hi


def _ceiling_reference(votes, n_boot, seed):
    """The human ceiling restated: every ordered pair of two annotators' votes on one pair (pairs
    with 2+ votes) is a comparison; agreement and kappa by scikit-learn; the interval over resampled
    pairs from the ceiling's generator, default_rng([seed, 99])."""
    first, second, pair_of = [], [], []
    multi = [list(v.values()) for v in votes.values() if len(v) >= 2]
    for p, vs in enumerate(multi):
        for i in range(len(vs)):
            for j in range(len(vs)):
                if i != j:
                    first.append(vs[i])
                    second.append(vs[j])
                    pair_of.append(p)
    first, second = np.array(first), np.array(second)
    n = len(multi)
    lo, hi = _resampled_interval(first, second, pair_of, n_boot, np.random.default_rng([seed, 99]))
    return {"n_pairs": n, "n_votes": sum(len(v) for v in multi),
            "n_annotators": len({ann for v in votes.values() for ann in v}), "n_comparisons": len(first),
            "agreement": float(np.mean(first == second)), "kappa": cohen_kappa_score(first, second),
            "kappa_lo": lo, "kappa_hi": hi}


def _assert_ceiling(out: pl.DataFrame, expected: dict):
    assert out.columns == HUMAN_COLUMNS and out.height == 1
    row = out.row(0, named=True)
    for key in ("n_pairs", "n_votes", "n_annotators", "n_comparisons"):
        assert row[key] == expected[key], key
    for key in ("agreement", "kappa", "kappa_lo", "kappa_hi"):
        assert row[key] == pytest.approx(expected[key], abs=1e-12), key


def test_human_ceiling_interval_resamples_pairs_with_the_documented_defaults():
    labels, votes = _annotated_pairs(11)
    assert sum(len(v) >= 2 for v in votes.values()) not in (0, 31)    # some single votes to leave out
    # defaults: 2000 resamples, seed 0
    _assert_ceiling(human_agreement(labels), _ceiling_reference(votes, 2000, 0))
    _assert_ceiling(human_agreement(labels, n_boot=500, seed=3), _ceiling_reference(votes, 500, 3))


def test_human_ceiling_interval_over_many_pairs_takes_exactly_n_boot_resamples():
    # 2100 pairs: the resamples are drawn in chunks (about 4 million pair draws each: 1904 + 96 of
    # the 2000 here), and the interval is still that of 2000 resamples
    rng = np.random.default_rng(21)
    votes = {p: {"u": v, "w": v if rng.random() < 0.7 else str(rng.choice(["A", "B", "tie"]))}
             for p, v in enumerate(rng.choice(["A", "B", "tie"], size=2100, p=[0.5, 0.3, 0.2]).tolist())}
    labels = pl.DataFrame([{"prompt_idx": p, "a_idx": 0, "b_idx": 1, "label": v, "annotator": ann}
                           for p, vs in votes.items() for ann, v in vs.items()])
    _assert_ceiling(human_agreement(labels, n_boot=2000), _ceiling_reference(votes, 2000, 0))


def test_human_ceiling_without_two_votes_on_any_pair():
    schema = {"n_pairs": pl.Int64, "n_votes": pl.Int64, "n_annotators": pl.Int64, "n_comparisons": pl.Int64,
              "agreement": pl.Float64, "kappa": pl.Float64, "kappa_lo": pl.Float64, "kappa_hi": pl.Float64}
    none = {"agreement": None, "kappa": None, "kappa_lo": None, "kappa_hi": None}
    empty = pl.DataFrame(schema={"prompt_idx": pl.Int64, "a_idx": pl.Int64, "b_idx": pl.Int64, "label": pl.String,
                                 "annotator": pl.String})
    out = human_agreement(empty, n_boot=50)
    assert dict(out.schema) == schema
    assert out.to_dicts() == [{"n_pairs": 0, "n_votes": 0, "n_annotators": 0, "n_comparisons": 0, **none}]
    # three pairs with one vote each, by two annotators: nothing to compare
    singles = pl.DataFrame([{"prompt_idx": p, "a_idx": 0, "b_idx": 1, "label": "A", "annotator": ann}
                            for p, ann in ((0, "u"), (1, "v"), (2, "u"))])
    out = human_agreement(singles, n_boot=50)
    assert dict(out.schema) == schema
    assert out.to_dicts() == [{"n_pairs": 0, "n_votes": 0, "n_annotators": 2, "n_comparisons": 0, **none}]


def test_unanimous_humans_agree_fully_and_have_no_kappa():
    # 3 pairs x 2 annotators, every vote A: 6 ordered comparisons, all agreeing; p_e = 1, so kappa
    # (and every resample's kappa) is undefined: null, not NaN
    labels = pl.DataFrame([{"prompt_idx": p, "a_idx": 0, "b_idx": 1, "label": "A", "annotator": ann}
                           for p in range(3) for ann in ("u", "v")])
    out = human_agreement(labels, n_boot=50)
    assert out.columns == HUMAN_COLUMNS
    assert out.to_dicts() == [{"n_pairs": 3, "n_votes": 6, "n_annotators": 2, "n_comparisons": 6, "agreement": 1.0,
                               "kappa": None, "kappa_lo": None, "kappa_hi": None}]


def test_human_ceiling_and_stored_labels_read_the_pools_labels(tmp_path, write_jsonl):
    """On a database file of its own (not the one JUDGEAUDIT_DB names, so a function that dropped
    its db argument reads another file): the stored labels in file order, and the ceiling from them."""
    from ingest.store import import_pool
    path = tmp_path / "labelled.duckdb"
    rows = [{"prompt_id": f"p{p}", "prompt": f"q{p}", "candidate_id": c, "response": f"{c} {p}"}
            for p in range(31) for c in ("x", "y")]
    import_pool(path, write_jsonl("pool.jsonl", rows), "lab")
    labels, votes = _annotated_pairs(12)
    lines = [{"prompt_id": f"p{r['prompt_idx']}", "a_id": "xy"[r["a_idx"]], "b_id": "xy"[r["b_idx"]],
              "label": r["label"], "annotator": r["annotator"]} for r in labels.iter_rows(named=True)]
    import_labels(path, write_jsonl("labels.jsonl", lines), "lab")
    stored = stored_labels(path, "lab")
    assert stored.columns == ["prompt_idx", "a_idx", "b_idx", "label", "annotator", "source", "line"]
    idx = dict(((p, c), (pi, ci)) for p, c, pi, ci in query_rows(
        path, "SELECT prompt_id, candidate_id, prompt_idx, cand_idx FROM candidates JOIN prompts "
              "USING (pool_id, prompt_idx)"))
    assert stored.select("prompt_idx", "a_idx", "b_idx").rows() == [
        (idx[(r["prompt_id"], r["a_id"])][0], idx[(r["prompt_id"], r["a_id"])][1], idx[(r["prompt_id"], r["b_id"])][1])
        for r in lines]
    assert stored["label"].to_list() == [r["label"] for r in lines]
    assert stored["annotator"].to_list() == [r["annotator"] for r in lines]
    assert stored["line"].to_list() == list(range(1, len(lines) + 1)) and set(stored["source"]) == {"jsonl"}
    # the ceiling of the stored labels, with the defaults (2000 resamples, seed 0)
    _assert_ceiling(human_ceiling(path, "lab"), _ceiling_reference(votes, 2000, 0))
    # labels given: those, not the stored ones (here without annotator h1's votes)
    given = stored.filter(pl.col("annotator") != "h1")
    without = {p: {ann: v for ann, v in vs.items() if ann != "h1"} for p, vs in votes.items()}
    _assert_ceiling(human_ceiling(path, "lab", labels=given, n_boot=300, seed=7),
                    _ceiling_reference(without, 300, 7))


def test_calibrate_reads_the_pools_calls_and_labels(tmp_path, write_jsonl):
    """On a database file of its own (not the one JUDGEAUDIT_DB names): 30 labelled pairs (x, y) in
    a random orientation, judge j's tournament calls on each in both orders, and a likert5 call
    that is no judgement."""
    from ingest.store import import_pool
    from ingest.scoring import import_verdicts
    from audit import cell_rng
    path = tmp_path / "calls.duckdb"
    import_pool(path, write_jsonl("pool.jsonl", [{"prompt_id": f"p{p}", "prompt": f"q{p}", "candidate_id": c,
                                                  "response": f"{c} {p}"} for p in range(30) for c in "xy"]), "cal")
    rng = np.random.default_rng(30)
    labels, verdicts, human, judge, pair_of = [], [], [], [], []
    margin = {"A++": 2, "A+": 1, "TIE": 0, "B+": -1, "B++": -2}
    for p in range(30):
        x, y = ("x", "y") if rng.random() < 0.6 else ("y", "x")
        truth = str(rng.choice(["A", "B", "tie"], p=[0.45, 0.35, 0.2]))
        labels.append({"prompt_id": f"p{p}", "a_id": x, "b_id": y, "label": truth})
        for a, b in (("x", "y"), ("y", "x")):
            raw = str(rng.choice(list(margin)))
            verdicts.append({"judge": "j", "format": "tournament", "prompt_id": f"p{p}", "a_id": a, "b_id": b,
                             "raw": raw})
            slot = "A" if margin[raw] > 0 else "B" if margin[raw] < 0 else "tie"
            if a != x and slot != "tie":                    # shown the other way round: turn it
                slot = "B" if slot == "A" else "A"
            human.append(truth)
            judge.append(slot)
            pair_of.append(p)
    verdicts.append({"judge": "j", "format": "likert5", "prompt_id": "p0", "candidate_id": "x", "raw": "4"})
    import_verdicts(path, write_jsonl("v.jsonl", verdicts), "cal")
    import_labels(path, write_jsonl("l.jsonl", labels), "cal")
    human, judge = np.array(human), np.array(judge)

    def check(cell, h, j, pairs, n_boot, seed, threshold, width):
        assert (cell["judge"], cell["format"], cell["decoding"]) == ("j", "tournament", "greedy")
        assert (cell["n"], cell["n_pairs"]) == (len(h), len(set(pairs)))
        assert cell["agreement"] == pytest.approx(np.mean(h == j), abs=1e-12)
        assert cell["kappa"] == pytest.approx(cohen_kappa_score(h, j), abs=1e-12)
        local = np.unique(pairs, return_inverse=True)[1]
        lo, hi = _resampled_interval(h, j, local, n_boot, cell_rng(seed, "j", "tournament", "greedy"))
        assert (cell["kappa_lo"], cell["kappa_hi"]) == (pytest.approx(lo, abs=1e-12), pytest.approx(hi, abs=1e-12))
        assert cell["threshold"] == threshold and cell["target_width"] == width
        assert cell["decision"] == (None if threshold is None else "pass" if lo >= threshold else
                                    "fail" if hi < threshold else "inconclusive")
        assert cell["n_pairs_needed"] == math.ceil(len(set(pairs)) * ((hi - lo) / width) ** 2)

    # the stored labels, with the defaults: 2000 resamples, seed 0, no threshold, target width 0.2
    cells = calibrate(path, "cal")
    assert cells.height == 1
    check(cells.row(0, named=True), human, judge, pair_of, 2000, 0, None, 0.2)
    cell = calibrate(path, "cal", n_boot=300, seed=4, threshold=0.05, target_width=0.5).row(0, named=True)
    check(cell, human, judge, pair_of, 300, 4, 0.05, 0.5)
    # labels given: those (here the first 20 pairs), not the stored ones
    given = stored_labels(path, "cal").head(20)
    keep = np.array(pair_of) < 20
    cell = calibrate(path, "cal", labels=given, n_boot=300, seed=4).row(0, named=True)
    check(cell, human[keep], judge[keep], np.array(pair_of)[keep], 300, 4, None, 0.2)


def test_no_resamples_no_interval():
    labels, calls = _random_cell(7, n_pairs=20)
    cell = calibrate_frames(calls, labels, n_boot=0).row(0, named=True)
    assert cell["kappa"] is not None
    assert [cell[k] for k in ("kappa_lo", "kappa_hi", "kappa_no_ties_lo", "kappa_no_ties_hi", "n_pairs_needed")] == \
        [None] * 5
    out = human_agreement(labels.vstack(labels.with_columns(pl.lit("h2").alias("annotator"))), n_boot=0)
    assert out["kappa"][0] is not None and out["kappa_lo"][0] is None and out["kappa_hi"][0] is None


def test_threshold_decision_at_its_boundaries():
    # pass when kappa_lo >= threshold, fail when kappa_hi < threshold, otherwise inconclusive
    assert decide(0.4, 0.7, 0.4) == "pass"
    assert decide(0.39, 0.7, 0.4) == "inconclusive"
    assert decide(0.1, 0.4, 0.4) == "inconclusive"
    assert decide(0.1, 0.39, 0.4) == "fail"
    assert decide(0.1, 0.39, None) is None and decide(None, None, 0.4) is None


def test_no_pairs_needed_without_a_width_to_scale():
    # 50 pairs, interval [0.1, 0.5], target 0.2: 50 * (0.4 / 0.2)^2 = 200; none for a zero-width
    # interval (nothing to scale) or a target width that is not positive
    assert pairs_needed(50, 0.1, 0.5, 0.2) == 200
    assert pairs_needed(50, 0.3, 0.3, 0.2) is None and pairs_needed(50, 0.5, 0.1, 0.2) is None
    assert pairs_needed(50, 0.1, 0.5, 0.0) is None and pairs_needed(50, 0.1, 0.5, -0.2) is None
    assert pairs_needed(50, None, None, 0.2) is None and pairs_needed(50, 0.1, 0.5, None) is None
    # a cell's default target width is 0.2
    cell = cell_agreement(np.arange(4), np.array([0, 1, 2, 0]), np.array([0, 1, 1, 0]), 50, np.random.default_rng(0))
    assert cell["target_width"] == 0.2


def _oriented_judgements(labels, calls):
    """Each call restated by hand: (human label, judge's verdict turned to the label's orientation,
    the pair's index = its label's row) as three arrays, one label row per prompt."""
    row_of = {r["prompt_idx"]: (k, r) for k, r in enumerate(labels.iter_rows(named=True))}
    human, judge, pair_of = [], [], []
    for c in calls.iter_rows(named=True):
        k, r = row_of[c["prompt_idx"]]
        slot = "A" if c["value"] > 0 else "B" if c["value"] < 0 else "tie"
        if c["a_idx"] != r["a_idx"] and slot != "tie":      # shown the other way round: turn it
            slot = "B" if slot == "A" else "A"
        human.append(r["label"])
        judge.append(slot)
        pair_of.append(k)
    return np.array(human), np.array(judge), np.array(pair_of)


def test_calibrate_frames_defaults_and_the_interval_without_ties():
    """Defaults: 2000 resamples, seed 0. The interval without ties resamples all the cell's pairs
    again from the same generator, after the interval with ties, counting only the judgements where
    neither the humans nor the judge said tie (categories A and B)."""
    from audit import cell_rng
    labels, calls = _random_cell(9)
    human, judge, pair_of = _oriented_judgements(labels, calls)
    keep = (human != "tie") & (judge != "tie")
    assert keep.sum() not in (0, len(keep))                     # some judgements with a tie, some without
    cell = calibrate_frames(calls, labels).row(0, named=True)
    rng = cell_rng(0, "j", "f", "greedy")
    lo, hi = _resampled_interval(human, judge, pair_of, 2000, rng)
    lo_nt, hi_nt = _resampled_interval(human[keep], judge[keep], pair_of[keep], 2000, rng, n_pairs=60)
    assert (cell["kappa_lo"], cell["kappa_hi"]) == (pytest.approx(lo, abs=1e-12), pytest.approx(hi, abs=1e-12))
    assert (cell["kappa_no_ties_lo"], cell["kappa_no_ties_hi"]) == \
        (pytest.approx(lo_nt, abs=1e-12), pytest.approx(hi_nt, abs=1e-12))
    assert hi_nt - lo_nt > 0.1                                  # a real interval, not a point
    assert cell["n_no_ties"] == keep.sum()
    assert cell["agreement_no_ties"] == pytest.approx(np.mean(human[keep] == judge[keep]), abs=1e-12)
    assert cell["kappa_no_ties"] == pytest.approx(cohen_kappa_score(human[keep], judge[keep]), abs=1e-12)


CAL_SCHEMA = {"judge": pl.String, "format": pl.String, "decoding": pl.String, "n": pl.Int64, "n_pairs": pl.Int64,
              "agreement": pl.Float64, "kappa": pl.Float64, "kappa_lo": pl.Float64, "kappa_hi": pl.Float64,
              "n_no_ties": pl.Int64, "agreement_no_ties": pl.Float64, "kappa_no_ties": pl.Float64,
              "kappa_no_ties_lo": pl.Float64, "kappa_no_ties_hi": pl.Float64, "confusion": pl.List(pl.Int64),
              "threshold": pl.Float64, "decision": pl.String, "passes": pl.Boolean, "target_width": pl.Float64,
              "n_pairs_needed": pl.Int64, "n_prob": pl.Int64, "probability_source": pl.String, "ece": pl.Float64,
              "brier": pl.Float64, "ece_isotonic": pl.Float64,
              "reliability": pl.List(pl.Struct({"lo": pl.Float64, "hi": pl.Float64, "n": pl.Int64,
                                                "mean_p": pl.Float64, "mean_y": pl.Float64}))}


def test_cells_sorted_by_judge_format_decoding_with_the_documented_schema():
    # 8 cells (judges j1, j2 x formats f1, f2 x decodings d1, d2) given in reverse order: the rows
    # come sorted by judge, then format, then decoding (a sort on any two of them, or groups in
    # hash order, put some cell out of place)
    labels = pl.DataFrame([{"prompt_idx": p, "a_idx": 0, "b_idx": 1, "label": lab, "annotator": "h"}
                           for p, lab in enumerate(["A", "B", "tie", "A"])])
    keys = [(j, f, d) for j in ("j1", "j2") for f in ("f1", "f2") for d in ("d1", "d2")]
    calls = pl.DataFrame([{"judge": j, "format": f, "decoding": d, "prompt_idx": p, "a_idx": 0, "b_idx": 1,
                           "value": float(v)}
                          for k, (j, f, d) in reversed(list(enumerate(keys)))
                          for p, v in enumerate([1, -1, 0, (-1) ** k])])
    out = calibrate_frames(calls, labels, n_boot=20)
    assert dict(out.schema) == CAL_SCHEMA and out.columns == list(CAL_SCHEMA)
    assert out.select("judge", "format", "decoding").rows() == keys
    # even cells: A, B, tie, A against humans A, B, tie, A (agreement 1); odd ones end with B (3/4)
    assert out["agreement"].to_list() == [1.0, 0.75] * 4


@pytest.mark.parametrize("empty", ["labels", "calls"])
def test_no_labels_or_no_calls_at_all_give_no_cells(empty):
    # an empty frame, even one without columns, for either input: no cell, the documented columns
    labels, calls = _random_cell(0, n_pairs=5)
    frames = {"labels": labels, "calls": calls, empty: pl.DataFrame()}
    out = calibrate_frames(frames["calls"], frames["labels"], n_boot=10)
    assert out.height == 0 and dict(out.schema) == CAL_SCHEMA


def test_a_cell_where_every_judgement_has_a_tie_has_no_untied_agreement():
    # humans say tie on pairs 0, 1, 2; the judge A, B on pair 0 and tie on pairs 1, 2: nothing
    # without a tie, so no agreement, kappa or interval without ties (None, not NaN, no error).
    # With ties: confusion row tie = (1, 1, 2); p_o = 2/4; p_e = 1 * 2/4 (humans all tie) -> kappa 0
    cell = cell_agreement(np.array([0, 0, 1, 2]), np.array([2, 2, 2, 2]), np.array([0, 1, 2, 2]), 50,
                          np.random.default_rng(0))
    assert cell["n_no_ties"] == 0
    assert [cell[k] for k in ("agreement_no_ties", "kappa_no_ties", "kappa_no_ties_lo", "kappa_no_ties_hi")] == \
        [None] * 4
    assert cell["agreement"] == pytest.approx(0.5, abs=1e-12) and cell["kappa"] == pytest.approx(0.0, abs=1e-12)
    # the counts are ints (the JSON shows 2, not 2.0)
    assert cell["confusion"] == [0, 0, 0, 0, 0, 0, 1, 1, 2]
    assert all(type(v) is int for v in cell["confusion"])


def test_a_cell_passes_when_kappa_lo_equals_the_threshold():
    # one pair, humans A, the judge A then B: p_o = 1/2, p_e = (2/2)(1/2) = 1/2, kappa 0; every
    # resample draws that one pair once, so every kappa is 0 and the interval is [0, 0] (width 0)
    cell = cell_agreement(np.array([0, 0]), np.array([0, 0]), np.array([0, 1]), 50, np.random.default_rng(0),
                          threshold=0.0)
    assert (cell["kappa"], cell["kappa_lo"], cell["kappa_hi"]) == (0.0, 0.0, 0.0)
    assert cell["decision"] == "pass" and cell["passes"] is True
    above = cell_agreement(np.array([0, 0]), np.array([0, 0]), np.array([0, 1]), 50, np.random.default_rng(0),
                           threshold=1e-9)
    assert above["decision"] == "fail" and above["passes"] is False


def test_a_cell_without_judgements_or_resamples_counts_no_pairs():
    # no judgements and n_boot = 0 (nothing to resample): 0 judgements on 0 pairs, no interval
    none = np.array([], dtype=int)
    cell = cell_agreement(none, none, none, 0, np.random.default_rng(0))
    assert (cell["n"], cell["n_pairs"], cell["n_no_ties"]) == (0, 0, 0)
    assert cell["kappa_lo"] is None and cell["n_pairs_needed"] is None


def test_the_calls_on_the_stored_labels_pairs_alone_give_the_same_cells(tmp_path):
    """With the stored labels, calibrate reads only the calls on their pairs (calibration_labelled_calls.sql);
    with the same labels passed in, every comparative call: the same rows (a pool of many TIE verdicts,
    second samples, pairs labelled either way round and by two annotators)."""
    from polars.testing import assert_frame_equal

    from audit import calibrate
    from audit._calibrate import stored_labels
    from ingest import Database
    from tests.audit.test_worth_cells import labelled_pool
    db = Database(tmp_path / "c.duckdb")
    labelled_pool(db, tmp_path)
    got = calibrate(db, "lab", n_boot=200)
    assert got.height >= 2 and got["n"].min() > 0
    assert_frame_equal(got, calibrate(db, "lab", labels=stored_labels(db, "lab"), n_boot=200),
                       check_exact=False, rel_tol=1e-9, abs_tol=1e-12)
