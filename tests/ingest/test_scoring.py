"""Scoring runs against a real local HTTP server: faults, retries, resume, secrets, schedules."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from audit import audit_cells, bias
from ingest import UserError
from ingest.store import import_pool
from ingest.scoring import plan_calls
from ingest.scoring.formats import BUILTIN
from ingest.scoring import score, ScoreRequest
from tests.conftest import query_rows
from tests.openai_server import OpenAIServer

EXE = str(Path(sys.executable).with_name("judgeaudit"))


def _pool_rows(responses, prompt_of=lambda i: f"q{i}", reference=lambda i: float(i % 3)):
    return [{"prompt_id": prompt_of(i), "prompt": f"Question {prompt_of(i)}", "candidate_id": f"c{i}",
             "response": text, "reference": reference(i)} for i, text in enumerate(responses)]



def _request(server, **kw):
    base = dict(pool="p", judge=f"openai:test-judge@{server.url}", formats=["likert5"], concurrency=4,
                timeout=1.0, max_retries=2, retry_base_s=0.01, retry_cap_s=0.05, flush_interval_s=0.05,
                progress=False)
    return ScoreRequest(**{**base, **kw})


FAULTS = ["fine", "fine", "fine", "[fault=500x2]", "[fault=429x1]", "[fault=badjsonx1]", "[fault=dropx1]",
          "[fault=hangx1]", "[fault=prose]", "[fault=500]"]


def test_fault_injection_exact_counts(db, write_jsonl):
    import_pool(db, write_jsonl("pool.jsonl", _pool_rows(FAULTS)), "p")
    with OpenAIServer(hang_s=3.0) as server:
        result = score(_request(server))
        # attempts: 3 fine x1, 500x2 -> 3, 429 -> 2, badjson -> 2, drop -> 2, hang -> 2, prose 1,
        # always-500 -> max_retries + 1 = 3
        assert server.requests == 3 + 3 + 2 + 2 + 2 + 2 + 1 + 3
    assert (result["made"], result["failed"], result["unparsed"]) == (10, 1, 1)
    got = dict(query_rows(db, "SELECT status, count(*) FROM verdicts GROUP BY status"))
    assert got == {"ok": 8, "no_label": 1, "failed": 1}
    failed = query_rows(db, "SELECT error, attempts, raw FROM verdicts WHERE status = 'failed'")
    assert failed == [("HTTP 500: {\"error\": {\"message\": \"internal error\"}}", 3, None)]
    attempts = dict(query_rows(db, "SELECT c.response, v.attempts FROM verdicts v JOIN candidates c "
                              "ON c.cand_idx = v.a_idx"))
    assert attempts["[fault=500x2]"] == 3 and attempts["[fault=hangx1]"] == 2 and attempts["fine"] == 1
    run = query_rows(db, "SELECT source, status, judge_model, template, decoding_settings, template_hash FROM cell_runs")[0]
    assert run[:4] == ("score", "finished", "test-judge", BUILTIN["likert5"].template)
    assert json.loads(run[4])["max_tokens"] == 16 and json.loads(run[4])["temperature"] == 0.0
    assert run[5] and len(run[5]) == 64

    # Re-running resumes: only the failed call is made again, and its failed row is replaced.
    with OpenAIServer(port=server.port) as server:     # the same endpoint, restarted
        again = score(_request(server))
        assert server.requests == 3 and again["already_done"] == 9    # always-500 fails 3 more times
    assert dict(query_rows(db, "SELECT status, count(*) FROM verdicts GROUP BY status")) == got


def test_api_key_is_sent_and_never_stored(db, write_jsonl, monkeypatch, tmp_path):
    secret = "sk-test-abcdef0123456789"
    monkeypatch.setenv("JUDGE_KEY", secret)
    import_pool(db, write_jsonl("pool.jsonl", _pool_rows(["fine", "[fault=500]"])), "p")
    with OpenAIServer() as server:
        score(_request(server, api_key_env="JUDGE_KEY"))
        assert server.auth_headers == {f"Bearer {secret}"}
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
    settings = query_rows(db, "SELECT settings FROM judges")[0][0]
    assert "JUDGE_KEY" in settings and secret not in settings
    monkeypatch.delenv("JUDGE_KEY")
    with pytest.raises(UserError, match="JUDGE_KEY is not set"):
        score(_request(server, api_key_env="JUDGE_KEY"))


def test_expected_scores_from_logprobs(db, write_jsonl):
    import_pool(db, write_jsonl("pool.jsonl", _pool_rows(["fine", "fine"])), "p")
    with OpenAIServer() as server:
        score(_request(server, formats=["likert5", "numeric100"]))
    # the server puts 0.7 on "4" and 0.3 on "3": expected 0.7*4 + 0.3*3 = 3.7
    assert query_rows(db, "SELECT DISTINCT expected FROM verdicts JOIN formats USING (format_id) "
                     "WHERE name = 'likert5'") == [(pytest.approx(3.7),)]
    # "85" with alternative "B+": only "85" names a label -> all mass on 85
    assert query_rows(db, "SELECT DISTINCT expected FROM verdicts JOIN formats USING (format_id) "
                     "WHERE name = 'numeric100'") == [(85.0,)]
    cells = audit_cells(db, "p")
    # the expected score is a second kind of cell of the same format, not a format of its own
    assert sorted(zip(cells["format"], cells["score"])) == [("likert5", "expected"), ("likert5", "label"),
                                                            ("numeric100", "expected"), ("numeric100", "label")]
    expected = cells.filter((pl.col("format") == "likert5") & (pl.col("score") == "expected"))
    assert expected["distinct"][0] == 1 and expected["decoding"][0] == "greedy"


def test_fake_judge_all_formats_and_schedules(db, write_jsonl):
    rows = _pool_rows([f"answer {i}" for i in range(12)], prompt_of=lambda i: f"q{i // 4}",
                      reference=lambda i: float(i % 4))
    import_pool(db, write_jsonl("pool.jsonl", rows), "p")
    formats = ["binary", "likert5", "numeric100", "anchored", "tournament"]
    first = score(ScoreRequest(pool="p", judge="fake:sim?noise=0.05&slot_bias=1&unparsed=0.1", formats=formats,
                               swap_sample="all", schedule="balanced", progress=False, flush_interval_s=0.05))
    # 12 pointwise x 3 + anchored 12 forward + 9 reverse (non-anchors) + tournament 3 prompts x 6 pairs x 2
    assert first["planned"] == 36 + 12 + 9 + 36
    assert first["made"] == first["planned"] and first["failed"] == 0
    again = score(ScoreRequest(pool="p", judge="fake:sim?noise=0.05&slot_bias=1&unparsed=0.1", formats=formats,
                               swap_sample="all", schedule="balanced", progress=False))
    assert again["made"] == 0 and again["already_done"] == first["planned"]
    b = {r["format"]: r for r in bias(db, "p", n_boot=200).to_dicts()}
    assert b["tournament"]["b"] > 0.25 and b["anchored"]["n_self"] == 3   # slot bias 1, 3 anchors
    assert audit_cells(db, "p").filter(pl.col("format") == "numeric100")["mult5_share"][0] == 1.0


def test_plan_schedules():
    cands = pl.DataFrame({"prompt_idx": [0] * 4 + [1] * 3, "cand_idx": list(range(7)),
                          "position": [0, 1, 2, 3, 0, 1, 2], "reference": [1.0, 2.0, 3.0, 4.0, None, 1.0, 2.0]})
    tour = BUILTIN["tournament"]
    listing, _ = plan_calls(cands, [tour], "listing")
    assert listing.height == 6 + 3 and not listing["swapped"].any()
    both, _ = plan_calls(cands, [tour], "both")
    assert both.height == 2 * 9 and both["swapped"].sum() == 9
    balanced, _ = plan_calls(cands, [tour], "balanced")
    in_a = balanced.group_by("a_idx").len().sort("a_idx")["len"].to_list()
    in_b = balanced.group_by("b_idx").len().sort("b_idx")["len"].to_list()
    # k = 3: each candidate once in A and once in B; k = 4: 3 games each, split 2/1 or 1/2
    assert in_a[4:] == [1, 1, 1] and in_b[4:] == [1, 1, 1]
    assert all(abs(a - b) == 1 for a, b in zip(in_a[:4], in_b[:4]))
    anchored, notes = plan_calls(cands, [BUILTIN["anchored"]], swap_sample=2, seed=3)
    # prompt 0 anchor = index floor(4/2) = 2 of refs (1,2,3,4) -> cand 2; prompt 1 has a missing reference
    assert anchored.filter((pl.col("prompt_idx") == 0) & ~pl.col("swapped"))["b_idx"].unique().to_list() == [2]
    assert anchored["swapped"].sum() == 2 and any("seeded anchor" in n for n in notes)
    assert any("2 self-comparison" in n for n in notes)


def test_sigkill_mid_run_then_resume(db, write_jsonl):
    import_pool(db, write_jsonl("pool.jsonl", _pool_rows([f"answer {i}" for i in range(120)])), "p")
    with OpenAIServer(latency_s=0.03) as server:
        cmd = [EXE, "score", "--pool", "p", "--judge", f"openai:test-judge@{server.url}",
               "--formats", "binary,likert5", "--concurrency", "4", "--json"]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.time() + 60
        while server.requests < 60 and time.time() < deadline:
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        made_before = server.requests
        assert 0 < made_before < 240
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        repeated = sum(n - 1 for n in server.attempts.values())
        # every answered call survived the kill (journal), only in-flight ones were asked again
        assert repeated <= 4
        assert result["already_done"] + result["made"] == 240
    assert query_rows(db, "SELECT count(*), count(DISTINCT (format_id, a_idx)) FROM verdicts") == [(240, 240)]
