"""The reporting checklist (JSON and Markdown) as numbers worked out by hand (arithmetic in comments)
or from scipy. (Score values: test_scores.py; the variance decomposition: test_variance.py; pools:
test_pools.py.)"""

import pytest

from audit import bias, checklist, checklist_markdown
from ingest.store import import_pool
from ingest.scoring import import_verdicts
from tests.audit.conftest import candidate, pointwise


pytestmark = pytest.mark.usefixtures("database_named_by_argument")   # tests/conftest.py


# --- checklist -------------------------------------------------------------------------------

def test_checklist_numbers_and_markdown(db, write_jsonl):
    import_pool(db, write_jsonl("p.jsonl", [candidate("q", c, r) for c, r in (("a", 3), ("b", 1), ("c", 2))]
                                + [candidate("r", "a", 1), candidate("r", "b", 2)]), "p")
    rows = pointwise("j", "binary", [("q", "a", "ACCEPT"), ("q", "b", "ACCEPT"), ("q", "c", "REJECT"),
                                      ("r", "a", "ACCEPT"), ("r", "b", "maybe")])
    calls = [("q", "a", "b", "A+"), ("q", "b", "a", "B+"), ("q", "a", "c", "A+"), ("q", "c", "a", "A+"),
             ("q", "b", "c", "TIE")]
    rows += [{"judge": "j", "format": "tournament", "prompt_id": p, "a_id": x, "b_id": y, "raw": raw}
             for p, x, y, raw in calls]
    import_verdicts(db, write_jsonl("v.jsonl", rows), "p")
    doc = checklist(db, "p")
    assert doc["pool"] == {"name": "p", "n_prompts": 2, "n_candidates": 5}
    cells = {c["format"]: c for c in doc["cells"]}
    binary = cells["binary"]
    # binary: 4 of 5 calls parsed; scores (1, 1, 0, 1): shares 3/4, 1/4 -> tie_prob 9/16 + 1/16 = 10/16
    assert binary["parse_rate"] == pytest.approx(4 / 5)
    assert (binary["distinct"], binary["n_candidates"]) == (2, 4)
    assert binary["tie_prob"] == pytest.approx(10 / 16) and binary["d2"] == pytest.approx(1.6)
    assert binary["slot"] is None and binary["template"] is None and binary["source"] == "import"
    assert binary["score"] == "label" and binary["decoding"]["mode"] == "greedy"
    assert binary["decoding"]["rule"].startswith("greedy: the judge's own answer")
    assert binary["score_rule"] == "the parsed label's value" and binary["judge_model"] is None
    assert (binary["judge"], binary["format"]) == ("j", "binary")
    tour = cells["tournament"]
    # tournament: three distinct scores (see test_audit_hand) -> tie_prob 3 * (1/3)^2 = 1/3, D2 = 3
    assert (tour["distinct"], tour["tie_prob"], tour["d2"]) == (3, pytest.approx(1 / 3), pytest.approx(3.0))
    b = bias(db, "p").to_dicts()[0]
    assert tour["slot"]["scheme"] == "imported verdicts; 2 of 5 calls in the reverse order, 2 items seen in both orders"
    assert (tour["slot"]["b"], tour["slot"]["b_lo"], tour["slot"]["b_hi"]) == (b["b"], b["b_lo"], b["b_hi"])
    assert b["b"] == pytest.approx(0.5)   # items (1, -1): b 0; (1, 1): b 1
    md = checklist_markdown(doc).split("\n")
    assert md[:4] == ["# Reporting checklist: pool `p`", "", "2 prompts, 5 candidates.", ""]
    i = md.index("## j × binary × greedy")
    assert md[i:i + 11] == [
        "## j × binary × greedy", "",
        "1. Format: verdicts imported; the prompt template was not recorded.", "",
        "   Decoding: " + binary["decoding"]["rule"] + ".",
        "   Settings: not recorded.",                       # an import records no decoding settings
        "   Score: the parsed label's value.", "",
        "2. Tie probability 0.625, D2 = 1.60 effective levels; 2 distinct values over 4 scored candidates.",
        "3. Slots: pointwise format, no slot bias.",
        "4. Parse rate 0.800."]
    assert (f"3. Slots: imported verdicts; 2 of 5 calls in the reverse order, 2 items seen in both orders. "
            f"Estimated slot bias b = 0.500 (95% CI {b['b_lo']:.3f} to {b['b_hi']:.3f}).") in md
    assert "2. Tie probability 0.333, D2 = 3.00 effective levels; 3 distinct values over 3 scored candidates." in md


def test_checklist_markdown_of_a_scored_cell_with_template_and_missing_numbers():
    doc = {"pool": {"name": "x", "n_prompts": 1, "n_candidates": 2},
           "cells": [{"judge": "J", "format": "likert5", "score": "expected", "score_rule": "the rule",
                      "template": "Rate {response}.\n\n", "decoding": {"mode": "constrained", "rule": "R", "temperature": 0},
                      "tie_prob": None, "d2": None, "distinct": 0, "n_candidates": 0, "parse_rate": 1.0,
                      "slot": {"scheme": "S", "b": None, "b_lo": None, "b_hi": None}}]}
    md = checklist_markdown(doc).split("\n")
    assert "## J × likert5 × constrained (expected score)" in md
    i = md.index("1. Format, verbatim:")
    assert md[i + 1: i + 6] == ["", "```", "Rate {response}.", "```", ""]
    assert "   Decoding: R." in md and '   Settings: `{"temperature": 0}`.' in md and "   Score: the rule." in md
    assert "2. Tie probability n/a, D2 = n/a effective levels; 0 distinct values over 0 scored candidates." in md
    assert "3. Slots: S. Estimated slot bias b = n/a (95% CI n/a to n/a)." in md
    assert "4. Parse rate 1.000." in md


def test_checklist_markdown_without_a_recorded_mode_reads_greedy_and_separates_cells():
    def cell(judge, decoding):
        return {"judge": judge, "format": "binary", "score": "label", "score_rule": "v", "template": None,
                "decoding": decoding, "tie_prob": 0.5, "d2": 2.0, "distinct": 2, "n_candidates": 2,
                "parse_rate": 1.0, "slot": None}
    doc = {"pool": {"name": "x", "n_prompts": 1, "n_candidates": 2},
           "cells": [cell("J", {}), cell("K", {"mode": "constrained"})]}
    md = checklist_markdown(doc).split("\n")
    # no mode recorded: the paper's protocol, greedy, in the heading and as the decoding rule
    i = md.index("## J × binary × greedy")
    assert md[i + 4] == "   Decoding: greedy."
    # each cell's block ends with its parse rate and one blank line before the next heading
    j = md.index("4. Parse rate 1.000.")
    assert md[j + 1:j + 3] == ["", "## K × binary × constrained"] and md[-2:] == ["4. Parse rate 1.000.", ""]


def test_checklist_of_a_scored_run_carries_its_template_and_recorded_decoding(db, write_jsonl):
    from ingest.scoring.formats import BUILTIN
    from ingest.scoring import score, ScoreRequest
    import_pool(db, write_jsonl("p.jsonl", [candidate("q", c, i) for i, c in enumerate("abcd")]), "p")
    score(ScoreRequest(pool="p", judge="fake:sim", formats=["likert5", "tournament"], db=db, seed=3,
                       schedule="balanced", progress=False, flush_interval_s=0.05))
    doc = checklist(db, "p")
    cells = {(c["format"], c["score"]): c for c in doc["cells"]}
    likert, tour = cells[("likert5", "label")], cells[("tournament", "label")]
    for cell, fmt in ((likert, "likert5"), (tour, "tournament")):
        assert cell["source"] == "score" and cell["template"] == BUILTIN[fmt].template
        assert cell["judge_model"] == "fake-sim"         # the model id the fake judge reports
        # the paper's decoding as the run recorded it (temperature 0, 16 tokens, the run's seed 3)
        d = cell["decoding"]
        assert (d["mode"], d["temperature"], d["max_tokens"], d["seed"]) == ("greedy", 0.0, 16, 3)
        assert d["rule"].startswith("greedy: the judge's own answer")
    assert tour["slot"]["scheme"].startswith("tournament, each candidate in slot A as often as in B; ")
    md = checklist_markdown(doc)
    assert "   Settings: `{" in md and '"seed": 3' in md and "Settings: not recorded" not in md
    assert "1. Format, verbatim:" in md and "Format: verdicts imported" not in md


def test_checklist_slot_interval_is_the_bias_interval_for_the_same_seed(db, write_jsonl, tmp_path):
    # five candidates, all ten pairs in both orders, labels of uneven values so that the bootstrap's
    # percentiles fall between distinct resample means and move with the seed
    import_pool(db, write_jsonl("p.jsonl", [candidate("q", c, i) for i, c in enumerate("abcde")]), "p")
    spec = tmp_path / "w.toml"
    spec.write_text('name = "w"\nkind = "comparative"\n'
                    'labels = { "P" = 1.31, "Q" = 0.77, "R" = -0.23, "S" = -1.97, "T" = 0.05 }\n')
    labels = iter("PQRSTPRQSTQSRPTSPQRT")
    rows = []
    for x, y in [(x, y) for i, x in enumerate("abcde") for y in "abcde"[i + 1:]]:
        for a, b in ((x, y), (y, x)):
            rows.append({"judge": "j", "format": "w", "prompt_id": "q", "a_id": a, "b_id": b, "raw": next(labels)})
    import_verdicts(db, write_jsonl("v.jsonl", rows), "p", format_specs=[spec])

    def interval(row):
        return row["b"], row["b_lo"], row["b_hi"]
    by_seed = {s: interval(bias(db, "p", seed=s).to_dicts()[0]) for s in (0, 7)}
    assert by_seed[0][0] == by_seed[7][0] and by_seed[0][1:] != pytest.approx(by_seed[7][1:], abs=1e-6)
    assert interval(checklist(db, "p")["cells"][0]["slot"]) == by_seed[0]           # the default seed is 0
    assert interval(checklist(db, "p", seed=7)["cells"][0]["slot"]) == by_seed[7]
