"""`distil`, the `distilled:DIR` judge and `apply`: on a pool whose responses carry their quality in
words, so the student has something to learn; the teacher's answers are known here independently."""

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ingest import UserError
from ingest.scoring import ScoreRequest, import_verdicts, score
from ingest.scoring.judges.distilled import Student, answers_from_outputs
from ingest.store import import_pool
from tests.conftest import query_rows
from tests.fixtures import write_jsonl
from train.apply import apply
from train.distil import distil, held_out_prompts

WORDS = ["dreadful wrong", "weak vague", "plain adequate", "solid helpful", "excellent thorough"]


def rows_of(n_prompts: int, seed: int = 0):
    """Pool rows; quality q in 0..4 is written into the response's words; the teacher answers q + 1."""
    rng = np.random.default_rng(seed)
    rows, quality = [], {}
    for p in range(n_prompts):
        for c in range(4):
            q = int(rng.integers(0, 5))
            rows.append({"prompt_id": f"p{p}", "prompt": f"Question {p} about topic {p % 7}",
                         "candidate_id": f"c{c}", "response": f"This answer is {WORDS[q]}. Filler {rng.integers(0, 50)}"})
            quality[(f"p{p}", f"c{c}")] = q
    return rows, quality


@pytest.fixture
def taught(db, tmp_path):
    rows, quality = rows_of(60)
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", rows), "p")
    verdicts = [{"judge": "teacher", "format": "likert5", "prompt_id": r["prompt_id"], "candidate_id": r["candidate_id"],
                 "raw": str(quality[(r["prompt_id"], r["candidate_id"])] + 1)} for r in rows]
    verdicts += [{"judge": "teacher", "format": "binary", "prompt_id": r["prompt_id"], "candidate_id": r["candidate_id"],
                  "raw": "ACCEPT" if quality[(r["prompt_id"], r["candidate_id"])] >= 2 else "REJECT"} for r in rows]
    import_verdicts(db, write_jsonl(tmp_path / "verdicts.jsonl", verdicts), "p")
    return rows, quality


def test_threshold_rule_by_hand():
    spec = {"kind": "regression", "scale": [1, 5], "answers": {str(v): float(v) for v in range(1, 6)}}
    # value = 1 + 4 clip(y): -0.2 -> 1; 0.1 -> 1.4 -> "1"; 0.125 -> 1.5, halfway between 1 and 2 -> the lower "1";
    # 0.5 -> 3; 0.62 -> 3.48 -> "3"; 0.63 -> 3.52 -> "4"; 1.3 -> 5
    out = np.array([-0.2, 0.1, 0.125, 0.5, 0.62, 0.63, 1.3])
    assert answers_from_outputs(spec, out) == ["1", "1", "1", "3", "3", "4", "5"]
    classes = {"kind": "classes", "answers": {"ACCEPT": 1.0, "REJECT": 0.0}, "classes": ["ACCEPT", "REJECT"]}
    assert answers_from_outputs(classes, np.array([[0.2, -0.2], [-1.0, 1.0], [0.0, 0.0]])) == ["ACCEPT", "REJECT", "ACCEPT"]


def test_distil_learns_the_teacher_and_reports_its_agreement(db, tmp_path, taught):
    rows, quality = taught
    out = tmp_path / "student"
    card = distil(db, "p", "teacher", "likert5", out, held_out=0.25, seed=3)
    # 60 prompts x 0.25 = 15 held-out prompts, 4 candidates each
    assert card["data"]["held_out_prompts"] == 15 and card["data"]["held_out_candidates"] == 60
    assert card["data"]["train_candidates"] == 180
    student = Student.load(out)
    assert student.sha256 == card["sha256"]
    # the held-out agreement recomputed here from the known answers (q + 1)
    test = held_out_prompts([r["prompt_id"] for r in rows], 0.25, 3)
    held = [r for r in rows if r["prompt_id"] in test]
    predicted = student.answers([r["prompt"] for r in held], [r["response"] for r in held])
    truth = [str(quality[(r["prompt_id"], r["candidate_id"])] + 1) for r in held]
    exact = float(np.mean(np.array(predicted) == np.array(truth)))
    assert card["agreement_held_out"]["n"] == 60
    assert card["agreement_held_out"]["exact"] == pytest.approx(exact)
    assert exact >= 0.9           # the quality is in the words: a linear student finds it
    assert json.loads((out / "card.json").read_text())["teacher"]["judge"] == "teacher"
    # a background run of its own, closed finished, with the card as its last progress
    assert query_rows(db, "SELECT kind, status, run_key FROM runs") == [("distil", "finished", "distil:p:teacher:likert5")]
    assert "held-out agreement" in (out / "card.md").read_text()
    with np.load(out / "weights.npz", allow_pickle=False) as w:      # numpy arrays only: no code on load
        assert w["coef"].shape == (2 ** 18,)


def test_a_categorical_format_trains_classes(db, tmp_path, taught):
    rows, quality = taught
    card = distil(db, "p", "teacher", "binary", tmp_path / "b", held_out=0.25, seed=3)
    assert card["kind"] == "classes"
    student = Student.load(tmp_path / "b")
    got = student.answers([r["prompt"] for r in rows], [r["response"] for r in rows])
    want = ["ACCEPT" if quality[(r["prompt_id"], r["candidate_id"])] >= 2 else "REJECT" for r in rows]
    assert np.mean(np.array(got) == np.array(want)) >= 0.9


def test_bad_input_is_named(db, tmp_path, taught):
    with pytest.raises(UserError, match="pointwise"):
        distil(db, "p", "teacher", "tournament", tmp_path / "x")
    with pytest.raises(UserError, match="held-out"):
        distil(db, "p", "teacher", "likert5", tmp_path / "x", held_out=1.5)
    with pytest.raises(UserError, match="model.json is missing"):
        Student.load(tmp_path)


def test_the_student_scored_as_a_judge_is_a_cell_of_its_own(db, tmp_path, taught):
    rows, quality = taught
    out = tmp_path / "student"
    distil(db, "p", "teacher", "likert5", out, held_out=0.25, seed=3)
    student = Student.load(out)
    score(ScoreRequest(pool="p", judge=f"distilled:{out}", formats=["likert5"], db=db, progress=False))
    name = f"distilled-{student.sha256[:12]}"
    stored = query_rows(db, "SELECT j.provider, j.model, v.raw, v.value, c.candidate_id, p.prompt_id FROM verdicts v "
                            "JOIN judges j USING (judge_id) JOIN prompts p ON p.pool_id = v.pool_id AND "
                            "p.prompt_idx = v.prompt_idx JOIN candidates c ON c.pool_id = v.pool_id AND "
                            "c.cand_idx = v.a_idx WHERE j.name = ?", [name])
    assert len(stored) == len(rows)
    assert {s[0] for s in stored} == {"distilled"} and {s[1] for s in stored} == {f"distilled-{student.sha256[:16]}"}
    by_key = {(r["prompt_id"], r["candidate_id"]): r for r in rows}
    for provider, model, raw, value, cid, pid in stored[:40]:
        r = by_key[(pid, cid)]
        assert raw == student.answers([r["prompt"]], [r["response"]])[0] and value == float(raw)
    with pytest.raises(UserError, match="alone"):
        score(ScoreRequest(pool="p", judge=f"distilled:{out}", formats=["likert5", "binary"], db=db, progress=False))


def test_apply_streams_resumes_and_writes_verdict_shards(db, tmp_path, taught):
    rows, quality = taught
    out = tmp_path / "student"
    distil(db, "p", "teacher", "likert5", out, held_out=0.25, seed=3)
    student = Student.load(out)
    shards = tmp_path / "shards"
    for i in range(3):
        (shards / f"part={i}").mkdir(parents=True)
        pq.write_table(pa.Table.from_pylist(rows[i * 80:(i + 1) * 80]), shards / f"part={i}" / "data.parquet")
    result = apply(out, f"{shards}/**/*.parquet", tmp_path / "verdicts", batch_rows=16)
    assert (result["shards"], result["scored"], result["rows"]) == (3, 3, 240)
    table = pq.read_table(tmp_path / "verdicts" / "part=1" / "data.parquet")
    assert table.column_names == ["judge", "format", "prompt_id", "candidate_id", "raw"]
    want = student.answers([r["prompt"] for r in rows[80:160]], [r["response"] for r in rows[80:160]])
    assert table["raw"].to_pylist() == want and table["candidate_id"].to_pylist() == [r["candidate_id"] for r in rows[80:160]]
    # killed after one shard: the shards whose output exists are not scored again
    (tmp_path / "verdicts" / "part=2" / "data.parquet").unlink()
    again = apply(out, f"{shards}/**/*.parquet", tmp_path / "verdicts")
    assert (again["scored"], again["skipped"], again["rows"]) == (1, 2, 80)
    assert not list((tmp_path / "verdicts").rglob(".*.tmp"))
    from ingest.scoring import attach_verdicts
    attach_verdicts(db, [f"{tmp_path / 'verdicts'}/**/*.parquet"], "p")
    n = query_rows(db, "SELECT count(*) FROM judges WHERE name = ?", [result["judge"]])
    assert n == [(1,)]
    with pytest.raises(UserError, match="no Parquet file"):
        apply(out, f"{tmp_path}/none/*.parquet", tmp_path / "v2")


def test_a_format_of_imported_verdicts_alone_is_asked_of_the_student(db, tmp_path):
    rows, quality = rows_of(30, seed=1)
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", rows), "p")
    spec = tmp_path / "rating10.toml"
    spec.write_text('name = "rating10"\nkind = "pointwise"\nrange = [1, 10]\n')     # no template
    verdicts = [{"judge": "t", "format": "rating10", "prompt_id": r["prompt_id"], "candidate_id": r["candidate_id"],
                 "raw": str(2 * quality[(r["prompt_id"], r["candidate_id"])] + 1)} for r in rows]
    import_verdicts(db, write_jsonl(tmp_path / "v.jsonl", verdicts), "p", format_specs=[spec])
    out = tmp_path / "s"
    distil(db, "p", "t", "rating10", out)
    with pytest.raises(UserError, match="no prompt template"):     # another judge still needs one
        score(ScoreRequest(pool="p", judge="fake:x", formats=["rating10"], db=db, progress=False))
    score(ScoreRequest(pool="p", judge=f"distilled:{out}", formats=["rating10"], db=db, progress=False))
    student = Student.load(out)
    raws = query_rows(db, "SELECT v.raw FROM verdicts v JOIN judges j USING (judge_id) WHERE j.name = ? "
                          "ORDER BY v.a_idx", [f"distilled-{student.sha256[:12]}"])
    assert [r[0] for r in raws] == student.answers([r["prompt"] for r in rows], [r["response"] for r in rows])


def test_the_ray_engine_writes_what_the_in_process_engine_writes(db, tmp_path, taught):
    pytest.importorskip("ray")
    rows, _ = taught
    out = tmp_path / "student"
    distil(db, "p", "teacher", "likert5", out, held_out=0.25, seed=3)
    shards = tmp_path / "shards"
    shards.mkdir()
    for i in range(2):
        pq.write_table(pa.Table.from_pylist(rows[i * 120:(i + 1) * 120]), shards / f"part-{i}.parquet")
    local = apply(out, f"{shards}/*.parquet", tmp_path / "local", batch_rows=50)
    on_ray = apply(out, f"{shards}/*.parquet", tmp_path / "ray", engine="ray", batch_rows=50)
    assert local["rows"] == on_ray["rows"] == 240
    for i in range(2):
        a = pq.read_table(tmp_path / "local" / f"part-{i}.parquet")
        b = pq.read_table(tmp_path / "ray" / f"part-{i}.parquet")
        assert a.equals(b)


def test_model_features_train_a_student_on_the_bundled_models_hidden_states(db, tmp_path, shared_bundled_judge):
    """The `model` features on a small pool (48 candidates), the bundled model loaded once a session."""
    rows, quality = rows_of(12, seed=2)
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", rows), "p")
    verdicts = [{"judge": "t", "format": "likert5", "prompt_id": r["prompt_id"], "candidate_id": r["candidate_id"],
                 "raw": str(quality[(r["prompt_id"], r["candidate_id"])] + 1)} for r in rows]
    import_verdicts(db, write_jsonl(tmp_path / "v.jsonl", verdicts), "p")
    card = distil(db, "p", "t", "likert5", tmp_path / "m", features="model", held_out=0.25)
    student = Student.load(tmp_path / "m")
    with np.load(tmp_path / "m" / "weights.npz", allow_pickle=False) as w:
        assert w["coef"].shape == (576,)          # SmolLM2-135M's hidden size
    test = held_out_prompts([r["prompt_id"] for r in rows], 0.25, 0)
    held = [r for r in rows if r["prompt_id"] in test]
    got = student.answers([r["prompt"] for r in held], [r["response"] for r in held])
    want = [str(quality[(r["prompt_id"], r["candidate_id"])] + 1) for r in held]
    assert card["agreement_held_out"]["n"] == len(held) == 12      # 12 prompts x 0.25 = 3 prompts, 4 candidates each
    assert card["agreement_held_out"]["exact"] == pytest.approx(float(np.mean(np.array(got) == np.array(want))))
