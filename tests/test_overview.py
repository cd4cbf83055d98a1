"""Issue 11: the findings in words (hand-computed), the reading aids, the Score page's call count,
estimate and Test connection (against the loopback test server), verdict files with a decoding mode
and label probabilities, and the Overview landing page on the bundled five-format demo."""

import json
import math

import polars as pl
import pytest
from streamlit.testing.v1 import AppTest

from app.findings import coin_flip_share, findings
from app.reading import HELP, binned_means, column_config
from app.score_help import duration, estimate_text
from audit import CELL_COLUMNS, audit_cells, bias
from ingest import UserError
from ingest.store import import_pool
from ingest.scoring import check_call, count_calls, estimate_seconds
from ingest.scoring import import_verdicts
from tests.conftest import REPO
from tests.openai_server import OpenAIServer
from train.curate import curate, keep_count


def _cell(**kw) -> dict:
    base = dict.fromkeys(CELL_COLUMNS)
    base.update(judge="j", score="label", kind="pointwise", n_verdicts=100, n_candidates=100, n_prompts=20,
                n_ranked_prompts=20, parse_rate=1.0)
    base.update(kw)
    return base


# -- the coin-flip share of a curation at rate r ----------------------------------------------------

SCORES = pl.DataFrame({"prompt_idx": [0, 0, 0, 1, 1, 2, 2, 3, 3],
                       "s": [1.0, 1.0, 0.0, 1.0, 0.5, 0.5, 0.5, 0.25, 0.0]})
# tops: p0 1 (tied), p1 1 (alone), p2 0.5 (tied), p3 0.25 (alone)


def test_keep_count_rounds_half_up():
    assert [keep_count(r, 4) for r in (0.1, 0.125, 0.25, 0.5, 0.75, 1.0)] == [0, 1, 1, 2, 3, 4]


def test_coin_flip_share_by_hand():
    # r = 0.5 keeps 2 prompts: the cut is at 1, shared by p0 (tied) and p1: 2 slots x 1/2 tied = 1 of 2
    assert coin_flip_share(SCORES, 0.5) == (0.5, 2)
    # r = 0.25 keeps 1: p0 or p1, chosen by the coin at the cut, so the one kept is a tie-break -> 1/1
    # (curate's n_tie_broken counts a prompt kept by the coin at the cut)
    assert coin_flip_share(SCORES, 0.25) == (1.0, 1)
    # r = 0.75 keeps 3: p0 and p1 above the cut (1 tied), the cut 0.5 is p2 alone (tied): 2 of 3
    share, k = coin_flip_share(SCORES, 0.75)
    assert k == 3 and share == pytest.approx(2 / 3)
    # r = 1: all four; tied tops p0, p2 -> 1/2
    assert coin_flip_share(SCORES, 1.0) == (0.5, 4)
    assert coin_flip_share(SCORES, 0.1) is None          # keeps no prompt
    assert coin_flip_share(SCORES.clear(), 0.5) is None


def test_coin_flip_share_is_curates_count_without_the_held_out_prompts():
    # 7 prompts of 2 candidates (cand_idx 2p, 2p + 1); p6 is marked held out. Tops: p0 1 (tied),
    # p1 1, p2 1 (tied), p3 0.5, p4 0.5 (tied), p5 0 (tied), p6 1 (tied, held out).
    s = [1, 1, 1, 0, 1, 1, 0.5, 0, 0.5, 0.5, 0, 0, 1, 1]
    scores = pl.DataFrame({"judge": "j", "format": "likert5", "decoding": "greedy", "score": "label",
                           "cand_idx": range(14), "prompt_idx": [i // 2 for i in range(14)], "s": [float(v) for v in s]})
    pool = pl.DataFrame({"prompt_idx": [i // 2 for i in range(14)], "prompt_id": [f"p{i // 2}" for i in range(14)],
                         "split": ["heldout" if i >= 12 else "pool" for i in range(14)]})
    # r = 0.5 of 6 eligible keeps 3: p0, p1, p2 (all at 1, none by the coin), p0 and p2 tied -> 2/3
    # (counting p6 would keep 4 of 7, p0 p1 p2 p6, 3 tied -> 3/4)
    # r = 0.25 keeps round(1.5) = 2 of the three at 1: both by the coin -> 2/2
    # r = 1 keeps 6: tied p0, p2, p4, p5 -> 4/6
    for rate, expected in ((0.5, (2 / 3, 3)), (0.25, (1.0, 2)), (1.0, (4 / 6, 6))):
        got = coin_flip_share(scores, rate, held=[6])
        assert got[1] == expected[1] and got[0] == pytest.approx(expected[0])
        _, summary = curate(pool, scores, "judge", rate, 0, "j", "likert5")
        assert got == (summary["n_tie_broken"] / summary["n_selected"], summary["n_selected"])
    cells = pl.DataFrame([_cell(format="likert5", decoding="greedy", top_tied=0.71, distinct=3, d2=2.0,
                                nominal_levels=5)], infer_schema_length=None)
    text = findings(cells, None, scores, pool)["j"][0].text
    # r = 10% keeps 1, 25% keeps 2 (< 3 picks), 50% keeps 3: reported, 2 of 3 picks tie-breaks
    assert "(at r = 50%, 67% of the picks are coin flips)" in text


# -- findings ---------------------------------------------------------------------------------------

def test_findings_in_words_by_hand():
    cells = pl.DataFrame([
        _cell(format="likert5", decoding="greedy", parse_rate=0.4, n_verdicts=50, top_tied=0.63, distinct=3,
              d2=2.14, nominal_levels=5, tie_prob=1 / 2.14, tau_a=0.10),
        _cell(format="likert5", decoding="constrained", top_tied=0.9, distinct=2, d2=1.5, nominal_levels=5,
              tie_prob=1 / 1.5, tau_a=0.30),
        _cell(format="likert5", decoding="greedy", score="expected", top_tied=0.0),   # never described
    ], infer_schema_length=None)
    b = pl.DataFrame([{"judge": "j", "format": "tournament", "decoding": "greedy", "n_pairs": 20, "b": 0.2,
                       "b_lo": 0.1, "b_hi": 0.3, "consistency": 0.45},
                      {"judge": "j", "format": "anchored", "decoding": "greedy", "n_pairs": 8, "b": -0.05,
                       "b_lo": -0.2, "b_hi": 0.1, "consistency": 0.5}])
    scores = SCORES.with_columns(judge=pl.lit("j"), format=pl.lit("likert5"), decoding=pl.lit("greedy"),
                                 score=pl.lit("label"))
    got = findings(cells, b, scores)
    texts = [f.text for f in got["j"]]
    assert texts[0] == ("**likert5**, greedy → constrained decoding: parse rate 40% → 100%, D2 2.1 → 1.5, "
                        "tied top 63% → 90%.")
    assert "**likert5** (greedy): only 40% of the 50 verdicts parse to a label" in texts[1]
    # 4 prompts: r = 10% keeps none, 25% keeps 1 (< 3 picks), 50% keeps 2 (< 3), so the first rate keeping
    # at least 3 is not there: the last tried (50%) is reported, 1 of 2 picks a coin flip
    assert texts[2] == ("**likert5** (greedy): the top score is tied in 63% of prompts (at r = 50%, 50% of "
                        "the picks are coin flips); 3 distinct scores, 2.1 effective levels (D2) of 5.")
    assert got["j"][2].page == "views/curate.py"
    # the constrained cell has no candidate scores here: ties and levels only
    assert texts[3] == ("**likert5** (constrained): the top score is tied in 90% of prompts; 2 distinct scores, "
                        "1.5 effective levels (D2) of 5.")
    assert texts[4] == ("**tournament** (greedy): b = +0.20 toward slot A (95% CI +0.10 to +0.30); the same "
                        "preference in both orders for 45% of 20 pairs.")
    assert got["j"][4].page == "views/slot_bias.py"
    assert texts[5].startswith("**anchored** (greedy): b = -0.05 (95% CI -0.20 to +0.10): no clear pull")
    assert texts[6] == ("Against the reference, **likert5** (constrained) agrees best within prompts (τa = +0.30) "
                        "and **likert5** (greedy) least (τa = +0.10).")
    assert len(texts) == 7
    none = pl.DataFrame([_cell(format="binary", decoding="greedy", parse_rate=0.0, n_verdicts=12, top_tied=None,
                               n_ranked_prompts=0, d2=None)])
    assert findings(none)["j"][0].text.startswith("**binary**: none of the 12 verdicts parse to a label")


def test_findings_multiples_of_five_and_one_mode():
    cells = pl.DataFrame([_cell(format="numeric100", decoding="greedy", mult5_share=0.71, top_tied=None,
                                n_ranked_prompts=0, d2=None)])
    assert [f.text for f in findings(cells)["j"]] == ["**numeric100**: 71% of scores are multiples of 5."]


# -- reading aids -----------------------------------------------------------------------------------

def test_binned_means_by_hand():
    frame = pl.DataFrame({"c": ["a"] * 5, "gap": [-1.0, -1.0, 1.0, 1.0, 1.0], "q": [0.0, 1.0, 1.0, 1.0, -1.0]})
    got = binned_means(frame, "gap", "q", "c").to_dicts()
    # gap -1: mean 0.5, sd 0.7071 -> half 1.96 * 0.7071 / sqrt(2) = 0.98
    # gap +1: mean 1/3, sd sqrt(((2/3)^2 * 2 + (4/3)^2) / 2) = 1.1547 -> half 1.96 * 1.1547 / sqrt(3) = 1.3067
    assert got[0]["gap"] == -1 and got[0]["q"] == 0.5 and got[0]["n"] == 2
    assert got[0]["hi"] - got[0]["q"] == pytest.approx(0.98, abs=1e-4)
    assert got[1]["q"] == pytest.approx(1 / 3) and got[1]["hi"] - got[1]["q"] == pytest.approx(1.3067, abs=1e-4)
    # many distinct gaps: quantile bins, every item in one bin
    many = pl.DataFrame({"c": ["a"] * 60, "gap": [i / 10 for i in range(60)], "q": [1.0] * 60})
    out = binned_means(many, "gap", "q", "c", n_bins=6)
    assert out.height == 6 and out["n"].sum() == 60 and out["n"].to_list() == [10] * 6
    one = binned_means(pl.DataFrame({"c": ["a"], "gap": [0.5], "q": [1.0]}), "gap", "q", "c")
    assert one["lo"][0] is None


def test_every_diagnostic_has_a_definition_and_identity_is_pinned():
    for col in ("parse_rate", "distinct", "tie_prob", "d1", "d2", "top_tied", "spearman", "tau_a", "tau_b",
                "somers_d", "top1", "top1_expected", "top1_uniform", "q", "b", "consistency", "self_tie_rate"):
        assert HELP[col]
    cfg = column_config(["judge", "format", "d2", "unknown"])
    assert cfg["judge"]["pinned"] is True and cfg["format"]["pinned"] is True
    assert cfg["d2"]["help"].startswith("1 / tie_prob") and "unknown" not in cfg


# -- the Score page's estimate ----------------------------------------------------------------------

POOL = [{"prompt_id": "p", "prompt": "Say hi.", "candidate_id": f"c{i}", "response": f"hi {i}", "reference": float(i)}
        for i in range(3)] + \
       [{"prompt_id": "q", "prompt": "Count.", "candidate_id": f"d{i}", "response": f"{i}", "reference": float(i)}
        for i in range(4)]


def test_call_count_is_exact(db, write_jsonl):
    import_pool(db, write_jsonl("pool.jsonl", POOL), "p")
    # 7 candidates. binary: 7. anchored: 7 forward (2 self) + the reverse of the 2 + 3 others = 12.
    # tournament, both orders: (3 + 6 pairs) x 2 = 18.
    got = count_calls(db, "p", ["binary", "anchored", "tournament"], "both", "all")
    assert got == {"total": 37, "per_format": {"binary": 7, "anchored": 12, "tournament": 18}}
    # listing order, no swaps: 7 + 7 + 9
    assert count_calls(db, "p", ["binary", "anchored", "tournament"], "listing", 0)["total"] == 23
    with pytest.raises(UserError, match="unknown format"):
        count_calls(db, "p", ["nope"])
    with pytest.raises(UserError, match="no pool named"):
        count_calls(db, "missing", ["binary"])


def test_estimate_text():
    count = {"total": 120, "per_format": {"binary": 40, "tournament": 80}}
    assert estimate_seconds(120, "local", "greedy") == pytest.approx(400.0)      # 0.3 verdicts/s
    assert estimate_seconds(120, "openai") is None
    assert estimate_text(count, 400.0, None, "smollm2", 8) == (
        "**120 calls** (40 binary + 80 tournament); about 7 min (at the bundled model's measured rate). "
        "Calls already answered are not made again.")
    tested = {"judge": "m", "latency_ms": 500.0}
    assert "about 15 s (at the test call's 0.5 s per call and concurrency 4)" in estimate_text(count, None, tested, "m", 4)
    assert "time unknown (Test connection to estimate it)" in estimate_text(count, None, tested, "other", 4)
    assert [duration(s) for s in (5, 90, 7200)] == ["about 5 s", "about 2 min", "about 2.0 h"]


# -- Test connection ----------------------------------------------------------------------------------

def test_test_call_against_the_loopback_server(db, write_jsonl):
    import_pool(db, write_jsonl("pool.jsonl", POOL), "p")
    with OpenAIServer() as srv:
        got = check_call(db, "p", f"openai:test-judge@{srv.url}", "likert5")
        assert (got["raw"], got["label"], got["value"], got["status"], got["error"]) == ("4", "4", 4.0, "ok", None)
        assert "hi 0" in got["prompt"] and got["model"] == "test-judge" and got["latency_ms"] > 0
        pair = check_call(db, "p", f"openai:test-judge@{srv.url}", "tournament")
        assert pair["label"] == "A+" and "hi 0" in pair["prompt"] and "hi 1" in pair["prompt"]
    from tests.conftest import free_port
    down = check_call(db, "p", f"openai:test-judge@http://127.0.0.1:{free_port()}/v1", "binary", timeout=5)
    assert down["raw"] is None and down["status"] == "failed" and "transport error" in down["error"]


def test_score_page_test_connection_and_estimate(db, write_jsonl, monkeypatch):
    import_pool(db, write_jsonl("pool.jsonl", POOL), "p")
    monkeypatch.setenv("JUDGEAUDIT_DB", str(db))
    with OpenAIServer() as srv:
        at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=120).run()
        at.switch_page("views/score.py").run()
        at.radio[0].set_value("custom").run()
        assert [t.label for t in at.text_input] == ["Base URL", "Model", "Swap sample (N or all)"]
        at.text_input[0].set_value(srv.url)
        at.text_input[1].set_value("test-judge").run()
        assert "**21 calls** (7 binary + 7 likert5 + 7 numeric100)" in at.info[0].value
        at.button(key="score-test").click().run()
        assert not at.exception
        assert "parsed label **ACCEPT**" in at.success[0].value and at.code[0].value == "ACCEPT"
        assert "at the test call's" in at.info[0].value


# -- verdict files with a decoding mode and label probabilities -------------------------------------

def test_verdict_file_decoding_and_label_probs(db, write_jsonl):
    import_pool(db, write_jsonl("pool.jsonl", POOL), "p")
    rows = []
    for i in range(3):
        rows.append({"judge": "j", "format": "likert5", "prompt_id": "p", "candidate_id": f"c{i}",
                     "raw": "Quite good." if i else "5"})
        rows.append({"judge": "j", "format": "likert5", "prompt_id": "p", "candidate_id": f"c{i}", "raw": "4",
                     "decoding": "constrained", "label_probs": {"4": 0.75, "5": 0.25}})
    got = import_verdicts(db, write_jsonl("v.jsonl", rows), "p")
    assert got["imported"] == 6
    cells = audit_cells(db, "p")
    label = {r["decoding"]: r for r in cells.filter(pl.col("score") == "label").to_dicts()}
    assert label["greedy"]["parse_rate"] == pytest.approx(1 / 3) and label["constrained"]["parse_rate"] == 1.0
    expected = cells.filter(pl.col("score") == "expected").to_dicts()
    # 0.75 x 4 + 0.25 x 5 = 4.25 -> (4.25 - 1) / 4 = 0.8125 for each candidate: one level
    assert [(r["decoding"], r["n_candidates"], r["distinct"]) for r in expected] == [("constrained", 3, 1)]
    bad = write_jsonl("bad.jsonl", [{**rows[1], "decoding": "beam"}])
    with pytest.raises(UserError, match=r"bad.jsonl, line 1.*decoding.*greedy, constrained"):
        import_verdicts(db, bad, "p")
    bad = write_jsonl("bad2.jsonl", [rows[0], {**rows[1], "label_probs": {"7": 1.0}}])
    with pytest.raises(UserError, match=r"line 2.*label_probs.*'7' is not a label of format 'likert5'"):
        import_verdicts(db, bad, "p")
    bad = write_jsonl("bad3.jsonl", [{**rows[1], "label_probs": json.dumps({"4": 1.5})}])
    with pytest.raises(UserError, match=r"line 1.*label_probs.*probabilities in \[0, 1\]"):
        import_verdicts(db, bad, "p")


# -- the landing page on the bundled five-format demo ------------------------------------------------

def test_app_opens_on_the_overview_with_the_five_format_demo(tmp_path, monkeypatch):
    from ingest.demo import seed_demo
    path = tmp_path / "demo.duckdb"
    assert seed_demo(path, pools=("mtbench-formats",)) == ["mtbench-formats"]
    cells = audit_cells(path, "mtbench-formats").filter(pl.col("score") == "label")
    assert set(cells["judge"]) == {"smollm2-demo"}
    assert sorted(set(cells["format"])) == ["anchored", "binary", "likert5", "numeric100", "tournament"]
    assert set(zip(cells["format"], cells["decoding"])) == {
        (f, d) for f in ("anchored", "binary", "likert5", "numeric100", "tournament") for d in ("greedy", "constrained")}
    b = bias(path, "mtbench-formats", n_boot=200)
    tour = b.filter((pl.col("format") == "tournament") & (pl.col("decoding") == "constrained")).to_dicts()[0]
    assert tour["n_pairs"] > 0 and not math.isnan(tour["b"])
    monkeypatch.setenv("JUDGEAUDIT_DB", str(path))
    at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=180).run()
    assert not at.exception
    assert at.sidebar.selectbox[0].value == "mtbench-formats"
    assert at.header[0].value == "Overview"
    words = " ".join(m.value for m in at.markdown)
    assert "greedy → constrained decoding" in words and "the top score is tied in" in words
    assert "toward slot" in words or "no clear pull" in words
    assert len(at.get("vega_lite_chart")) == 1         # the judges x formats grid
