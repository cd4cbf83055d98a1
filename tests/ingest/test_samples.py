"""Repeated samples (`judgeaudit score --samples N --temperature T`, DESIGN.md 'Command line' and
'Repeats, style and confidence'): the plan, the refusal at temperature 0, the simulated judge's
per-sample noise, resume, identity, and the body an OpenAI-compatible judge is sent."""

import pytest

from ingest import UserError
from ingest.scoring import ScoreRequest, plan_calls, score
from ingest.scoring.formats import BUILTIN
from ingest.scoring.judges.openai_compat import request_body
from ingest.store import import_pool
from tests.conftest import db_snapshot, query_rows
from tests.openai_server import OpenAIServer


def _pool(write_jsonl, db, with_reference=True):
    # 2 prompts x 3 candidates; without references the fake judge draws each call's latent quality
    rows = [{"prompt_id": f"q{i // 3}", "prompt": f"Question {i // 3}", "candidate_id": f"c{i}",
             "response": f"answer {i}", **({"reference": float(i % 3)} if with_reference else {})}
            for i in range(6)]
    import_pool(db, write_jsonl("pool.jsonl", rows), "p")


def _score(judge, formats=("likert5", "tournament"), **kw):
    return score(ScoreRequest(pool="p", judge=judge, formats=list(formats), progress=False,
                              flush_interval_s=0.05, **kw))


def _samples(db):
    """{(format, prompt, a, b): [value of sample 0, 1, ...]} of the stored calls."""
    out = {}
    for fmt, p, a, b, s, value in query_rows(db, "SELECT f.name, prompt_idx, a_idx, b_idx, sample, value FROM "
                                                 "verdicts JOIN formats f USING (format_id) ORDER BY ALL"):
        out.setdefault((fmt, p, a, b), []).append((s, value))
    return {k: [v for _, v in sorted(vals)] for k, vals in out.items()}


def test_plan_counts_are_samples_times_calls():
    import polars as pl
    cands = pl.DataFrame({"prompt_idx": [0, 0, 0, 1, 1], "cand_idx": [0, 1, 2, 3, 4],
                          "position": [0, 1, 2, 0, 1], "reference": [1.0, 2.0, 3.0, 1.0, 2.0]})
    fmts = [BUILTIN["binary"], BUILTIN["tournament"]]
    one, _ = plan_calls(cands, fmts)
    three, _ = plan_calls(cands, fmts, samples=3)
    # binary: 5 calls; tournament: 3 pairs in prompt 0 + 1 in prompt 1 = 4 calls -> 9 per sample
    assert one.height == 9 and three.height == 27
    assert sorted(three["sample"].unique().to_list()) == [0, 1, 2]
    # each sample repeats exactly the calls of sample 0, sample by sample
    key = ["format", "prompt_idx", "a_idx", "b_idx", "swapped"]
    for s in range(3):
        part = three.filter(pl.col("sample") == s).drop("sample")
        assert part.sort(key, nulls_last=True).equals(one.drop("sample").sort(key, nulls_last=True))
    assert three["sample"].to_list() == [0] * 9 + [1] * 9 + [2] * 9


def test_samples_at_temperature_zero_refused_before_anything_is_recorded(db, write_jsonl):
    _pool(write_jsonl, db)
    before = db_snapshot(db)
    with pytest.raises(UserError, match=r"--samples 3 at temperature 0 .*measure nothing.*--temperature"):
        _score("fake:sim", samples=3)
    with pytest.raises(UserError, match="--samples: a whole number of at least 1"):
        _score("fake:sim", samples=0, temperature=0.7)
    assert db_snapshot(db) == before


def test_local_model_refuses_a_temperature(db, write_jsonl):
    # decided: the bundled model decodes greedily or label-constrained only; refused before it loads
    _pool(write_jsonl, db)
    before = db_snapshot(db)
    with pytest.raises(UserError, match=r"local:smollm2\) decodes greedily .* openai: judge"):
        _score("local:smollm2", formats=["likert5"], samples=2, temperature=0.7)
    assert db_snapshot(db) == before


@pytest.mark.parametrize("with_reference", [True, False])
def test_noise_zero_answers_alike_on_every_sample(db, write_jsonl, with_reference):
    _pool(write_jsonl, db, with_reference)
    out = _score("fake:calm?noise=0", samples=4, temperature=0.7)
    # likert5: 6 calls; tournament: 3 pairs x 2 prompts = 6 calls; x 4 samples
    assert out["planned"] == (6 + 6) * 4 and out["made"] == 48
    values = _samples(db)
    assert len(values) == 12 and all(len(v) == 4 for v in values.values())
    assert all(len(set(v)) == 1 for v in values.values()), values


def test_noise_makes_samples_differ_and_each_is_reproducible(db, write_jsonl, tmp_path):
    _pool(write_jsonl, db)
    _score("fake:noisy?noise=0.4", samples=5, temperature=1.0)
    first = _samples(db)
    flipping = [k for k, v in first.items() if len(set(v)) > 1]
    assert len(flipping) >= 6, first      # noise 0.4 of the scale moves most calls between samples
    # sample 0 is the answer the same judge gives without repeats (its seed is unchanged)
    other = tmp_path / "other.duckdb"
    import_pool(other, tmp_path / "pool.jsonl", "p")
    score(ScoreRequest(pool="p", judge="fake:noisy?noise=0.4", formats=["likert5", "tournament"], db=other,
                       progress=False, flush_interval_s=0.05))
    assert {k: [v[0]] for k, v in first.items()} == _samples(other)
    # the whole run again, in a fresh database: the same value for every (call, sample)
    again = tmp_path / "again.duckdb"
    import_pool(again, tmp_path / "pool.jsonl", "p")
    score(ScoreRequest(pool="p", judge="fake:noisy?noise=0.4", formats=["likert5", "tournament"], db=again,
                       samples=5, temperature=1.0, progress=False, flush_interval_s=0.05))
    assert _samples(again) == first


def test_resume_makes_only_the_missing_samples(db, write_jsonl):
    _pool(write_jsonl, db)
    first = _score("fake:sim?noise=0.3", samples=2, temperature=0.7)
    assert first["planned"] == 24 and first["made"] == 24
    values = _samples(db)
    more = _score("fake:sim?noise=0.3", samples=3, temperature=0.7)
    # 12 calls x 3 samples planned; samples 0 and 1 (24) are done, only sample 2 (12) is made
    assert (more["planned"], more["already_done"], more["made"]) == (36, 24, 12)
    after = _samples(db)
    assert {k: v[:2] for k, v in after.items()} == values and all(len(v) == 3 for v in after.values())
    assert _score("fake:sim?noise=0.3", samples=3, temperature=0.7)["made"] == 0


def test_temperature_binds_the_judge_name(db, write_jsonl):
    _pool(write_jsonl, db)
    _score("fake:sim", formats=["likert5"])
    with pytest.raises(UserError, match=r"'sim' already stands for another judge: decoding_settings .*--judge-name"):
        _score("fake:sim", formats=["likert5"], samples=2, temperature=0.7)
    out = _score("fake:sim", formats=["likert5"], samples=2, temperature=0.7, judge_name="sim-t07")
    assert out["judge"] == "sim-t07" and out["made"] == 12
    (temp,) = query_rows(db, "SELECT json_extract(identity, '$.decoding_settings.temperature') FROM judges "
                             "WHERE name = 'sim-t07'")[0]
    assert float(temp) == 0.7


def test_openai_body_carries_temperature_and_a_seed_per_sample(db, write_jsonl):
    settings = {"mode": "sampled", "temperature": 0.7, "max_tokens": 16, "logprobs": False, "seed": 5}
    chat = [{"role": "user", "content": "hi"}]
    assert request_body("m", chat, settings, sample=0) == {"model": "m", "messages": chat, "temperature": 0.7,
                                                            "max_tokens": 16, "seed": 5}
    assert request_body("m", chat, settings, sample=3)["seed"] == 8       # 5 + 3
    _pool(write_jsonl, db)
    with OpenAIServer() as server:
        out = score(ScoreRequest(pool="p", judge=f"openai:test-judge@{server.url}", formats=["likert5"],
                                 samples=3, temperature=0.7, seed=5, progress=False, flush_interval_s=0.05,
                                 concurrency=2))
        assert server.requests == 18                   # 6 candidates x 3 samples, one request each
    assert out["made"] == 18 and out["failed"] == 0
    assert query_rows(db, "SELECT sample, count(*) FROM verdicts GROUP BY ALL ORDER BY ALL") == \
        [(0, 6), (1, 6), (2, 6)]
