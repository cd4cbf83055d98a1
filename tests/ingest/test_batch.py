"""Batch files (DESIGN.md 'Past one machine'; issue 21): `score --batch-out DIR` writes OpenAI
Batch request files and makes no call; `import-batch` stores result files of OpenAI's and vLLM's
shapes through the online path. The round trip runs the real llama.cpp server (tests/batch_runner.py
posts each line) and must give the same verdicts and the same audit as the online run."""

import asyncio
import hashlib
import json

import httpx
import pytest

from audit import audit_cells
from ingest import UserError
from ingest.scoring import ScoreRequest, export_batch, import_batch, score
from ingest.scoring.formats import BUILTIN
from ingest.scoring.judges import CallHints
from ingest.scoring.judges.openai_compat import OpenAIJudge
from ingest.store import import_pool
from tests.batch_runner import run_batch
from tests.conftest import db_snapshot, query_rows

NOWHERE = "http://127.0.0.1:9/v1"      # nothing listens there: an export that called it would fail
POOL = [
    {"prompt_id": "capital", "prompt": "What is the capital of France?", "candidate_id": c, "response": r,
     "reference": ref} for c, r, ref in [("good", "The capital of France is Paris.", 2), ("bad", "Lyon.", 0),
                                         ("meh", "Paris, I think.", 1)]
] + [
    {"prompt_id": "sum", "prompt": "What is 2 + 2?", "candidate_id": c, "response": r, "reference": ref}
    for c, r, ref in [("good", "2 + 2 = 4.", 2), ("bad", "5", 0), ("meh", "About 4.", 1)]
]


def _req(db, judge=f"openai:judge-m@{NOWHERE}", formats=("likert5", "tournament"), **kw):
    return ScoreRequest(pool="p", judge=judge, formats=list(formats), db=db, progress=False,
                        flush_interval_s=0.05, **kw)


def _lines(folder):
    return [json.loads(t) for f in sorted(folder.glob("requests-*.jsonl")) for t in f.read_text().splitlines()]


def _verdicts(db):
    return query_rows(db, "SELECT f.name, prompt_idx, a_idx, b_idx, sample, raw, answer, value, status, error "
                          "FROM verdicts JOIN formats f USING (format_id) ORDER BY ALL")


def _answer(line, text):
    """A chat-completions body answering `text`, as a server would."""
    return {"id": "chatcmpl-1", "object": "chat.completion", "model": line["body"]["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 30, "completion_tokens": 1}}


def _ok(line, text, shape="openai"):
    rid = "vllm-batch-1" if shape == "vllm" else "req_1"
    return {"id": "x", "custom_id": line["custom_id"], "error": None,
            "response": {"status_code": 200, "request_id": rid, "body": _answer(line, text)}}


def test_export_writes_batch_input_and_makes_no_call(db, write_jsonl, tmp_path):
    import_pool(db, write_jsonl("pool.jsonl", POOL), "p")
    out = export_batch(_req(db, samples=2, temperature=0.5), tmp_path / "b")
    # likert5: 6 candidates; tournament: 3 pairs x 2 prompts = 6; x 2 samples = 24 calls
    assert (out["planned"], out["already_done"], out["exported"]) == (24, 0, 24)
    lines = _lines(tmp_path / "b")
    assert len(lines) == 24 and len({x["custom_id"] for x in lines}) == 24
    for x in lines:
        assert set(x) == {"custom_id", "method", "url", "body"} and x["method"] == "POST"
        assert x["url"] == "/v1/chat/completions" and len(x["custom_id"]) <= 64
        assert x["body"]["model"] == "judge-m" and x["body"]["temperature"] == 0.5
    assert sorted(x["body"]["seed"] for x in lines) == [0] * 12 + [1] * 12     # seed 0 + sample
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert manifest["pool"] == "p" and manifest["judge"] == "judge-m" and manifest["calls"] == 24
    assert manifest["identity"]["endpoint"] == NOWHERE and manifest["formats"] == ["likert5", "tournament"]
    data = (tmp_path / "b" / "requests-00000.jsonl").read_bytes()
    assert manifest["files"] == [{"name": "requests-00000.jsonl", "lines": 24, "bytes": len(data),
                                  "sha256": hashlib.sha256(data).hexdigest()}]
    # the mapping is in the database, and a cell run records the export as its source
    assert query_rows(db, "SELECT count(*) FROM batch_calls")[0][0] == 24
    assert query_rows(db, "SELECT source, status FROM cell_runs ORDER BY ALL") == [("batch-export", "finished")] * 2
    # the same calls get the same ids in a second export (nothing was answered: all of them again)
    again = export_batch(_req(db, samples=2, temperature=0.5), tmp_path / "c")
    assert again["exported"] == 24 and {x["custom_id"] for x in _lines(tmp_path / "c")} == \
        {x["custom_id"] for x in lines}


def test_files_split_at_the_line_limit(db, write_jsonl, tmp_path):
    import_pool(db, write_jsonl("pool.jsonl", POOL), "p")
    out = export_batch(_req(db), tmp_path / "b", max_lines=5)
    # 12 calls in files of at most 5 lines: 5 + 5 + 2
    assert [f["lines"] for f in out["files"]] == [5, 5, 2]
    assert sorted(p.name for p in (tmp_path / "b").glob("requests-*")) == \
        ["requests-00000.jsonl", "requests-00001.jsonl", "requests-00002.jsonl"]
    big = export_batch(_req(db), tmp_path / "d", max_bytes=3000)
    assert all(f["bytes"] <= 3000 for f in big["files"]) and sum(f["lines"] for f in big["files"]) == 12


def test_batch_body_is_the_online_body(db, write_jsonl, tmp_path):
    """The same call through OpenAIJudge.complete posts exactly the batch line's body."""
    import_pool(db, write_jsonl("pool.jsonl", POOL), "p")
    req = _req(db, formats=["likert5"], decoding="constrained", constraint="grammar", seed=3)
    export_batch(req, tmp_path / "b")
    line = _lines(tmp_path / "b")[0]
    assert "grammar" in line["body"] and line["body"]["seed"] == 3 and line["body"]["logprobs"] is True
    posted = []

    def handler(request):
        posted.append(json.loads(request.content))
        return httpx.Response(200, json=_answer(line, "4"))

    from ingest.scoring import decoding_settings
    from ingest.scoring.judges import parse_judge
    spec = parse_judge(req.judge, {"likert5": BUILTIN["likert5"]})
    settings = decoding_settings(req, spec)

    async def call():
        judge = OpenAIJudge("judge-m", NOWHERE, formats={"likert5": BUILTIN["likert5"]},
                            client=httpx.AsyncClient(transport=httpx.MockTransport(handler)))
        return await judge.complete(line["body"]["messages"], settings, CallHints(format_name="likert5"))
    assert asyncio.run(call()).text == "4"
    assert posted == [line["body"]]


def test_export_refusals(db, write_jsonl, tmp_path):
    import_pool(db, write_jsonl("pool.jsonl", POOL), "p")
    before = db_snapshot(db)
    with pytest.raises(UserError, match="--batch-out: batch files are OpenAI chat-completions requests"):
        export_batch(_req(db, judge="fake:sim"), tmp_path / "b")
    with pytest.raises(UserError, match="--samples 2 at temperature 0"):
        export_batch(_req(db, samples=2), tmp_path / "b")
    assert db_snapshot(db) == before and not (tmp_path / "b").exists()


def _other_pool_lines(tmp_path, write_jsonl):
    """Request lines exported from a pool of another database."""
    other = tmp_path / "other.duckdb"
    import_pool(other, write_jsonl("other.jsonl", POOL[:3]), "p")
    export_batch(_req(other, formats=["likert5"]), tmp_path / "other")
    return _lines(tmp_path / "other")


@pytest.mark.parametrize("chunk", [20_000, 2], ids=["one-chunk", "chunks-of-2"])
def test_import_both_shapes_errors_truncation_duplicates_and_another_pool(db, write_jsonl, tmp_path, monkeypatch,
                                                                           chunk):
    # read in chunks of 2 lines, a duplicate, an unknown id and a failed row fall in other chunks
    # than their first line, call or stored answer: the counts and rows are the same
    monkeypatch.setattr("ingest.scoring._batch_import.CHUNK", chunk)
    import_pool(db, write_jsonl("pool.jsonl", POOL), "p")
    export_batch(_req(db), tmp_path / "b")
    lines = _lines(tmp_path / "b")              # 6 likert5 calls, then 6 tournament calls
    lik, tour = lines[:6], lines[6:]
    vllm = [_ok(lik[0], "4", "vllm"), _ok(lik[1], "2", "vllm"), _ok(lik[2], "I cannot say.", "vllm"),
            # vLLM failures: status 400, null body, error a string / an object
            {"id": "v", "custom_id": lik[3]["custom_id"], "response": {"status_code": 400, "request_id": "r",
                                                                       "body": None}, "error": "context too long"},
            {"id": "v", "custom_id": lik[4]["custom_id"], "response": {"status_code": 400, "request_id": "r",
                                                                       "body": None},
             "error": {"code": 400, "message": "bad grammar"}},
            _ok(lik[0], "5", "vllm")]                                  # a duplicate: the first line counts
    openai = [_ok(tour[0], "A+"), _ok(tour[1], "TIE"),
              {"id": "o", "custom_id": tour[2]["custom_id"], "response": None,
               "error": {"code": "server_error", "message": "overloaded"}},
              {"id": "o", "custom_id": tour[3]["custom_id"], "error": None,
               "response": {"status_code": 500, "request_id": "q", "body": {"error": {"message": "boom"}}}}]
    strangers = [_ok(x, "3") for x in _other_pool_lines(tmp_path, write_jsonl)[:2]]
    (tmp_path / "vllm.jsonl").write_text("".join(json.dumps(x) + "\n" for x in vllm)
                                         + json.dumps(_ok(lik[5], "3"))[:40] + "\n")     # a line cut short
    (tmp_path / "openai.jsonl").write_text("".join(json.dumps(x) + "\n" for x in openai + strangers))
    counts = import_batch([tmp_path / "vllm.jsonl", tmp_path / "openai.jsonl"], db=db)
    # 13 lines: 1 cut short (malformed), 1 duplicate; of the 11 ids, 2 from another database (unknown),
    # 9 matched: 4 failed (2 vLLM, 2 OpenAI), 5 answers of which 4 parsed ("I cannot say." does not)
    assert {k: counts[k] for k in ("lines", "matched", "stored", "parsed", "failed", "unknown", "duplicate",
                                   "malformed")} == \
        {"lines": 13, "matched": 9, "stored": 9, "parsed": 4, "failed": 4, "unknown": 2, "duplicate": 1,
         "malformed": 1}
    assert set(counts["unknown_ids"]) == {x["custom_id"] for x in strangers}
    assert counts["malformed_lines"][0].startswith(f"{tmp_path / 'vllm.jsonl'}, line 7: not JSON")
    rows = {(r[0], r[1], r[2], r[3]): r for r in _verdicts(db)}
    assert len(rows) == 9
    errors = sorted(r[9] for r in rows.values() if r[8] == "failed")
    assert errors == ["batch error 400: bad grammar", "batch error server_error: overloaded",
                      "batch error: context too long", "batch: HTTP 500: boom"]
    assert sorted((r[6], r[7]) for r in rows.values() if r[8] == "ok") == \
        [("2", 2.0), ("4", 4.0), ("A+", 1.0), ("TIE", 0.0)]
    assert query_rows(db, "SELECT source, count(*) FROM cell_runs GROUP BY ALL ORDER BY ALL") == \
        [("batch-export", 2), ("batch-import", 2)]
    # importing the same files again changes nothing
    before, verdicts = db_snapshot(db), query_rows(db, "SELECT * FROM verdicts ORDER BY ALL")
    twice = import_batch([tmp_path / "vllm.jsonl", tmp_path / "openai.jsonl"], db=db)
    assert twice["stored"] == 0 and twice["matched"] == 9 and twice["parsed"] == 4
    assert db_snapshot(db) == before and query_rows(db, "SELECT * FROM verdicts ORDER BY ALL") == verdicts
    # a second export writes only the calls still missing or failed, under the same ids:
    # 12 - 5 answered (4 parsed + 1 unparsed) = 7
    again = export_batch(_req(db), tmp_path / "again")
    assert (again["already_done"], again["exported"]) == (5, 7)
    answered = {lik[i]["custom_id"] for i in (0, 1, 2)} | {tour[i]["custom_id"] for i in (0, 1)}
    assert {x["custom_id"] for x in _lines(tmp_path / "again")} == {x["custom_id"] for x in lines} - answered
    # a later answer replaces a failed row (never a parsed one)
    (tmp_path / "late.jsonl").write_text(json.dumps(_ok(lik[3], "5")) + "\n" + json.dumps(_ok(lik[0], "1")) + "\n")
    late = import_batch([tmp_path / "late.jsonl"], db=db)
    assert (late["matched"], late["stored"], late["parsed"]) == (2, 1, 2)
    assert query_rows(db, "SELECT count(*) FROM verdicts WHERE status = 'failed'")[0][0] == 3
    assert query_rows(db, "SELECT value FROM verdicts WHERE raw = '4'") == [(4.0,)]


def test_import_refuses_what_it_cannot_read(db, write_jsonl, tmp_path):
    import_pool(db, write_jsonl("pool.jsonl", POOL), "p")
    with pytest.raises(UserError, match="no such file or folder"):
        import_batch([tmp_path / "missing.jsonl"], db=db)


def test_a_failed_export_leaves_the_earlier_one_whole(db, write_jsonl, tmp_path, monkeypatch):
    import_pool(db, write_jsonl("pool.jsonl", POOL), "p")
    export_batch(_req(db, formats=["likert5"]), tmp_path / "b")
    before = {f.name: f.read_bytes() for f in (tmp_path / "b").iterdir()}
    assert sorted(before) == ["manifest.json", "requests-00000.jsonl"]

    def broken(*args, **kw):
        raise OSError("disk full")
    monkeypatch.setattr("ingest.store._units.Writing.record_batch_export", broken)
    with pytest.raises(OSError, match="disk full"):
        export_batch(_req(db, formats=["likert5", "tournament"]), tmp_path / "b")
    # the earlier export's files are as they were, and nothing of the failed one is left
    assert {f.name: f.read_bytes() for f in (tmp_path / "b").iterdir()} == before
    assert query_rows(db, "SELECT count(*) FROM batch_calls")[0][0] == 6


def test_batch_answers_name_no_endpoint_and_each_export_gets_its_import_run(db, write_jsonl, tmp_path):
    from audit import verdict_rows
    import_pool(db, write_jsonl("pool.jsonl", POOL), "p")
    first = export_batch(_req(db, formats=["likert5"], seed=1), tmp_path / "one")
    early = _lines(tmp_path / "one")[:2]
    import_batch([_write(tmp_path / "early.jsonl", [_ok(x, "4") for x in early])], db=db)
    second = export_batch(_req(db, formats=["likert5"], seed=7), tmp_path / "two")   # the 4 still missing
    assert (first["exported"], second["exported"]) == (6, 4)
    late = _lines(tmp_path / "two")
    # each export's answers land in an import run of their own that carries that export's settings
    import_batch([_write(tmp_path / "late.jsonl", [_ok(x, "2") for x in late])], db=db)
    runs = query_rows(db, "SELECT source, seed, count(*) FROM cell_runs r JOIN verdicts v USING (cell_run_id) "
                          "GROUP BY ALL ORDER BY ALL")
    assert runs == [("batch-import", 1, 2), ("batch-import", 7, 4)]
    # the judge's endpoint never answered these calls: the export names no endpoint for them
    exported = verdict_rows(db, "p")
    assert exported.height == 6 and exported["endpoint"].null_count() == 6


def _write(path, lines):
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


@pytest.fixture
def llama_server(bundled_llama_server):
    """The session's llama.cpp server on the bundled model (tests/conftest.py): loaded once for every module."""
    return bundled_llama_server


def test_round_trip_through_a_batch_runner_equals_the_online_run(tmp_path, write_jsonl, llama_server):
    pool = write_jsonl("pool.jsonl", POOL)
    online, batch = tmp_path / "online.duckdb", tmp_path / "batch.duckdb"
    for db in (online, batch):
        import_pool(db, pool, "p")
    judge = f"openai:smollm2-gguf@{llama_server}"
    formats = ["binary", "likert5", "tournament"]
    ran = score(_req(online, judge=judge, formats=formats, concurrency=1, timeout=120, max_retries=1))
    out = export_batch(_req(batch, judge=judge, formats=formats), tmp_path / "b")
    # 6 candidates x 2 pointwise formats + 3 pairs x 2 prompts = 18 calls
    assert ran["made"] == out["exported"] == 18
    files = sorted((tmp_path / "b").glob("requests-*.jsonl"))
    assert run_batch(files, llama_server, tmp_path / "results.jsonl", shape="vllm") == 18
    counts = import_batch([tmp_path / "results.jsonl"], db=batch)
    assert (counts["matched"], counts["stored"], counts["failed"], counts["unknown"]) == (18, 18, 0, 0)
    assert counts["parsed"] == query_rows(online, "SELECT count(*) FROM verdicts WHERE status = 'ok'")[0][0]
    assert _verdicts(batch) == _verdicts(online)
    assert query_rows(batch, "SELECT answer_probs FROM verdicts ORDER BY ALL") == \
        query_rows(online, "SELECT answer_probs FROM verdicts ORDER BY ALL")
    cells_online, cells_batch = audit_cells(online, "p"), audit_cells(batch, "p")
    assert cells_batch.equals(cells_online)
    # the same answers in OpenAI's shape, into a third database: the same verdicts again
    third = tmp_path / "third.duckdb"
    import_pool(third, pool, "p")
    export_batch(_req(third, judge=judge, formats=formats), tmp_path / "t")
    run_batch(sorted((tmp_path / "t").glob("requests-*.jsonl")), llama_server, tmp_path / "oa.jsonl", shape="openai")
    assert import_batch([tmp_path / "oa.jsonl"], db=third)["stored"] == 18
    assert _verdicts(third) == _verdicts(online)
    print("round trip counts:", {k: counts[k] for k in ("lines", "matched", "stored", "parsed", "failed",
                                                         "unknown", "duplicate", "malformed")})
