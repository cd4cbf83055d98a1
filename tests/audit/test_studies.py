"""audit/_studies.py: downstream evaluation studies as stored: the prompts a study answers (each with
its reference-top answer), the answers and judged outcomes so far, and the studies of a database,
on a hand-made pool and study."""

import json

import pytest

from audit import AuditError, eval_prompts, judged, stored_generations, studies, study_generations, study_outcomes
from ingest.store import ensure_study, import_pool, insert_evaluations, insert_generations
from ingest.scoring import import_verdicts
from tests.conftest import query_rows


pytestmark = pytest.mark.usefixtures("database_named_by_argument")   # tests/conftest.py


def _pool(db, write_jsonl):
    # q0: a (reference 1), b (3): reference-top b. q1: c, d (held out), no reference: none.
    # q2: e (2), f (2): a tie, the first listed, e. cand_idx a 0, b 1, c 2, d 3, e 4, f 5
    rows = [("q0", "a", 1, None), ("q0", "b", 3, None), ("q1", "c", None, None), ("q1", "d", None, "heldout"),
            ("q2", "e", 2, None), ("q2", "f", 2, None)]
    import_pool(db, write_jsonl("p.jsonl", [{"prompt_id": p, "prompt": f"{p}?", "candidate_id": c, "response": f"{c}!",
                                             "reference": r, **({"split": s} if s else {})} for p, c, r, s in rows]), "p")


def test_eval_prompts_with_the_reference_top_answer(db, write_jsonl):
    _pool(db, write_jsonl)
    got = eval_prompts(db, "p").select("prompt_idx", "prompt_id", "marked_heldout", "ref_idx", "ref_answer").rows()
    assert got == [(0, "q0", False, 1, "b!"), (1, "q1", True, None, None), (2, "q2", False, 4, "e!")]


def _gen(condition, prompt_idx, ref_idx, answer):
    return {"condition": condition, "seed": 0, "train_run": None, "base_model": "m", "prompt_idx": prompt_idx,
            "answer": answer, "answer_len": len(answer), "ref_idx": ref_idx, "ref_len": 2, "markdown": False,
            "tokens_out": 3, "truncated": False}


def _eval(condition, prompt_idx, judge_id, outcome):
    status = "failed" if outcome is None else "ok"
    return {"condition": condition, "seed": 0, "prompt_idx": prompt_idx, "judge_id": judge_id,
            "raw_ab": "A+", "value_ab": None if outcome is None else 1.0, "status_ab": status, "error_ab": None,
            "raw_ba": "B+", "value_ba": None if outcome is None else -1.0, "status_ba": status, "error_ba": None,
            "outcome": outcome}


def test_a_study_its_answers_and_outcomes(db, write_jsonl):
    _pool(db, write_jsonl)
    import_verdicts(db, write_jsonl("v.jsonl", [{"judge": "ev", "format": "likert5", "prompt_id": "q0",
                                                  "candidate_id": "a", "raw": "3"}]), "p")
    (judge_id,) = query_rows(db, "SELECT judge_id FROM judges WHERE name = 'ev'")[0]
    sid = ensure_study(db, "st", "p", {"rule": "marked"})
    # answers: base on q0 and q2, sft on q0; outcomes: base q0 1, base q2 a failed call (no outcome), sft q0 1/2
    insert_generations(db, sid, [_gen("base", 0, 1, "xyz"), _gen("base", 2, 4, "w"), _gen("sft", 0, 1, "long one")])
    insert_evaluations(db, sid, [_eval("base", 0, judge_id, 1.0), _eval("base", 2, judge_id, None),
                                 _eval("sft", 0, judge_id, 0.5)])
    # two conditions, two prompts, three answers, two outcomes
    assert studies(db).select("study", "pool", "n_conditions", "n_prompts", "n_generations", "n_outcomes").rows() \
        == [("st", "p", 2, 2, 3, 2)]
    assert sorted(stored_generations(db, sid).rows()) == [("base", 0, 0, "xyz", 1), ("base", 0, 2, "w", 4),
                                                         ("sft", 0, 0, "long one", 1)]
    got = judged(db, sid, judge_id).sort("condition", "prompt_idx")
    assert got.select("condition", "prompt_idx", "status_ab", "value_ba").rows() == [
        ("base", 0, "ok", -1.0), ("base", 2, "failed", None), ("sft", 0, "ok", -1.0)]
    # the outcomes that parsed, with their covariates, by judge, condition, seed, prompt
    out = study_outcomes(db, "st")
    assert out.select("condition", "seed", "prompt_id", "judge", "outcome", "answer_len", "ref_len").rows() == [
        ("base", 0, "q0", "ev", 1.0, 3, 2), ("sft", 0, "q0", "ev", 0.5, 8, 2)]
    gens = study_generations(db, "st")
    assert gens.select("prompt_id", "condition", "answer", "reference_answer").rows() == [
        ("q0", "base", "xyz", "b!"), ("q0", "sft", "long one", "b!"), ("q2", "base", "w", "e!")]
    assert [json.loads(x) for x in gens["outcomes"]] == [{"ev": 1.0}, {"ev": 0.5}, {"ev": None}]


def test_an_unknown_study_is_named(db, write_jsonl):
    _pool(db, write_jsonl)
    for read in (study_outcomes, study_generations):
        with pytest.raises(AuditError, match="--study nope: no such evaluation study"):
            read(db, "nope")
    assert studies(db).height == 0
