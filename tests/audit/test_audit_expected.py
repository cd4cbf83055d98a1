"""Expected-score cells, checked against the label distributions stored with each call: a
candidate's expected score is sum_k p_k * v_k over the format's labels, normalised like its label
score; the cell counts the calls that carry a distribution. Scored with the (deterministic, local)
fake judge through the real runner and store."""

import json

import polars as pl
import pytest

from audit import audit_cells, candidate_scores
from ingest.store import import_pool
from ingest.scoring import import_verdicts
from ingest.scoring import score, ScoreRequest
from tests.conftest import query_rows


def test_expected_scores_are_the_probability_weighted_labels(db, write_jsonl, monkeypatch, tmp_path):
    monkeypatch.setenv("JUDGEAUDIT_DB", str(tmp_path / "not-this.duckdb"))   # every call names db
    rows = [{"prompt_id": f"q{p}", "prompt": f"Question {p}?", "candidate_id": f"c{c}",
             "response": f"Answer {c} to {p}.", "reference": float((p * 7 + c) % 4)} for p in range(5) for c in range(3)]
    import_pool(db, write_jsonl("pool.jsonl", rows), "p")
    score(ScoreRequest(pool="p", judge="fake:j", formats=["likert5", "numeric100"], progress=False, db=db))
    stored = query_rows(db, "SELECT f.name, v.a_idx, v.answer_probs, v.value FROM verdicts v "
                            "JOIN formats f USING (format_id) ORDER BY f.name, v.a_idx")
    assert len(stored) == 30
    scale = {"likert5": (1, 5), "numeric100": (0, 100)}
    got = candidate_scores(db, "p")
    cells = {(r["format"], r["score"]): r for r in audit_cells(db, "p").to_dicts()}
    for fmt, (lo, hi) in scale.items():
        calls = [(a, json.loads(p) if p else None, v) for f, a, p, v in stored if f == fmt]
        with_probs = [c for c in calls if c[1]]
        assert with_probs, "the fake judge gives label distributions"
        expect = {a: (sum(q * float(k) for k, q in probs.items()) - lo) / (hi - lo) for a, probs, _ in with_probs}
        mine = got.filter((pl.col("format") == fmt) & (pl.col("score") == "expected"))
        assert dict(zip(mine["cand_idx"], mine["s"])) == pytest.approx(expect, abs=1e-12)
        label = got.filter((pl.col("format") == fmt) & (pl.col("score") == "label"))
        assert dict(zip(label["cand_idx"], label["s"])) == pytest.approx(
            {a: (v - lo) / (hi - lo) for a, _, v in calls if v is not None}, abs=1e-12)
        exp_cell = cells[(fmt, "expected")]
        # n_verdicts counts the calls; parse_rate the share that carries a distribution
        assert exp_cell["n_verdicts"] == 15 and exp_cell["parse_rate"] == pytest.approx(len(with_probs) / 15)
        assert exp_cell["nominal_levels"] is None and cells[(fmt, "label")]["nominal_levels"] == hi - lo + 1
        assert audit_cells(db, "p").schema["nominal_levels"] == pl.Int64  # one type, label and expected
        assert exp_cell["n_candidates"] == len(expect)
    values = [v for f, _, _, v in stored if f == "numeric100" and v is not None]
    assert cells[("numeric100", "label")]["mult5_share"] == pytest.approx(sum(v % 5 == 0 for v in values) / len(values))
    assert cells[("numeric100", "expected")]["mult5_share"] is None and cells[("likert5", "label")]["mult5_share"] is None
    # the label cell lists first, then the expected one, format by format
    order = [(r["format"], r["score"]) for r in audit_cells(db, "p").to_dicts()]
    assert order == [("likert5", "label"), ("likert5", "expected"), ("numeric100", "label"), ("numeric100", "expected")]


def test_cells_list_by_judge_format_decoding_then_label_before_expected(db, write_jsonl):
    rows = [{"prompt_id": f"q{p}", "prompt": "Q?", "candidate_id": f"c{c}", "response": f"A{c}", "reference": float(c)}
            for p in range(2) for c in range(2)]
    import_pool(db, write_jsonl("pool.jsonl", rows), "p")
    for mode in ("greedy", "constrained"):
        score(ScoreRequest(pool="p", judge="fake:j", formats=["likert5"], decoding=mode, progress=False, db=db))
    order = [(r["decoding"], r["score"]) for r in audit_cells(db, "p").to_dicts()]
    # decoding alphabetically (constrained, greedy), then the label cell before the expected one
    assert order == [("constrained", "label"), ("constrained", "expected"), ("greedy", "label"), ("greedy", "expected")]


def test_an_expected_cell_counts_only_the_calls_with_a_distribution(db, write_jsonl):
    # One prompt, three candidates; judge "a" rates likert5 and only a's call carries a label
    # distribution; judge "b" rates binary. Sorted by judge first: (a, likert5) before (b, binary)
    # although binary sorts before likert5.
    rows = [{"prompt_id": "q", "prompt": "Q?", "candidate_id": c, "response": c, "reference": float(k)}
            for k, c in enumerate("xyz")]
    import_pool(db, write_jsonl("pool.jsonl", rows), "p")
    verdicts = [{"judge": "a", "format": "likert5", "prompt_id": "q", "candidate_id": "x", "raw": "2",
                 "label_probs": {"1": 0.5, "3": 0.5}},
                {"judge": "a", "format": "likert5", "prompt_id": "q", "candidate_id": "y", "raw": "4"},
                {"judge": "a", "format": "likert5", "prompt_id": "q", "candidate_id": "z", "raw": "5"},
                {"judge": "b", "format": "binary", "prompt_id": "q", "candidate_id": "x", "raw": "ACCEPT"}]
    import_verdicts(db, write_jsonl("v.jsonl", verdicts), "p")
    cells = audit_cells(db, "p").to_dicts()
    assert [(r["judge"], r["format"], r["score"]) for r in cells] == [
        ("a", "likert5", "label"), ("a", "likert5", "expected"), ("b", "binary", "label")]
    label, expected = cells[0], cells[1]
    assert (label["n_verdicts"], label["parse_rate"], label["n_candidates"]) == (3, 1.0, 3)
    # one call of three carries a distribution: parse rate 1/3, one candidate scored
    assert (expected["n_verdicts"], expected["parse_rate"], expected["n_candidates"]) == (3, pytest.approx(1 / 3), 1)
    # x's expected score: 0.5 * 1 + 0.5 * 3 = 2 on 1..5 -> (2 - 1) / 4 = 0.25
    got = candidate_scores(db, "p").filter(pl.col("score") == "expected")
    assert got["s"].to_list() == [0.25]
