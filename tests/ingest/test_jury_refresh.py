"""A jury follows its members through every writer that finishes their cell runs: each unit of work
refreshes the juries of the judges it wrote (store.writing's refresh_juries_of) in its own
transaction. The verdict import (JSONL) and the attach are followed in tests/audit/test_jury.py and
tests/ingest/test_attached_verdict_source.py; here the in-place Parquet import, a scoring run, a
batch export and a batch import."""

from __future__ import annotations

import json

import polars as pl

from ingest.scoring import ScoreRequest, export_batch, import_batch, import_verdicts, score
from ingest.store import import_pool, save_jury
from tests.conftest import query_rows

NOWHERE = "http://127.0.0.1:9/v1"      # nothing listens there: a batch export makes no call
POOL = [{"prompt_id": p, "prompt": f"Question {p}?", "candidate_id": c, "response": f"answer {c} to {p}",
         "reference": float(i)} for p in ("q1", "q2") for i, c in enumerate(("x", "y", "z"))]
CALLS = [(p["prompt_id"], p["candidate_id"]) for p in POOL]


def _jury(db, fmt: str = "likert5") -> dict:
    """(prompt, candidate) -> (value, status) of the jury 'panel' in the format."""
    rows = query_rows(db, "SELECT p.prompt_id, c.candidate_id, v.value, v.status FROM verdicts v "
                          "JOIN judges j USING (judge_id) JOIN formats f USING (format_id) "
                          "JOIN prompts p ON p.pool_id = v.pool_id AND p.prompt_idx = v.prompt_idx "
                          "JOIN candidates c ON c.pool_id = v.pool_id AND c.cand_idx = v.a_idx "
                          f"WHERE j.name = 'panel' AND f.name = '{fmt}'")
    return {(r[0], r[1]): r[2:] for r in rows}


def _jury_cell_run(db) -> int:
    """The jury's latest cell run: each derivation writes its rows under a new one."""
    return query_rows(db, "SELECT max(cell_run_id) FROM cell_runs WHERE source = 'jury'")[0][0]


def _import_j1(db, write_jsonl, fmt: str, calls=CALLS) -> None:
    rows = [{"judge": "j1", "format": fmt, "prompt_id": p, "candidate_id": c, "raw": "4" if fmt == "likert5" else "ACCEPT"}
            for p, c in calls]
    import_verdicts(db, write_jsonl(f"j1-{fmt}.jsonl", rows), "p")


def test_the_in_place_import_and_a_scoring_run_refresh_the_jury(db, write_jsonl, tmp_path, monkeypatch):
    import_pool(db, write_jsonl("pool.jsonl", POOL), "p")
    score(ScoreRequest(pool="p", judge="fake:sim", formats=["likert5"], db=db, progress=False))
    _import_j1(db, write_jsonl, "likert5", CALLS[1:])            # j1 has no call on (q1, x)
    save_jury(db, "p", "panel", ["j1", "sim"], "mean")
    assert _jury(db)[("q1", "x")][1] == "no_quorum"            # 1 of 2 members parsed it
    # j1's missing call, imported where it lies (the batch path taken away: it would fail at once)
    from ingest.scoring import _imported
    late = tmp_path / "late.parquet"
    pl.DataFrame([{"judge": "j1", "format": "likert5", "prompt_id": "q1", "candidate_id": "x", "raw": "4"}]) \
        .write_parquet(late)
    with monkeypatch.context() as m:
        m.setattr(_imported, "_Import", None)
        assert import_verdicts(db, late, "p", capped=False)["imported"] == 1
    assert _jury(db)[("q1", "x")][1] == "ok"
    # binary: j1's calls alone are no jury cell (more than half of the members must have calls) ...
    _import_j1(db, write_jsonl, "binary")
    assert _jury(db, "binary") == {}
    # ... until sim's scoring run on it finishes
    score(ScoreRequest(pool="p", judge="fake:sim", formats=["binary"], db=db, progress=False))
    assert {status for _, status in _jury(db, "binary").values()} == {"ok"} and len(_jury(db, "binary")) == 6


def _answer(line: dict, text: str) -> dict:
    body = {"id": "chatcmpl-1", "object": "chat.completion", "model": line["body"]["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 30, "completion_tokens": 1}}
    return {"id": "x", "custom_id": line["custom_id"], "error": None,
            "response": {"status_code": 200, "request_id": "req_1", "body": body}}


def _answer_file(path, folder, text: str, first: int | None = None):
    lines = [json.loads(t) for f in sorted(folder.glob("requests-*.jsonl")) for t in f.read_text().splitlines()]
    path.write_text("".join(json.dumps(_answer(x, text)) + "\n" for x in lines[:first]))
    return path


def test_a_batch_export_and_import_refresh_the_jury(db, write_jsonl, tmp_path):
    import_pool(db, write_jsonl("pool.jsonl", POOL), "p")
    _import_j1(db, write_jsonl, "likert5")

    def request(seed):
        return ScoreRequest(pool="p", judge=f"openai:judge-m@{NOWHERE}", judge_name="m", formats=["likert5"],
                            db=db, progress=False, seed=seed)
    export_batch(request(1), tmp_path / "one")
    import_batch([_answer_file(tmp_path / "early.jsonl", tmp_path / "one", "2", first=2)], db=db)
    save_jury(db, "p", "panel", ["j1", "m"], "mean")
    assert sorted(status for _, status in _jury(db).values()) == ["no_quorum"] * 4 + ["ok"] * 2
    refreshed = _jury_cell_run(db)
    # the export writes no verdict, but its cell run is its judge's latest: the jury is refreshed
    export_batch(request(7), tmp_path / "two")
    exported = _jury_cell_run(db)
    assert exported > refreshed
    import_batch([_answer_file(tmp_path / "late.jsonl", tmp_path / "two", "2")], db=db)
    assert _jury_cell_run(db) > exported
    assert set(_jury(db).values()) == {(3.0, "ok")}            # mean of j1's 4 and m's 2 on every call
