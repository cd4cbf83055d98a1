"""Issue 11: the findings in words (hand-computed), the reading aids, the Score page's call count,
estimate and Test connection (against the loopback test server), verdict files with a decoding mode
and label probabilities, and the Overview landing page on the bundled five-format demo."""

import json
import math

import polars as pl
import pytest
from streamlit.testing.v1 import AppTest

from app.views.overview.findings import findings
from app.views.overview.headline import (B_TERM, D2_TERM, TAU_TERM, agreement_sentence, coin_flip_sentence,
                          headline, slot_sentence)
from app import tables
from app.reading import HELP, binned_means
from app.views.score.help import duration, estimate_text
from audit import BIAS_COLUMNS, CELL_COLUMNS, audit_cells, bias
from ingest import UserError
from ingest.store import import_pool
from ingest.scoring import check_call, count_calls
from ingest.scoring import import_verdicts
from tests.conftest import REPO, query_rows
from tests.openai_server import OpenAIServer
from train.curate import keep_count


def _cell(**kw) -> dict:
    base = dict.fromkeys(CELL_COLUMNS)
    base.update(judge="j", score="label", aggregate="single", kind="pointwise", n_verdicts=100, n_candidates=100,
                n_prompts=20, n_ranked_prompts=20, n_top_prompts=20, parse_rate=1.0)
    base.update(kw)
    return base


def test_keep_count_rounds_half_up():
    assert [keep_count(r, 4) for r in (0.1, 0.125, 0.25, 0.5, 0.75, 1.0)] == [0, 1, 1, 2, 3, 4]


# -- the headline (app/views/overview/headline.py) -----------------------------------------------------------------

def _frame(rows: list[dict]) -> pl.DataFrame:
    return pl.DataFrame(rows, infer_schema_length=None)


def _bias(**kw) -> dict:
    base = dict.fromkeys(BIAS_COLUMNS)
    base.update(judge="j", format="tournament", decoding="greedy", pairing="tournament", n_pairs=10)
    base.update(kw)
    return base


TWO_MODES = _frame([
    _cell(format="likert5", decoding="greedy", parse_rate=0.4, distinct=3, d2=2.14, nominal_levels=5,
          top_tied=0.63, tau_a=0.10),
    _cell(format="likert5", decoding="constrained", distinct=2, d2=1.2, nominal_levels=5, top_tied=0.9, tau_a=0.30),
    _cell(format="tournament", decoding="greedy", kind="comparative", parse_rate=0.8, distinct=7, d2=3.0,
          nominal_levels=5, top_tied=0.25, tau_a=-0.10),
    _cell(format="tournament", decoding="constrained", kind="comparative", distinct=5, d2=2.5, nominal_levels=5,
          top_tied=0.5, tau_a=0.2),
])


def test_headline_with_both_decoding_modes_by_hand():
    bias_rows = _frame([_bias(n_pairs=20, b=0.2, b_lo=0.1, b_hi=0.3, q=0.05, consistency=0.45),
                        _bias(decoding="constrained", n_pairs=8, b=-0.05, b_lo=-0.2, b_hi=0.1, q=0.1, consistency=0.5)])
    got = headline(TWO_MODES, bias_rows)
    # greedy parses 40% (likert5) and 80% (tournament) of 100 calls each, constrained 100% in both; likert5
    # constrained has D2 1.2 < 1.25: one label for (nearly) everyone; tournament constrained 2.5 is not
    assert got[0] == ("Constrained decoding (the judge may answer only with one of the format's labels) makes every "
                      "verdict parse, where the judge's own answer (greedy decoding, then parsed) parses in 40% to 80% "
                      f"of 100 calls each, but **likert5** then gives (nearly) every candidate the same label: 1.2 "
                      f"{D2_TERM}.")
    # top tied: 0.63 (likert5 greedy: parses 40% < 50%, left out), 0.9, 0.25, 0.5 -> 25% to 90% of 20
    # prompts each; the most is likert5 constrained, 0.9 x 20 = 18 of 20 prompts
    assert got[1] == ("Picking the best candidate of a prompt is often a coin flip: two or more candidates share the "
                      "top score in 25% to 90% of 20 prompts with at least two scored candidates, depending on the "
                      "format and decoding; 90% for **likert5** (constrained), 18 of 20 prompts; **likert5** "
                      "(greedy) left out: its calls parse in only 40% of 100 calls.")
    # greedy: b's interval +0.1..+0.3 excludes 0 (clear); constrained: -0.2..+0.1 includes it
    assert got[2] == ("Slot bias is clear in **tournament** (greedy): the verdicts lean toward the response shown "
                      f"first (slot A) by b = +0.20 ({B_TERM}), against a quality signal q of +0.05 (the part that "
                      "follows the responses); elsewhere the 95% interval of b includes 0.")
    assert len(got) == 3
    # τa: best likert5 constrained +0.30, worst tournament greedy -0.10 (<= 0: no agreement at all)
    assert agreement_sentence(TWO_MODES) == (
        f"Against the reference, **likert5** (constrained) agrees best within prompts (τa = +0.30; {TAU_TERM}), "
        "and **tournament** (greedy) not at all (τa = −0.10).")


def test_headline_one_mode_and_agreement_near_zero_by_hand():
    cells = _frame([_cell(format="binary", decoding="greedy", parse_rate=0.5, distinct=2, d2=1.1, nominal_levels=2,
                          top_tied=0.8, tau_a=-0.02),
                    _cell(format="numeric100", decoding="greedy", distinct=12, d2=4.0, nominal_levels=101,
                          top_tied=0.1, tau_a=0.05)])
    got = headline(cells)
    # D2 1.1 (binary) to 4.0 (numeric100); binary < 1.25; the lowest parse rate, binary's 50%, is < 95%
    assert got == [
        f"The formats use from 1.1 (**binary**) to 4.0 (**numeric100**) {D2_TERM}; **binary** gives (nearly) every "
        "candidate the same score, and only 50% of the 100 **binary** verdicts parse to a label.",
        "Picking the best candidate of a prompt is often a coin flip: two or more candidates share the top score in "
        "10% to 80% of 20 prompts with at least two scored candidates, depending on the format; 80% for **binary**, "
        "16 of 20 prompts."]
    # the best τa is +0.05 < 0.10: no format agrees (never "agrees best")
    assert agreement_sentence(cells) == (
        f"No format agrees with the reference: the highest τa is +0.05 (**numeric100**), close to 0, no relation "
        f"({TAU_TERM}).")
    negative = cells.with_columns(pl.col("tau_a") - 0.10)      # -0.12 and -0.05
    assert agreement_sentence(negative) == (
        f"No format agrees with the reference: the highest τa is −0.05 (**numeric100**), no better than 0, no "
        f"relation ({TAU_TERM}).")
    assert "agrees best" not in agreement_sentence(negative)


def test_headline_slot_bias_cases_by_hand():
    # both intervals exclude 0, |b| > |q| in both: slot bias dominates; b +1.00 and +1.43, q +0.00 and
    # +0.04, consistency 9% and 3% of 10 pairs each (the pairs asked in both orders)
    dominant = _frame([_bias(b=1.0, b_lo=0.54, b_hi=1.37, q=0.0, consistency=0.09),
                       _bias(decoding="constrained", b=1.43, b_lo=1.25, b_hi=1.6, q=0.04, consistency=0.03)])
    assert slot_sentence(dominant) == (
        "Slot bias dominates the comparative formats: their verdicts lean toward the response shown first (slot A) "
        f"by b = +1.00 to +1.43 ({B_TERM}), against a quality signal q of +0.00 to +0.04 (the part that follows the "
        "responses), and only 3% to 9% of 10 pairs each keep their preference when the order flips (pairs asked "
        "in both orders).")
    # pairs of unequal n: the lowest and the highest share, each with its n and its cell
    uneven = dominant.with_columns(pl.Series("n_pairs", [23, 13]))
    assert slot_sentence(uneven).endswith(
        "only 3% of 13 pairs for **tournament** (constrained) to 9% of 23 for **tournament** (greedy) keep their "
        "preference when the order flips (pairs asked in both orders).")
    none = _frame([_bias(b=0.1, b_lo=-0.1, b_hi=0.3, q=0.5), _bias(format="anchored", b=-0.2, b_lo=-0.5, b_hi=0.05)])
    assert slot_sentence(none) == (f"No clear slot bias in the comparative formats: the 95% interval of b ({B_TERM}) "
                                   "includes 0 in every one (b = −0.20 to +0.10).")
    unmeasured = _frame([_bias(n_pairs=0)])
    assert slot_sentence(unmeasured).startswith("The comparative formats were not asked in both orders")
    assert slot_sentence(None) is None and slot_sentence(unmeasured.clear()) is None
    # clear toward slot B, but smaller than the quality signal: not "dominates"
    weak = _frame([_bias(b=-0.3, b_lo=-0.5, b_hi=-0.1, q=0.8)])
    assert slot_sentence(weak).startswith("Slot bias is clear in **tournament**: the verdicts lean toward the response "
                                          "shown second (slot B) by b = −0.30")


def test_headline_coin_flip_edges():
    never = _frame([_cell(format="binary", decoding="greedy", top_tied=0.0), _cell(format="likert5", top_tied=0.0,
                                                                                   decoding="greedy")])
    assert coin_flip_sentence(never).startswith("No prompt's top score is shared")
    same = never.with_columns(pl.lit(0.3).alias("top_tied"))
    assert coin_flip_sentence(same) == ("Picking the best candidate of a prompt is sometimes a coin flip: two or more "
                                        "candidates share the top score in 30% of 20 prompts with at least two "
                                        "scored candidates, in every format.")
    assert coin_flip_sentence(never.with_columns(pl.lit(None).alias("top_tied"))) is None


def test_headline_small_numbers_are_too_few_to_say_and_carry_their_n():
    # issue 26 item 3: the demo's "100% for numeric100 (greedy)" came from 6 parsed candidates over 5
    # prompts. A share over fewer than MIN_N = 5 prompts is "too few to say" (audit's one rule); a cell whose
    # calls parse under MIN_PARSE = 50% decides nothing and is named with its parse rate and calls.
    from app.views.overview.headline import MIN_PARSE
    from audit import MIN_N
    assert (MIN_N, MIN_PARSE) == (5, 0.5)
    cells = _frame([_cell(format="numeric100", decoding="greedy", parse_rate=0.25, top_tied=1.0, n_top_prompts=5),
                    _cell(format="likert5", decoding="greedy", top_tied=0.75, n_top_prompts=4),
                    _cell(format="binary", decoding="greedy", top_tied=0.5, n_top_prompts=12)])
    # binary alone stands: 0.5 x 12 = 6 of 12 prompts
    assert coin_flip_sentence(cells) == (
        "Picking the best candidate of a prompt is often a coin flip: two or more candidates share the top score in "
        "50% of 12 prompts with at least two scored candidates; **numeric100** left out: its calls parse in only 25% "
        "of 100 calls; too few to say for **likert5** (4 prompts with two scored candidates; at least 5 needed).")
    # nothing left to stand on: the whole claim is too few to say
    alone = cells.filter(pl.col("format") != "binary")
    assert coin_flip_sentence(alone) == (
        "Too few to say whether picking the best candidate of a prompt is a coin flip: **numeric100** left out: its "
        "calls parse in only 25% of 100 calls; too few to say for **likert5** (4 prompts with two scored candidates; "
        "at least 5 needed).")
    # five prompts is enough: 5 of 5 shared reads as a fact with its n
    five = _frame([_cell(format="likert5", decoding="greedy", top_tied=1.0, n_top_prompts=5),
                   _cell(format="binary", decoding="greedy", top_tied=0.2, n_top_prompts=10)])
    assert coin_flip_sentence(five).endswith("in 20% to 100% of 5 to 10 prompts with at least two scored candidates, "
                                             "depending on the format; 100% for **likert5**, 5 of 5 prompts.")


# -- the details by format (app/views/overview/findings.py) --------------------------------------------------------

def test_details_by_format_by_hand():
    # the numeric100 (greedy): 6 of 24 calls parsed, its one prompt with >= 2 scored candidates tied
    cells = _frame([
        _cell(format="numeric100", decoding="greedy", parse_rate=0.25, n_verdicts=24, n_candidates=6, distinct=3,
              d2=2.571, nominal_levels=101, top_tied=1.0, tau_a=0.0, mult5_share=0.667),
        _cell(format="numeric100", decoding="constrained", n_verdicts=24, distinct=5, d2=2.571, nominal_levels=101,
              top_tied=0.833, tau_a=0.111, mult5_share=1.0),
        _cell(format="tournament", decoding="constrained", kind="comparative", distinct=6, d2=1.735,
              nominal_levels=5, top_tied=0.667, tau_a=0.167),
        _cell(format="numeric100", decoding="greedy", score="expected", top_tied=0.0),    # never described
        _cell(format="tournament", decoding="constrained", aggregate="mean", top_tied=0.0),   # nor a mean cell
    ])
    b = _frame([_bias(decoding="constrained", n_pairs=36, b=1.43, b_lo=1.25, b_hi=1.6, q=0.04, consistency=0.028),
                _bias(format="anchored", n_pairs=8, b=-0.05, b_lo=-0.2, b_hi=0.1, q=0.0, consistency=0.5)])
    got = findings(cells, b)["j"]
    assert list(got.by_format) == ["numeric100", "tournament"]
    texts = [f.text for f in got.by_format["numeric100"]]
    assert texts == [
        "greedy → constrained decoding: parsed 25% → 100% of 24 calls, D2 2.6 → 2.6, top shared in 100% → 83% of "
        "20 prompts.",
        "*greedy*: only 25% of the 24 calls parse to a label; the rest are answers the format cannot read.",
        "*greedy*: 3 distinct scores, 2.6 effective levels (D2) of 101; top score shared in 100% of the 20 prompts "
        "with ≥ 2 scored candidates; τa = +0.00 (no agreement).",
        "*greedy*: 67% of the 6 scores are multiples of 5.",
        "*constrained*: 5 distinct scores, 2.6 effective levels (D2) of 101; top score shared in 83% of the 20 "
        "prompts with ≥ 2 scored candidates; τa = +0.11.",
        "*constrained*: 100% of the 100 scores are multiples of 5."]
    tour = got.by_format["tournament"]
    # comparative: no "of N" levels; the slot line after the cell's; the anchored bias row has no cell here
    assert [f.text for f in tour] == [
        "*constrained*: 6 distinct scores, 1.7 effective levels (D2); top score shared in 67% of the 20 prompts "
        "with ≥ 2 scored candidates; τa = +0.17.",
        "*constrained*: slot bias b = +1.43 toward slot A (95% CI +1.25 to +1.60), quality signal q = +0.04; the "
        "same preference in both orders for 3% of 36 pairs."]
    assert tour[1].page == "views/slot_bias/page.py" and tour[0].page == "views/formats/page.py"
    one = findings(_frame([_cell(format="binary", decoding="greedy", parse_rate=0.0, n_verdicts=12, top_tied=None,
                                 n_ranked_prompts=0, d2=None)]))["j"]
    assert [f.text for f in one.by_format["binary"]] == [
        "none of the 12 calls parse to a label; the rest are answers the format cannot read."]
    assert one.headline == ["No candidate has a score yet: 0% of 12 calls parse to a label."]


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
    cfg = tables.config(pl.DataFrame({c: [1] for c in ("judge", "format", "d2", "unknown")}))
    assert cfg["judge"]["pinned"] is True and cfg["format"]["pinned"] is True
    assert cfg["d2"]["help"].startswith("1 / tie_prob") and cfg["unknown"]["help"] is None


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
    chars = got.pop("chars")
    assert got == {"total": 37, "per_format": {"binary": 7, "anchored": 12, "tournament": 18}}
    # the characters binary's calls give the judge: its template, then each candidate's prompt and response
    from ingest.scoring.formats import BUILTIN
    assert chars["binary"] == sum(len(BUILTIN["binary"].template) + len(r["prompt"]) + len(r["response"]) for r in POOL)
    # listing order, no swaps: 7 + 7 + 9
    assert count_calls(db, "p", ["binary", "anchored", "tournament"], "listing", 0)["total"] == 23
    with pytest.raises(UserError, match="unknown format"):
        count_calls(db, "p", ["nope"])
    with pytest.raises(UserError, match="no pool named"):
        count_calls(db, "missing", ["binary"])


def test_estimate_text():
    count = {"total": 120, "per_format": {"binary": 40, "tournament": 80}}
    assert estimate_text(count, 400.0, None, "smollm2", 8, "at a pace") == (
        "**120 calls** (40 binary + 80 tournament); about 7 min (at a pace). "
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
        assert (got["raw"], got["answer"], got["value"], got["status"], got["error"]) == ("4", "4", 4.0, "ok", None)
        assert "hi 0" in got["prompt"] and got["model"] == "test-judge" and got["latency_ms"] > 0
        pair = check_call(db, "p", f"openai:test-judge@{srv.url}", "tournament")
        assert pair["answer"] == "A+" and "hi 0" in pair["prompt"] and "hi 1" in pair["prompt"]
    from tests.conftest import free_port
    down = check_call(db, "p", f"openai:test-judge@http://127.0.0.1:{free_port()}/v1", "binary", timeout=5)
    assert down["raw"] is None and down["status"] == "failed" and "transport error" in down["error"]


def test_score_page_test_connection_and_estimate(db, write_jsonl, monkeypatch):
    import_pool(db, write_jsonl("pool.jsonl", POOL), "p")
    monkeypatch.setenv("JUDGEAUDIT_DB", str(db))
    with OpenAIServer() as srv:
        at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=120).run()
        at.switch_page("views/score/page.py").run()
        at.radio[0].set_value("custom").run()
        assert [t.label for t in at.text_input] == ["Base URL", "Model", "Swap sample (N or all)"]
        at.text_input[0].set_value(srv.url)
        at.text_input[1].set_value("test-judge").run()
        assert "**21 calls** (7 binary + 7 likert5 + 7 numeric100)" in at.info[0].value
        at.button(key="score-test").click().run()
        assert not at.exception
        assert "parsed answer **ACCEPT**" in at.success[0].value and at.code[0].value == "ACCEPT"
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
    with pytest.raises(UserError, match=r"bad.jsonl, line 1.*decoding.*greedy, sampled, constrained"):
        import_verdicts(db, bad, "p")
    bad = write_jsonl("bad2.jsonl", [rows[0], {**rows[1], "label_probs": {"7": 1.0}}])
    with pytest.raises(UserError, match=r"line 2.*label_probs.*'7' is not an answer of format 'likert5'"):
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
    # the llama.cpp demo judge, the same model in-process and its two repeat judges (ingest/demo/README.md),
    # and the jury of three of them (issue 28)
    assert set(cells["judge"]) == {"smollm2-demo", "smollm2-local", "smollm2-demo-t1", "smollm2-demo-t0.7",
                                   "smollm2-panel"}
    cells = cells.filter(pl.col("judge") == "smollm2-demo")
    assert sorted(set(cells["format"])) == ["anchored", "binary", "likert5", "numeric100", "tournament"]
    assert set(zip(cells["format"], cells["decoding"])) == {
        (f, d) for f in ("anchored", "binary", "likert5", "numeric100", "tournament") for d in ("greedy", "constrained")}
    b = bias(path, "mtbench-formats", n_boot=200).filter(pl.col("judge") == "smollm2-demo")
    tour = b.filter((pl.col("format") == "tournament") & (pl.col("decoding") == "constrained")).to_dicts()[0]
    assert tour["n_pairs"] > 0 and not math.isnan(tour["b"])
    monkeypatch.setenv("JUDGEAUDIT_DB", str(path))
    at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=180).run()
    assert not at.exception
    assert at.sidebar.selectbox[0].value == "mtbench-formats"
    assert at.header[0].value == "Overview"
    assert [s.value for s in at.subheader][:2] == ["What this pool shows — smollm2-demo", "Details by format"]
    # The demo's headline, worked out from the README's table of it ("What it shows"): greedy parses 1 of 24
    # binary calls (4%) up to 34 of 42 anchored ones (81%), constrained all; constrained binary and
    # likert5 have D2 1.09 and 1.0 (< 1.25), the other three 1.73 to 2.57. Top tied: 50% (tournament,
    # greedy) to 100% (binary constrained, likert5 both, numeric100 greedy) of 6 prompts; but greedy
    # likert5 and numeric100 parse 25% to 29% of calls, under half: left out (issue 26). Slot bias: b = +0.85
    # (anchored greedy), +1.00 (tournament greedy), +1.36, +1.43 (constrained), every 95% interval above
    # 0, q from -0.03 to +0.04; the same preference in both orders for 0 of 13 (anchored greedy) up to 2
    # of 23 (tournament greedy, 9%) pairs.
    headline_ = [m.value for m in at.markdown][:3]
    assert headline_ == [
        "Constrained decoding (the judge may answer only with one of the format's labels) makes every verdict "
        "parse, where the judge's own answer (greedy decoding, then parsed) parses in 4% of 24 calls for **binary** "
        "to 81% of 42 for **anchored**, but "
        f"**binary** and **likert5** then give (nearly) every candidate the same label: 1.1 and 1.0 {D2_TERM}.",
        "Picking the best candidate of a prompt is often a coin flip: two or more candidates share the top score "
        "in 50% to 100% of 6 prompts with at least two scored candidates, depending on the format and decoding; "
        "100% for **binary** (constrained) and **likert5** (constrained), 6 of 6 prompts each; **likert5** (greedy) "
        "and **numeric100** (greedy) left out: their calls parse in only 25% to 29% of 24 calls each.",
        "Slot bias dominates the comparative formats: their verdicts lean toward the response shown first (slot A) "
        f"by b = +0.85 to +1.43 ({B_TERM}), against a quality signal q of −0.03 to +0.04 (the part that follows "
        "the responses), and only 0% of 13 pairs for **anchored** (greedy) to 9% of 23 for **tournament** (greedy) "
        "keep their preference when the order flips (pairs asked in both orders)."]
    words = " ".join(m.value for m in at.markdown)
    # the details, grouped by format; tournament (greedy) has the best τa, +0.19, binary (constrained) -0.03
    assert "**tournament** (greedy) agrees best within prompts (τa = +0.19" in words
    assert "greedy → constrained decoding: parsed 25% → 100% of 24 calls" in words      # numeric100: 6 of 24
    assert "toward slot A (95% CI" in words
    assert len(at.get("vega_lite_chart")) >= 1         # the judges x formats grid
    # the Verdicts card counts each call once (its sample 0), and says so: the demo's repeat judges
    # ask calls up to 5 times, so the pool stores more rows than calls; a jury's votes are not calls
    sample0, rows = query_rows(path, "SELECT count(*) FILTER (WHERE sample = 0), count(*) FROM verdicts "
                                     "JOIN pools USING (pool_id) JOIN judges USING (judge_id) "
                                     "WHERE pools.name = 'mtbench-formats' AND provider <> 'jury'")[0]
    card = next(m for m in at.metric if m.label == "Verdicts")
    assert card.value == f"{sample0:,}" and sample0 < rows and "counts its first sample" in card.help


# -- a jury in the headline (app/views/overview/jury_sentence.py) -------------------------------------------------

JURY = {"judge": "panel", "vote": "mean", "members": ["m1", "m2"]}


def _jury_cells(top: dict, kind: str = "pointwise", formats=("binary", "likert5")) -> pl.DataFrame:
    """The label cells of the jury and its two members on `formats`, each over 6 prompts with a top."""
    return _frame([_cell(judge=j, format=f, decoding="constrained", kind=kind, aggregate="jury" if j == "panel" else
                         "single", n_verdicts=24, n_top_prompts=6, top_tied=top[j]) for j in top for f in formats])


def _calib(rows: list[dict]) -> pl.DataFrame:
    return pl.DataFrame([{"judge": j, "format": "tournament", "decoding": "constrained", "n": 2 * n, "n_pairs": n,
                          "kappa": k, "kappa_lo": lo, "kappa_hi": hi} for j, n, k, lo, hi in rows],
                        schema={"judge": pl.String, "format": pl.String, "decoding": pl.String, "n": pl.Int64,
                                "n_pairs": pl.Int64, "kappa": pl.Float64, "kappa_lo": pl.Float64,
                                "kappa_hi": pl.Float64})


def test_a_jury_with_stored_labels_is_never_said_to_have_none():
    from app.views.overview.jury_sentence import jury_sentence
    # 10 pair labels stored; the jury votes only on pointwise formats, so calibrate has no cell of it: its
    # kappa is undefined, not absent. Ties: the jury 1/6, the members 2/6 and 3/6 -> it breaks m1's
    cells = _jury_cells({"panel": 1 / 6, "m1": 2 / 6, "m2": 3 / 6})
    got = jury_sentence(JURY, cells, _calib([("m1", 10, 0.2, 0.0, 0.4)]), n_labels=10)
    assert "no human labels" not in got
    assert got == ("The jury **panel** (mean of m1, m2): its kappa against the 10 human labels stored is undefined: "
                   "kappa compares pair labels with comparative verdicts, and the jury votes only on pointwise formats "
                   "(binary, likert5); its vote breaks ties: the top of a prompt is tied in 17% of 6 prompts, against "
                   "33% of 6 prompts for m1.")
    # comparative, but calibrate's cell of the jury has no kappa (one category throughout): undefined, with its n
    tour = _jury_cells({"panel": 0.5, "m1": 0.5, "m2": 0.5}, "comparative", ("tournament",))
    got = jury_sentence(JURY, tour, _calib([("panel", 8, None, None, None)]), n_labels=10)
    assert got.startswith("The jury **panel** (mean of m1, m2): its kappa against the 10 human labels stored is "
                          "undefined: on the 8 labelled pairs it judged, its verdicts or the labels fall in one "
                          "category throughout")
    # no label stored at all: that is said, about the pool
    assert "the pool has no human labels" in jury_sentence(JURY, cells, None, n_labels=0)


def test_a_jurys_kappa_carries_its_n_and_is_too_few_to_say_below_the_minimum():
    from app.views.overview.jury_sentence import jury_sentence
    tour = _jury_cells({"panel": 0.25, "m1": 0.5, "m2": 0.75}, "comparative", ("tournament",))
    calib = _calib([("panel", 32, -0.12, -0.31, 0.10), ("m1", 32, 0.02, 0.0, 0.05), ("m2", 30, -0.2, -0.4, 0.0)])
    # the jury's interval overlaps its best member m1's (0.02): "is below (intervals overlapping)", each kappa
    # with the labelled pairs it rests on, the minus sign U+2212
    assert jury_sentence(JURY, tour, calib, n_labels=40) == (
        "The jury **panel** (mean of m1, m2) is below (intervals overlapping) its best member m1 against humans on "
        "tournament: kappa −0.12 [−0.31, 0.10] on 32 labelled pairs against 0.02 [0.00, 0.05] on 32 labelled pairs; "
        "its vote breaks ties: the top of a prompt is tied in 25% of 6 prompts, against 50% of 6 prompts for m1.")
    few = calib.with_columns(pl.when(pl.col("judge") == "panel").then(3).otherwise(pl.col("n_pairs")).alias("n_pairs"))
    assert jury_sentence(JURY, tour, few, n_labels=40).startswith(
        "The jury **panel** (mean of m1, m2): too few to say how it agrees with humans on tournament (3 labelled "
        "pairs; at least 5 needed)")


def test_a_jury_and_its_member_with_no_tied_top_say_so_not_zero_against_zero():
    from app.views.overview.jury_sentence import jury_sentence
    cells = _jury_cells({"panel": 0.0, "m1": 0.0, "m2": 0.0})
    got = jury_sentence(JURY, cells, None, n_labels=0)
    assert "0% of prompts, against 0%" not in got and "against 0%" not in got
    assert got.endswith("; no prompt's top is tied, neither in the jury's verdicts of 6 prompts nor in m1's of 6 "
                        "prompts.")
