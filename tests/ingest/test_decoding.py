"""Decoding is part of a cell's identity: greedy (the paper's protocol) or constrained to the
format's labels (issue 14), and a label score is not the same kind of cell as an expected score
(issue 8). Real DuckDB files, a real loopback server, the real bundled model."""

import json

import polars as pl
import pytest
from click.testing import CliRunner

from app.cli import cli
from audit import audit_cells, bias, checklist, checklist_markdown, variance, variance_table
from ingest import UserError
from ingest.store import import_pool
from ingest.scoring.formats import BUILTIN
from ingest.scoring import score, ScoreRequest
from tests.conftest import query_rows
from tests.openai_server import OpenAIServer

POINTWISE = ["binary", "likert5", "numeric100"]


def _pool(n_prompts=4, k=3):
    return [{"prompt_id": f"q{p}", "prompt": f"Question {p}?", "candidate_id": f"c{c}",
             "response": f"Answer {c} to question {p}.", "reference": float((p + c) % k)}
            for p in range(n_prompts) for c in range(k)]


def _cells_json(db, pool="p"):
    result = CliRunner().invoke(cli, ["audit", "--pool", pool, "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["cells"]


# -- the fake judge: both modes, cells kept apart ----------------------------------------------------

def test_fake_judge_modes_are_two_cells_in_audit_json(db, write_jsonl):
    import_pool(db, write_jsonl("pool.jsonl", _pool(6, 4)), "p")
    formats = POINTWISE + ["anchored", "tournament"]
    for mode in ("greedy", "constrained"):
        score(ScoreRequest(pool="p", judge="fake:j?unparsed=0.4", formats=formats, decoding=mode,
                           swap_sample="all", progress=False))
    rows = query_rows(db, "SELECT decoding, count(*), count(value) FROM verdicts GROUP BY decoding ORDER BY 1")
    # 24 candidates x 3 pointwise + anchored 24 forward + 18 reverse (6 self-comparisons are not
    # swapped) + tournament 6 pairs x 6 prompts x 2 orders = 72 + 42 + 72 = 186 calls per mode
    assert [r[:2] for r in rows] == [("constrained", 186), ("greedy", 186)]
    assert rows[0][2] == 186 and rows[1][2] < 186          # constrained never leaves the labels
    # same seeded draws: wherever the greedy call parsed, the constrained one says the same
    differ = query_rows(db, """
        SELECT count(*) FROM verdicts g JOIN verdicts c USING (pool_id, judge_id, format_id, prompt_idx, a_idx,
                                                                 sample)
        WHERE g.decoding = 'greedy' AND c.decoding = 'constrained' AND coalesce(g.b_idx, -1) = coalesce(c.b_idx, -1)
          AND g.value IS NOT NULL AND g.value <> c.value""")
    assert differ == [(0,)]

    cells = _cells_json(db)
    keys = {(c["format"], c["decoding"], c["score"]) for c in cells}
    for fmt in formats:
        assert {(fmt, "greedy", "label"), (fmt, "constrained", "label")} <= keys
    assert all("+" not in c["format"] for c in cells)       # no more "likert5+expected" formats
    by = {(c["format"], c["decoding"], c["score"]): c for c in cells}
    assert by[("binary", "constrained", "label")]["parse_rate"] == 1.0
    assert by[("binary", "greedy", "label")]["parse_rate"] < 1.0
    assert by[("binary", "greedy", "label")]["n_verdicts"] == 24

    b = bias(db, "p", n_boot=50)
    assert sorted(zip(b["format"], b["decoding"])) == [("anchored", "constrained"), ("anchored", "greedy"),
                                                        ("tournament", "constrained"), ("tournament", "greedy")]
    # every self-comparison of the constrained anchored cell parsed: 6 of them (one per prompt)
    assert b.filter((pl.col("format") == "anchored") & (pl.col("decoding") == "constrained"))["n_self"][0] == 6


def test_report_states_the_decoding_mode(db, write_jsonl):
    import_pool(db, write_jsonl("pool.jsonl", _pool()), "p")
    for mode in ("greedy", "constrained"):
        score(ScoreRequest(pool="p", judge="fake:j", formats=["likert5"], decoding=mode, progress=False))
    doc = checklist(db, "p")
    kinds = [(c["format"], c["decoding"]["mode"], c["score"]) for c in doc["cells"]]
    # the fake judge gives label distributions (logprobs on): each mode has a label and an expected cell
    assert kinds == [("likert5", "constrained", "label"), ("likert5", "constrained", "expected"),
                     ("likert5", "greedy", "label"), ("likert5", "greedy", "expected")]
    assert doc["cells"][0]["decoding"]["temperature"] == 0.0       # the recorded settings stay
    md = checklist_markdown(doc)
    assert "## j × likert5 × greedy\n" in md and "## j × likert5 × constrained (expected score)\n" in md
    # a simulated judge is said to be one: it decodes nothing (issue 20), whatever mode it was asked in
    assert md.count("   Decoding: greedy (a simulated judge decodes nothing: it draws its answer).") == 2
    assert md.count("   Decoding: constrained (a simulated judge decodes nothing: it draws its answer).") == 2
    # the rule a real judge's cell states for each mode stays in the document
    assert doc["cells"][2]["decoding"]["rule"].startswith("greedy: the judge's own answer")
    assert doc["cells"][0]["decoding"]["rule"].startswith("constrained: the answer restricted to the format's labels")


# -- the variance decomposition: one kind of cell at a time ----------------------------------------

def test_expected_scores_and_modes_are_not_formats_in_variance():
    rows = []
    # greedy labels: a = (binary 0.5, likert5 0.3), b = (0.6, 0.2). Grand mean 0.4; format means
    # 0.55 and 0.25 -> SS_format = 2 * (0.15^2 + 0.15^2) = 0.09; judge means 0.4 and 0.4 -> 0;
    # SS_total = 0.1^2 + 0.1^2 + 0.2^2 + 0.2^2 = 0.10 -> shares 0.9, 0, 0.1.
    for judge, values in (("a", (0.5, 0.3)), ("b", (0.6, 0.2))):
        for fmt, v in zip(("binary", "likert5"), values):
            rows.append({"judge": judge, "format": fmt, "decoding": "greedy", "score": "label", "tie_prob": v})
    # constrained labels: a = (0.7, 0.1), b = (0.5, 0.3). Grand 0.4; format means 0.6, 0.2 ->
    # SS_format = 2 * (0.2^2 + 0.2^2) = 0.16; SS_total = 0.09 + 0.09 + 0.01 + 0.01 = 0.20 -> 0.8, 0, 0.2.
    for judge, values in (("a", (0.7, 0.1)), ("b", (0.5, 0.3))):
        for fmt, v in zip(("binary", "likert5"), values):
            rows.append({"judge": judge, "format": fmt, "decoding": "constrained", "score": "label", "tie_prob": v})
    # an expected-score cell of likert5 (greedy) for each judge: one format only, so no grid of its own,
    # and it must not become a third format of the greedy label grid
    for judge, v in (("a", 0.9), ("b", 0.05)):
        rows.append({"judge": judge, "format": "likert5", "decoding": "greedy", "score": "expected", "tie_prob": v})
    table = variance_table(pl.DataFrame(rows), metrics=("tie_prob",)).filter(pl.col("dropped_judge").is_null())
    got = {(r["decoding"], r["score"]): r for r in table.to_dicts()}
    assert set(got) == {("greedy", "label"), ("constrained", "label")}
    g, c = got[("greedy", "label")], got[("constrained", "label")]
    assert g["n_formats"] == 2 and c["n_formats"] == 2
    assert (g["share_format"], g["share_judge"], g["share_residual"]) == pytest.approx((0.9, 0.0, 0.1))
    assert (c["share_format"], c["share_judge"], c["share_residual"]) == pytest.approx((0.8, 0.0, 0.2))
    assert g["ss_total"] == pytest.approx(0.10) and c["ss_total"] == pytest.approx(0.20)


def test_variance_of_a_scored_pool_counts_only_real_formats(db, write_jsonl):
    import_pool(db, write_jsonl("pool.jsonl", _pool(5, 4)), "p")
    for judge in ("fake:a?noise=0.1", "fake:b?noise=0.4"):
        score(ScoreRequest(pool="p", judge=judge, formats=POINTWISE, progress=False))
    v = variance(db, "p").filter(pl.col("dropped_judge").is_null() & (pl.col("metric") == "tie_prob"))
    assert sorted(zip(v["decoding"], v["score"], v["n_formats"])) == [("greedy", "expected", 3),
                                                                       ("greedy", "label", 3)]


# -- OpenAI-compatible servers: the server's own mechanism, checked before any call -----------------

@pytest.mark.parametrize("mechanism", ["structured_outputs", "guided_choice", "grammar", "json_schema",
                                       "response_format"])
def test_server_constraint_every_verdict_a_label(db, write_jsonl, mechanism):
    rows = _pool(2, 2)
    rows[0]["response"] += " [fault=prose]"        # the server would answer prose, if it were free to
    import_pool(db, write_jsonl("pool.jsonl", rows), "p")
    with OpenAIServer(constraints=(mechanism,)) as server:
        result = score(ScoreRequest(pool="p", judge=f"openai:test-judge@{server.url}", formats=POINTWISE + ["anchored"],
                                    decoding="constrained", constraint=mechanism, max_retries=0, progress=False))
        # 4 x 3 pointwise + 4 anchored forward calls, plus the one check call made first
        assert result["made"] == 16 and server.requests == 17 and server.constrained_requests == 17
    assert query_rows(db, "SELECT count(*), count(value), min(decoding), max(decoding) FROM verdicts") == \
        [(16, 16, "constrained", "constrained")]
    assert query_rows(db, "SELECT DISTINCT raw FROM verdicts JOIN formats USING (format_id) "
                          "WHERE name = 'binary' ORDER BY 1") == [("ACCEPT",)]
    recorded = query_rows(db, "SELECT DISTINCT decoding_settings FROM cell_runs")
    assert len(recorded) == 1
    settings = json.loads(recorded[0][0])
    assert settings["mode"] == "constrained" and settings["constraint"]["mechanism"] == mechanism


@pytest.mark.parametrize("refuse", [True, False])
def test_server_without_the_constraint_errors_before_any_call(db, write_jsonl, refuse):
    import_pool(db, write_jsonl("pool.jsonl", _pool(2, 2)), "p")
    with OpenAIServer(constraints=("grammar",), refuse_unknown=refuse) as server:
        with pytest.raises(UserError) as err:
            score(ScoreRequest(pool="p", judge=f"openai:test-judge@{server.url}", formats=POINTWISE,
                               decoding="constrained", constraint="guided_choice", progress=False))
        assert server.requests == 1                   # the check call, and nothing else
    message = str(err.value)
    assert "'guided_choice'" in message and "no call of the run was made" in message
    assert ("refused" in message and "HTTP 400" in message) if refuse else "ignored it" in message
    assert query_rows(db, "SELECT count(*) FROM verdicts") == [(0,)]
    assert query_rows(db, "SELECT count(*) FROM cell_runs") == [(0,)]


def test_constraint_only_with_constrained_decoding(db, write_jsonl):
    import_pool(db, write_jsonl("pool.jsonl", _pool(2, 2)), "p")
    with pytest.raises(UserError, match="--constraint"):
        score(ScoreRequest(pool="p", judge="openai:m@http://127.0.0.1:9/v1", formats=["binary"],
                           constraint="grammar", progress=False))
    with pytest.raises(UserError, match="--constraint"):
        score(ScoreRequest(pool="p", judge="fake:j", formats=["binary"], decoding="constrained",
                           constraint="grammar", progress=False))


# -- the bundled model: greedy is transformers' generate, constrained the label argmax ---------------

@pytest.fixture
def smollm(bundled_judge):
    """The session's bundled judge, loaded once (tests/conftest.py)."""
    return bundled_judge


@pytest.fixture
def shared_model(shared_bundled_judge):
    """Every LocalJudge the runner makes reuses the session's loaded model."""
    return shared_bundled_judge


@pytest.mark.slow
def test_local_greedy_is_generate_token_for_token(db, write_jsonl, shared_model):
    import torch
    rows = _pool(2, 2)
    import_pool(db, write_jsonl("pool.jsonl", rows), "p")
    formats = ["binary", "likert5", "tournament"]
    score(ScoreRequest(pool="p", judge="local:smollm2", formats=formats, decoding="greedy", progress=False))
    stored = query_rows(db, "SELECT f.name, p.prompt, a.response, b.response, v.raw, v.tokens_out, v.decoding "
                            "FROM verdicts v JOIN formats f USING (format_id) "
                            "JOIN prompts p ON p.pool_id = v.pool_id AND p.prompt_idx = v.prompt_idx "
                            "JOIN candidates a ON a.pool_id = v.pool_id AND a.cand_idx = v.a_idx "
                            "LEFT JOIN candidates b ON b.pool_id = v.pool_id AND b.cand_idx = v.b_idx")
    assert len(stored) == 4 + 4 + 2
    tok, lm = shared_model.tokenizer, shared_model.lm
    for name, prompt, a, b, raw, n_out, mode in stored:
        fmt = BUILTIN[name]
        content = fmt.render(prompt, response=a) if fmt.kind == "pointwise" else fmt.render(prompt, a=a, b=b)
        ids = tok.apply_chat_template([{"role": "user", "content": content}], add_generation_prompt=True,
                                      tokenize=True, return_dict=False)
        with torch.no_grad():
            out = lm.generate(torch.tensor([ids]), max_new_tokens=16, do_sample=False,
                              pad_token_id=tok.eos_token_id)
        new = out[0, len(ids):].tolist()
        assert mode == "greedy" and n_out == len(new)
        assert raw == tok.decode(new, skip_special_tokens=True).strip()
    # the pointwise greedy calls keep their label distribution (expected scores)
    assert query_rows(db, "SELECT count(expected) FROM verdicts v JOIN formats f USING (format_id) "
                          "WHERE f.kind = 'pointwise'") == [(8,)]


def test_local_constrained_is_the_label_argmax(db, write_jsonl, shared_model):
    import_pool(db, write_jsonl("pool.jsonl", _pool(2, 2)), "p")
    score(ScoreRequest(pool="p", judge="local:smollm2", formats=["binary", "likert5", "numeric100", "tournament"],
                       decoding="constrained", progress=False))
    stored = query_rows(db, "SELECT f.name, v.raw, v.answer, v.answer_probs, v.decoding, v.status FROM verdicts v "
                            "JOIN formats f USING (format_id)")
    assert len(stored) == 12 + 2
    for name, raw, label, probs, mode, status in stored:
        probs = json.loads(probs)
        assert mode == "constrained" and status == "ok"
        assert raw == label == max(probs, key=probs.get)
        assert set(probs) <= set(BUILTIN[name].answer_values())
    cells = _cells_json(db)
    assert {(c["format"], c["decoding"], c["score"]) for c in cells} >= {
        ("likert5", "constrained", "label"), ("likert5", "constrained", "expected"),
        ("tournament", "constrained", "label")}


def test_curation_reads_one_cell_of_a_judge_and_format(db, write_jsonl):
    """With both decoding modes and expected scores stored, curating by a judge x format reads one
    cell (the greedy labels unless a mode is named): one value per candidate, not four."""
    from audit import candidate_scores, pool_candidates
    from train.curate import eligible
    import_pool(db, write_jsonl("pool.jsonl", _pool(3, 3)), "p")
    for mode in ("greedy", "constrained"):
        score(ScoreRequest(pool="p", judge="fake:j?unparsed=0.5", formats=["likert5"], decoding=mode,
                           progress=False))
    scores, cands = candidate_scores(db, "p"), pool_candidates(db, "p")
    assert scores.height > 9                                 # 4 cells' scores of 9 candidates
    greedy = eligible(cands, scores, "judge", "j", "likert5", held=pl.Series([], dtype=pl.Int64))
    constrained = eligible(cands, scores, "judge", "j", "likert5", held=pl.Series([], dtype=pl.Int64),
                           decoding="constrained")
    labels = scores.filter(pl.col("score") == "label")
    assert greedy["cand_idx"].to_list() == sorted(labels.filter(pl.col("decoding") == "greedy")["cand_idx"])
    assert constrained.height == 9 and greedy.height < 9     # greedy left some unparsed


def test_formats_page_shows_both_modes_and_toggles_expected_scores(db, write_jsonl, monkeypatch):
    from streamlit.testing.v1 import AppTest
    from tests.conftest import REPO
    import_pool(db, write_jsonl("pool.jsonl", _pool(4, 3)), "p")
    for mode in ("greedy", "constrained"):
        score(ScoreRequest(pool="p", judge="fake:j?unparsed=0.3", formats=["binary", "likert5"], decoding=mode,
                           progress=False))
    monkeypatch.setenv("JUDGEAUDIT_DB", str(db))
    at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=180).run()
    at.switch_page("views/formats/page.py").run()
    assert not at.exception, [e.value for e in at.exception]
    table = at.dataframe[0].value
    # labels: 2 formats x 2 modes, side by side; no expected-score rows until the toggle is on
    assert sorted(zip(table["format"], table["decoding"])) == [
        ("binary", "constrained"), ("binary", "greedy"), ("likert5", "constrained"), ("likert5", "greedy")]
    assert set(table["score"]) == {"label"}
    assert any("Both decoding modes" in c.value for c in at.caption)
    at.toggle(key="formats_expected").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    table = at.dataframe[0].value
    assert set(table["score"]) == {"expected"} and len(table) == 4
    assert any("expected scores" in s.value for s in at.subheader)


def test_stability_of_a_cell_does_not_move_when_cells_are_added(db, write_jsonl):
    from audit import stability
    import_pool(db, write_jsonl("pool.jsonl", _pool(6, 4)), "p")
    score(ScoreRequest(pool="p", judge="fake:b?noise=0.3", formats=["numeric100"], progress=False))
    before = stability(db, "p", n_boot=30).filter(pl.col("judge") == "b")
    # a judge sorting before it, and the other decoding mode of its own format: new cells ahead of it
    score(ScoreRequest(pool="p", judge="fake:a", formats=["numeric100"], progress=False))
    score(ScoreRequest(pool="p", judge="fake:b?noise=0.3", formats=["numeric100"], decoding="constrained",
                       progress=False))
    after = stability(db, "p", n_boot=30).filter((pl.col("judge") == "b") & (pl.col("decoding") == "greedy"))
    assert before["sd"].to_list() == after["sd"].to_list() and before.height == after.height == 6


@pytest.mark.slow
def test_local_shared_prefix_reading_equals_each_format_alone(smollm):
    """The batched reading (formats sharing the candidate's prefix, right-padded) gives each format
    the distribution it gets when read alone: numeric100's deep trie (0..100) continues at the row's
    own next position, not after the longest row's padding."""
    prompt, response = "What is the capital of France?", "The capital of France is Paris, on the Seine."
    fmts = [BUILTIN[n] for n in POINTWISE]
    contents = [f.render(prompt, response=response) for f in fmts]
    together, _ = smollm.label_distributions(contents, fmts)
    for content, fmt, dist in zip(contents, fmts, together):
        alone, _ = smollm.label_distributions([content], [fmt])
        keys = sorted(set(dist) | set(alone[0]))
        assert [dist.get(k, 0.0) for k in keys] == pytest.approx([alone[0].get(k, 0.0) for k in keys], abs=2e-3), fmt.name
