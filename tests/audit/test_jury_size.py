"""A jury's effective size (docs/metrics.md#a-jurys-effective-size): m / (1 + (m − 1)·ρ̄) by hand,
ρ̄ from the members' errors against human labels where there are enough of them (numpy's correlations
on the arrays written here), from their scores where there are not; identical members are worth one;
`judges --json` carries it on the jury's cells; the demo's MT-Bench jury."""

import itertools
import json

import numpy as np
import pytest

from audit import jury_sizes
from audit._jury_size import effective_members
from ingest.scoring import import_verdicts
from ingest.store import import_labels, import_pool, save_jury
from tests.audit.conftest import main_json
from tests.fixtures import write_jsonl


def test_effective_members_by_hand():
    # 4 members, rho 0.61: 4 / (1 + 3 x 0.61) = 4 / 2.83 = 1.4134
    assert effective_members(4, 0.61) == pytest.approx(4 / 2.83)
    assert effective_members(3, 0.0) == 3 and effective_members(3, 1.0) == 1
    # rho -0.25 with 3: 3 / (1 - 0.5) = 6; at -0.5 the denominator is 0: no size
    assert effective_members(3, -0.25) == pytest.approx(6) and effective_members(3, -0.5) is None
    assert effective_members(3, None) is None


# likert5 answers of three members on 12 candidates (p0..p11, one candidate each)
ANSWERS = {"a": [5, 4, 2, 1, 3, 5, 2, 4, 1, 3, 5, 2],
           "b": [4, 4, 1, 2, 3, 5, 1, 5, 2, 2, 4, 3],
           "c": [1, 5, 3, 2, 4, 2, 5, 1, 3, 4, 2, 5]}
ACCEPT = [1, 1, 0, 0, 1, 1, 0, 1, 0, 0, 1, 0]     # the humans' labels (one annotator)


def _db(tmp_path, labels: int):
    db = tmp_path / "j.duckdb"
    pool = [{"prompt_id": f"p{i}", "prompt": f"q{i}", "candidate_id": "x", "response": f"answer {i}"} for i in range(12)]
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", pool), "p")
    rows = [{"judge": j, "format": "likert5", "prompt_id": f"p{i}", "candidate_id": "x", "raw": str(v)}
            for j, vs in ANSWERS.items() for i, v in enumerate(vs)]
    import_verdicts(db, write_jsonl(tmp_path / "v.jsonl", rows), "p")
    if labels:
        import_labels(db, write_jsonl(tmp_path / "l.jsonl", [
            {"prompt_id": f"p{i}", "candidate_id": "x", "label": "accept" if ACCEPT[i] else "reject"}
            for i in range(labels)]), "p")
    save_jury(db, "p", "panel", ["a", "b", "c"], "mean")
    return db


def _rho(values) -> float:
    return float(np.mean([np.corrcoef(values[x], values[y])[0, 1] for x, y in itertools.combinations("abc", 2)]))


def test_errors_against_twelve_labels(tmp_path):
    db = _db(tmp_path, labels=12)
    (row,) = jury_sizes(db, "p").to_dicts()
    f = {j: (np.array(v) - 1) / 4 for j, v in ANSWERS.items()}
    rho = _rho({j: f[j] - np.array(ACCEPT) for j in "abc"})      # errors f - y on the 12 labelled items
    assert (row["judge"], row["format"], row["m"], row["basis"], row["n"]) == ("panel", "likert5", 3, "errors", 12)
    assert row["mean_correlation"] == pytest.approx(rho, abs=1e-12)
    assert row["effective_members"] == pytest.approx(3 / (1 + 2 * rho), abs=1e-12)


def test_scores_where_too_few_items_are_labelled(tmp_path):
    db = _db(tmp_path, labels=9)                    # 9 < 10 labelled items: the scores' correlation
    (row,) = jury_sizes(db, "p").to_dicts()
    rho = _rho({j: np.array(v, dtype=float) for j, v in ANSWERS.items()})
    assert (row["basis"], row["n"]) == ("scores", 12)
    assert row["mean_correlation"] == pytest.approx(rho, abs=1e-12)


def test_identical_members_are_worth_one(tmp_path):
    db = tmp_path / "j.duckdb"
    pool = [{"prompt_id": f"p{i}", "prompt": f"q{i}", "candidate_id": "x", "response": f"r{i}"} for i in range(6)]
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", pool), "p")
    rows = [{"judge": j, "format": "likert5", "prompt_id": f"p{i}", "candidate_id": "x", "raw": str(1 + i % 5)}
            for j in ("a", "b", "c", "d") for i in range(6)]
    import_verdicts(db, write_jsonl(tmp_path / "v.jsonl", rows), "p")
    save_jury(db, "p", "echo", ["a", "b", "c", "d"], "median")
    (row,) = jury_sizes(db, "p").to_dicts()
    assert (row["m"], row["mean_correlation"], row["effective_members"]) == (4, pytest.approx(1.0), pytest.approx(1.0))


def test_judges_json_carries_the_size(tmp_path, capsys):
    db = _db(tmp_path, labels=12)
    doc = main_json(capsys, "judges", "--db", str(db), "--pool", "p", "--json")
    (cell,) = [c for c in doc["cells"] if c["judge"] == "panel"]
    (row,) = jury_sizes(db, "p").to_dicts()
    assert cell["effective_members"] == pytest.approx(row["effective_members"])
    assert (cell["effective_members_m"], cell["effective_members_n"], cell["member_correlation_basis"]) == \
        (3, 12, "errors")
    assert all("effective_members" not in c for c in doc["cells"] if c["judge"] != "panel")


DEMO_POOLS_SEEDED = ("mtbench",)


def test_the_demo_jury(demo_db):
    # the four MT-Bench judges on the LLMBar formats, their errors against the experts' votes on about
    # 140 pairs correlate at 0.6-0.7: four judges are worth about 1.3-1.4
    sizes = {r["format"]: r for r in jury_sizes(demo_db, "mtbench").to_dicts()}
    assert set(sizes) == {"llmbar-pair-metrics-reference", "llmbar-pair-vanilla-norules"}
    for r in sizes.values():
        assert (r["judge"], r["m"], r["basis"]) == ("mtbench-jury", 4, "errors") and r["n"] >= 100
        assert 0.5 < r["mean_correlation"] < 0.8 and 1.2 < r["effective_members"] < 1.6
