"""Attached verdicts seen by the writers (issue 29 item 3): `score` into a pool treats the attached calls
of the same judge, format and decoding as answered and asks only the missing ones (against a real local
HTTP server, as tests/ingest/test_scoring.py does), and a jury reads its members' attached calls as it
reads stored ones: the same jury over the same verdicts attached or imported."""

from __future__ import annotations

import json

import duckdb
import polars as pl
import pytest

from app.cli import main
from audit import audit_cells
from ingest import UserError
from ingest.scoring import ScoreRequest, attach_verdicts, import_verdicts, score
from ingest.store import detach_verdicts, import_pool, save_jury
from tests.conftest import query_rows
from tests.fixtures import synthetic_pool, synthetic_verdicts, write_jsonl
from tests.openai_server import OpenAIServer


def _request(server, **kw):
    base = dict(pool="p", judge=f"openai:test-judge@{server.url}", formats=["likert5"], concurrency=4,
                timeout=2.0, max_retries=1, retry_base_s=0.01, retry_cap_s=0.05, flush_interval_s=0.05,
                progress=False)
    return ScoreRequest(**{**base, **kw})


def test_a_score_run_after_attaching_asks_only_the_calls_the_files_lack(db, tmp_path):
    rows = [{"prompt_id": f"q{i // 5}", "prompt": f"Question {i // 5}", "candidate_id": f"c{i}",
             "response": f"answer {i}"} for i in range(10)]
    import_pool(db, write_jsonl(tmp_path / "pool.jsonl", rows), "p")
    with OpenAIServer() as server:
        score(_request(server, formats=["binary"]))          # the judge, known by its identity
        assert server.requests == 10
        judge = query_rows(db, "SELECT name FROM judges")[0][0]
        # its pipeline's shard: likert5 on 6 of the 10 candidates, answers the server never gives ("2")
        shard = tmp_path / "out" / f"judge={judge}" / "format=likert5" / "part-0.parquet"
        shard.parent.mkdir(parents=True)
        pl.DataFrame({"prompt_id": [r["prompt_id"] for r in rows[:6]],
                      "candidate_id": [r["candidate_id"] for r in rows[:6]], "raw": ["2"] * 6}).write_parquet(shard)
        attach_verdicts(db, [str(tmp_path / "out" / "**" / "*.parquet")], "p", hive=True)
        server.requests = 0
        out = score(_request(server))
        assert server.requests == 4                            # c6..c9 only
        assert out["already_done"] == 6
        again = score(_request(server))                        # nothing left: no call at all
        assert server.requests == 4 and again["already_done"] == 10
        port = server.port
    stored = query_rows(db, "SELECT c.candidate_id, v.raw FROM verdicts v JOIN formats f USING (format_id) "
                            "JOIN candidates c ON c.pool_id = v.pool_id AND c.cand_idx = v.a_idx "
                            "WHERE f.name = 'likert5' ORDER BY 1")
    assert stored == [(f"c{i}", "4") for i in range(6, 10)]   # the server's answers, stored
    cell = audit_cells(db, "p").filter((pl.col("format") == "likert5") & (pl.col("score") == "label"))
    assert cell["n_verdicts"].to_list() == [10], cell.to_dicts()   # 6 attached + 4 stored, one cell
    # the cell's scores: 6 x "2" and 4 x "4" on the 1-5 scale -> mean (12 + 16) / 10 = 2.8
    values = query_rows(db, "SELECT value FROM verdicts WHERE value IS NOT NULL AND format_id = "
                            "(SELECT format_id FROM formats WHERE name = 'likert5')")
    assert sorted(v for (v,) in values) == [4.0] * 4
    # a changed shard: the scorer refuses the pool by the file's name rather than ask its calls again
    pl.DataFrame({"prompt_id": ["q0"], "candidate_id": ["c0"], "raw": ["2"]}).write_parquet(shard)
    with OpenAIServer(port=port) as server:             # the same endpoint, restarted
        with pytest.raises(UserError, match="part-0.parquet: attached to pool 'p', has changed"):
            score(_request(server, pool="p"))
        assert server.requests == 0


def _jury(db) -> list[tuple]:
    """The jury 'panel''s verdicts by names: (format, prompt, a, b, value, status, label, label_probs)."""
    return query_rows(db, "SELECT f.name, p.prompt_id, ca.candidate_id, cb.candidate_id, v.value, v.status, v.answer, "
                          "v.answer_probs::VARCHAR FROM verdicts v JOIN judges j USING (judge_id) "
                          "JOIN formats f USING (format_id) "
                          "JOIN prompts p ON p.pool_id = v.pool_id AND p.prompt_idx = v.prompt_idx "
                          "JOIN candidates ca ON ca.pool_id = v.pool_id AND ca.cand_idx = v.a_idx "
                          "LEFT JOIN candidates cb ON cb.pool_id = v.pool_id AND cb.cand_idx = v.b_idx "
                          "WHERE j.name = 'panel' ORDER BY ALL")


def test_a_jury_over_attached_members_equals_the_jury_over_them_imported(tmp_path, capsys):
    rows = synthetic_pool(8, seed=5)
    verdicts = synthetic_verdicts(rows, judges=("alpha", "beta", "gamma"), seed=5)
    pool = write_jsonl(tmp_path / "pool.jsonl", rows)
    frame = pl.DataFrame(verdicts)
    # alpha and beta attached (flat files naming their judge and format), gamma stored in both databases
    attached_part = frame.filter(pl.col("judge") != "gamma")
    (tmp_path / "flat").mkdir()
    attached_part.write_parquet(tmp_path / "flat" / "ab.parquet")
    imported, attached = tmp_path / "imported.duckdb", tmp_path / "attached.duckdb"
    for db in (imported, attached):
        import_pool(db, pool, "s")
        import_verdicts(db, write_jsonl(tmp_path / "gamma.jsonl", frame.filter(pl.col("judge") == "gamma").to_dicts()),
                        "s")
    import_verdicts(imported, write_jsonl(tmp_path / "ab.jsonl", attached_part.to_dicts()), "s")
    attach_verdicts(attached, [str(tmp_path / "flat" / "*.parquet")], "s")
    for db in (imported, attached):
        out = save_jury(db, "s", "panel", ["alpha", "beta", "gamma"], "median")
        assert out["n_verdicts"] > 0
    expect = _jury(imported)
    # every format's keys: 8 prompts; pointwise cells over each candidate, tournament over its pairs
    assert {r[0] for r in expect} == {"binary", "likert5", "numeric100", "tournament"}
    assert _jury(attached) == expect
    capsys.readouterr()
    printed = []
    for db in (imported, attached):
        assert main(["audit", "--pool", "s", "--json", "--db", str(db)]) == 0
        printed.append(capsys.readouterr().out)
    assert printed[0] == printed[1] and '"panel"' in printed[0]
    # a jury of members that are only attached, then the members' files attached again with one answer
    # changed: the attach's finished cell runs refresh the jury, as a finished import's do
    for db in (imported, attached):
        save_jury(db, "s", "pair", ["alpha", "beta"], "mean")
    first = query_rows(attached, "SELECT count(*), sum(value) FROM verdicts v JOIN judges j USING (judge_id) "
                                 "WHERE j.name = 'pair'")
    assert first == query_rows(imported, "SELECT count(*), sum(value) FROM verdicts v JOIN judges j "
                                         "USING (judge_id) WHERE j.name = 'pair'")
    key = (pl.col("judge") == "alpha") & (pl.col("format") == "likert5") & (pl.col("prompt_id") == rows[0]["prompt_id"]) \
        & (pl.col("candidate_id") == rows[0]["candidate_id"])
    before = attached_part.filter(key)["raw"][0]
    changed = attached_part.with_columns(pl.when(key).then(pl.lit("5" if before != "5" else "1")).otherwise(
        pl.col("raw")).alias("raw"))
    changed.write_parquet(tmp_path / "flat" / "ab.parquet")
    attach_verdicts(attached, [str(tmp_path / "flat" / "*.parquet")], "s")
    after = query_rows(attached, "SELECT count(*), sum(value) FROM verdicts v JOIN judges j USING (judge_id) "
                                 "WHERE j.name = 'pair'")
    assert after[0][0] == first[0][0] and after[0][1] != first[0][1]
    # and the imported copy with the same change (a fresh database: imports never replace an answer)
    again = tmp_path / "again.duckdb"
    import_pool(again, pool, "s")
    import_verdicts(again, write_jsonl(tmp_path / "ab2.jsonl", changed.to_dicts()), "s")
    save_jury(again, "s", "pair", ["alpha", "beta"], "mean")
    assert after == query_rows(again, "SELECT count(*), sum(value) FROM verdicts v JOIN judges j USING (judge_id) "
                                      "WHERE j.name = 'pair'")
    detach_verdicts(attached, "s")
