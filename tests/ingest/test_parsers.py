"""Table-driven parser tests: one row per odd judge output seen so far.

The rule (docs/scoring.md, "Parsing"): a verdict is parsed when the stripped output (markup, surrounding
spaces and punctuation removed) is a label, case-insensitively; otherwise when exactly one
distinct label appears in the output as a standalone token ("I would ACCEPT this response.",
"Output B is better"), multi-letter labels case-insensitively and one-letter labels exactly. Two
different labels are 'ambiguous'; none is 'no_label'. A range format reads one integer the same way.
"""

import warnings

import pytest

from ingest.scoring.formats import BUILTIN, format_from_spec
from ingest.scoring.formats._parsers import parse_answer

LIKERT = BUILTIN["likert5"]
NUMERIC = BUILTIN["numeric100"]
BINARY = BUILTIN["binary"]
COMPARATIVE = BUILTIN["anchored"]

CASES = [
    # (format, raw, value, status)
    (LIKERT, "4", 4, "ok"),
    (LIKERT, "Score: 4", 4, "ok"),
    (LIKERT, "4/5", 4, "ok"),
    (LIKERT, "**4**", 4, "ok"),
    (LIKERT, " 4.\n", 4, "ok"),
    (LIKERT, "Rating: 3/5 (acceptable)", 3, "ok"),
    (LIKERT, "On a 1-5 scale, I give it 4.", 4, "ok"),
    (LIKERT, "I'd give it a 4. Yes, 4.", 4, "ok"),
    (LIKERT, "4 or 5", None, "ambiguous"),
    (LIKERT, "7", None, "out_of_range"),
    (LIKERT, "0", None, "out_of_range"),
    (LIKERT, "3.5", None, "not_integer"),
    (LIKERT, "", None, "empty"),
    (LIKERT, "   ", None, "empty"),
    (LIKERT, None, None, "empty"),
    (LIKERT, "The response is good.", None, "no_label"),
    (NUMERIC, "85", 85, "ok"),
    (NUMERIC, "I'd say 85 out of 100", 85, "ok"),
    (NUMERIC, "85/100", 85, "ok"),
    (NUMERIC, "Score: 100", 100, "ok"),
    (NUMERIC, "0", 0, "ok"),
    (NUMERIC, "70 or 80", None, "ambiguous"),
    (NUMERIC, "4/5", None, "ambiguous"),
    (NUMERIC, "150", None, "out_of_range"),
    (NUMERIC, "-5", None, "out_of_range"),
    (NUMERIC, "On a 0-100 scale: 90", 90, "ok"),
    (BINARY, "ACCEPT", 1, "ok"),
    (BINARY, "ACCEPT.", 1, "ok"),
    (BINARY, "accept", 1, "ok"),
    (BINARY, "**REJECT**", 0, "ok"),
    (BINARY, "Reject", 0, "ok"),
    (BINARY, "I would ACCEPT this response.", 1, "ok"),
    (BINARY, "ACCEPT or REJECT", None, "ambiguous"),
    (BINARY, "unacceptable", None, "no_label"),
    (BINARY, "Yes", None, "no_label"),
    (BINARY, "", None, "empty"),
    (COMPARATIVE, "A+ (A slightly better)", 1, "ok"),
    (COMPARATIVE, "A++", 2, "ok"),
    (COMPARATIVE, "A++ (A much better)", 2, "ok"),
    (COMPARATIVE, "B+", -1, "ok"),
    (COMPARATIVE, "b++", -2, "ok"),
    (COMPARATIVE, "TIE", 0, "ok"),
    (COMPARATIVE, "tie.", 0, "ok"),
    (COMPARATIVE, "Verdict: B++", -2, "ok"),
    (COMPARATIVE, "A+ or B+", None, "ambiguous"),
    # two-letter labels match case-insensitively in prose too (only one-letter ones are exact)
    (COMPARATIVE, "My verdict: b+", -1, "ok"),
    (COMPARATIVE, "verdict: a++, clearly", 2, "ok"),
    (COMPARATIVE, "I'd call it a tie", 0, "ok"),
    (COMPARATIVE, "A+++", None, "no_label"),
    (COMPARATIVE, "Response A", None, "no_label"),
    (COMPARATIVE, "", None, "empty"),
]


@pytest.mark.parametrize("fmt, raw, value, status", CASES,
                         ids=[f"{c[0].name}:{c[1]!r}" for c in CASES])
def test_parser_table(fmt, raw, value, status):
    parsed = fmt.parse(raw)
    assert parsed.status == status
    assert parsed.value == (None if value is None else float(value))


@pytest.mark.parametrize("raw", [b"\xff".decode("latin-1"), "\x00", "9" * 400, "{}" * 50, 42, 3.5, [], "🙂"])
def test_parsers_never_raise(raw):
    for fmt in BUILTIN.values():
        parsed = fmt.parse(raw)
        assert parsed.status in {"ok", "empty", "no_label", "ambiguous", "out_of_range", "not_integer"}


def test_user_labels_match_case_insensitively_and_single_letters_exactly():
    arena = format_from_spec({"name": "arena5", "kind": "comparative",
                              "labels": {"A>>B": 2, "A>B": 1, "A=B": 0, "B>A": -1, "B>>A": -2}})
    assert arena.parse("A>>B").value == 2
    assert arena.parse("[[A>B]]").value == 1
    assert arena.parse("My final verdict is tie: [[A=B]]").value == 0
    assert arena.parse("b>>a").value == -2
    ab = format_from_spec({"name": "ab", "kind": "comparative", "labels": {"A": 1, "B": -1}})
    assert ab.parse("A").value == 1
    assert ab.parse("b").value == -1                # whole output: case-insensitive
    assert ab.parse("Output B is better").value == -1
    assert ab.parse("a response like B").value == -1  # the article 'a' is not a verdict


def test_a_label_inside_prose_counts_when_it_is_the_only_label():
    ab = format_from_spec({"name": "ab", "kind": "comparative", "labels": {"A": 1, "B": -1}})
    assert ab.parse("Output B is better").status == "ok"          # one label in prose: parsed
    assert ab.parse("Output B is better than Output A").status == "ambiguous"   # two labels
    assert ab.parse("a better answer").status == "no_label"      # 'a' is an article, not the label A
    assert ab.parse("(b)").value == -1 == ab.parse("b").value        # the whole output: any case
    assert ab.parse("Output (b)").status == "no_label"              # in prose a one-letter label is exact


@pytest.mark.parametrize("fmt, raw, answer", [
    (LIKERT, "3.5", "3.5"), (LIKERT, "7", "7"), (NUMERIC, "-5", "-5"), (LIKERT, "4/5", "4"),
    (NUMERIC, "85 out of 100", "85"), (BINARY, "**accept**", "ACCEPT"), (COMPARATIVE, "b++", "B++"),
    (COMPARATIVE, "verdict: tie", "TIE"), (LIKERT, "4 or 5", None), (BINARY, "", None),
])
def test_parsed_answer_is_the_formats_answer(fmt, raw, answer):
    assert fmt.parse(raw).answer == answer


def test_parse_rate_follows_the_rule(db, write_jsonl, monkeypatch, tmp_path):
    """parse_rate = parsed calls / all calls, by the rule above: whole label, one label in prose and
    a one-letter label in prose parse; two labels, no label, an article and an empty output don't."""
    from audit import audit_cells
    from ingest.store import import_pool
    from ingest.scoring import import_verdicts
    monkeypatch.setenv("JUDGEAUDIT_DB", str(tmp_path / "not-this.duckdb"))   # every call names db
    raws = {"binary": ["ACCEPT", "I would REJECT it.", "ACCEPT or REJECT", "unacceptable", ""],   # 2 of 5
            "ab": ["A", "Output B is better", "a fine answer", "A or B", "B"]}                   # 3 of 5
    import_pool(db, write_jsonl("p.jsonl", [{"prompt_id": "q", "prompt": "P", "candidate_id": f"c{i}",
                                             "response": "r"} for i in range(5)]), "p")
    rows = [{"judge": "j", "format": "binary", "prompt_id": "q", "candidate_id": f"c{i}", "raw": raw}
            for i, raw in enumerate(raws["binary"])]
    rows += [{"judge": "j", "format": "ab", "prompt_id": "q", "a_id": f"c{i}", "b_id": f"c{(i + 1) % 5}", "raw": raw}
             for i, raw in enumerate(raws["ab"])]
    spec = write_jsonl("unused", []).with_name("ab.toml")
    spec.write_text('name = "ab"\nkind = "comparative"\nlabels = { "A" = 1, "B" = -1 }\n')
    import_verdicts(db, write_jsonl("v.jsonl", rows), "p", format_specs=[spec])
    rates = {r["format"]: r["parse_rate"] for r in audit_cells(db, "p").to_dicts()}
    assert rates == {"binary": pytest.approx(2 / 5), "ab": pytest.approx(3 / 5)}


@pytest.mark.parametrize("fmt, raw, value, status", [
    (LIKERT, "On a 1 to 5 scale: 4", 4, "ok"),            # the scale's own mention, three spellings
    (LIKERT, "Scale 1–5: score 2", 2, "ok"),
    (LIKERT, "1 -5 scale, 3", 3, "ok"),
    (LIKERT, "3/4", None, "ambiguous"),                   # not out of 5: two numbers
    (LIKERT, "4 OUT OF 5", 4, "ok"),
    (LIKERT, "5", 5, "ok"), (LIKERT, "1", 1, "ok"),       # both ends of the scale are on it
    (LIKERT, "6", None, "out_of_range"),
    (LIKERT, "2.0", 2, "ok"),                             # an integer written as a decimal
    (LIKERT, "v4", None, "no_label"), (LIKERT, "4.5.", None, "not_integer"),
    (NUMERIC, "100/100", 100, "ok"), (NUMERIC, "0 to 100: 55", 55, "ok"), (NUMERIC, "-0", 0, "ok"),
    (NUMERIC, "`90`", 90, "ok"), (NUMERIC, "“70”", 70, "ok"), (NUMERIC, "# 80", 80, "ok"),
    (BINARY, "'ACCEPT'", 1, "ok"), (BINARY, "(REJECT)", 0, "ok"), (BINARY, "_accept_!", 1, "ok"),
    (BINARY, "ACCEPTED", None, "no_label"), (BINARY, "PREACCEPT", None, "no_label"),
    (COMPARATIVE, "=A+", None, "no_label"), (COMPARATIVE, "<B++>", -2, "ok"), (COMPARATIVE, "A+-", None, "no_label"),
    (COMPARATIVE, "[A+]", 1, "ok"), (COMPARATIVE, "1A+", None, "no_label"),
])
def test_parser_edges(fmt, raw, value, status):
    parsed = fmt.parse(raw)
    assert (parsed.value, parsed.status) == (None if value is None else float(value), status)


def test_a_parser_failure_is_a_status_not_an_exception():
    from ingest.scoring.formats import Format
    broken = Format("broken", "pointwise", None)                 # neither labels nor a range
    assert broken.parse("4") == (None, None, "no_label")


def test_one_letter_labels_need_no_letter_or_digit_on_either_side():
    labels = {"A": 1.0, "B": -1.0}
    # B inside "AB" (an upper-case neighbour), "xB" (a lower-case one), "Bx" and "B2": no label
    for raw in ("Verdict: AB", "Verdict: xB", "Verdict: Bx", "Verdict: B2"):
        assert parse_answer(raw, labels).status == "no_label", raw
    assert parse_answer("Verdict: (B).", labels) == (-1.0, "B", "ok")
    with warnings.catch_warnings():      # labels no other test uses, so their patterns compile here
        warnings.simplefilter("error")
        assert parse_answer("I pick Q.", {"Q": 1.0, "R": -1.0}) == (1.0, "Q", "ok")
