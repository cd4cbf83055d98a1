import pytest

from ingest import UserError
from ingest.scoring.formats import load_format_spec
from ingest.scoring.formats import BUILTIN, format_from_row, format_from_spec


def test_builtin_templates_are_the_paper_prompts():
    binary = BUILTIN["binary"].render("Say hi", response="hi")
    assert binary.startswith("You are evaluating the quality of a response to an instruction. "
                             "Consider helpfulness, correctness, completeness, and clarity.")
    assert "Instruction: Say hi\n\nResponse: hi\n\n" in binary
    assert binary.rstrip().endswith("Reply with exactly one word: ACCEPT or REJECT.")
    assert BUILTIN["likert5"].template.rstrip().endswith(
        "Rate the response on a 1-5 scale (1=very poor, 2=poor, 3=acceptable, 4=good, "
        "5=excellent). Reply with only the number.")
    assert BUILTIN["numeric100"].template.rstrip().endswith(
        "Rate the response on a 0-100 scale, where 0 is unusable and 100 is flawless. "
        "Reply with only the number.")
    comp = BUILTIN["tournament"].render("Q {x}", a="first", b="second")
    assert comp.startswith("You are comparing two responses to the same instruction.")
    assert "Instruction: Q {x}\n\nResponse A: first\n\nResponse B: second\n\n" in comp
    assert comp.rstrip().endswith("Reply with exactly one of: A++ (A much better), A+ (A slightly "
                                  "better), TIE, B+ (B slightly better), B++ (B much better).")


@pytest.mark.parametrize("name, value, expected", [
    ("binary", 1, 1.0), ("binary", 0, 0.0),
    ("likert5", 1, 0.0), ("likert5", 4, 0.75),      # (4-1)/4
    ("numeric100", 85, 0.85),
    ("anchored", -2, 0.0), ("anchored", 1, 0.75),    # (1+2)/4
])
def test_normalisation(name, value, expected):
    assert BUILTIN[name].normalise(value) == pytest.approx(expected)


def test_toml_spec_comparative_and_range(tmp_path):
    spec = tmp_path / "arena5.toml"
    spec.write_text('name = "arena5"\nkind = "comparative"\n'
                    'labels = { "A>>B" = 2, "A>B" = 1, "A=B" = 0, "B>A" = -1, "B>>A" = -2 }\n')
    fmt = load_format_spec(spec)
    assert (fmt.kind, fmt.pairing, fmt.value_lo, fmt.value_hi) == ("comparative", "tournament", -2, 2)
    spec2 = tmp_path / "rating10.toml"
    spec2.write_text('name = "rating10"\nkind = "pointwise"\nrange = [1, 10]\n')
    fmt2 = load_format_spec(spec2)
    assert fmt2.parse("7").value == 7 and fmt2.normalise(10) == 1.0


@pytest.mark.parametrize("body, field", [
    ('kind = "pointwise"\nrange = [1, 5]\n', "name"),
    ('name = "x"\n', "labels"),
    ('name = "x"\nrange = [5, 1]\n', "range"),
    ('name = "x"\nkind = "comparative"\nrange = [1, 5]\n', "range"),
    ('name = "x"\nkind = "weird"\nrange = [1, 5]\n', "kind"),
    ('name = "x"\nlabels = { "yes" = "high", "no" = 0 }\n', "labels.yes"),
    ('name = "x"\nrange = [1, 5]\ncolour = "red"\n', "colour"),
])
def test_toml_spec_errors_name_the_field(tmp_path, body, field):
    spec = tmp_path / "bad.toml"
    spec.write_text(body)
    with pytest.raises(UserError, match=rf"bad.toml, field '{field}'"):
        load_format_spec(spec)


def test_toml_spec_file_errors(tmp_path):
    with pytest.raises(UserError, match="no such file"):
        load_format_spec(tmp_path / "missing.toml")
    broken = tmp_path / "broken.toml"
    broken.write_text('name = "x\n')
    with pytest.raises(UserError, match="broken.toml: invalid TOML"):
        load_format_spec(broken)
    clash = tmp_path / "clash.toml"
    clash.write_text('name = "likert5"\nrange = [1, 5]\n')
    with pytest.raises(UserError) as err:
        load_format_spec(clash)
    assert str(err.value) == f"{clash}, field 'name': 'likert5' is a built-in format; choose another name"


# --- label distributions, expected values, stored formats (numbers by hand) -------------------

def test_answer_probs_from_logprobs_by_hand():
    import math
    binary = BUILTIN["binary"]
    # " ACCEPT" is ACCEPT; "RE" is a prefix of REJECT only; "A" is a prefix of ACCEPT only; "X"
    # fits nothing and "" is dropped: mass ACCEPT = e^-1 + e^-3, REJECT = e^-2, renormalised
    probs = binary.answer_probs_from_logprobs({" ": -0.1, " ACCEPT": -1.0, "RE": -2.0, "a": -3.0, "X": -0.5})
    total = math.exp(-1) + math.exp(-3) + math.exp(-2)
    assert probs == pytest.approx({"ACCEPT": (math.exp(-1) + math.exp(-3)) / total, "REJECT": math.exp(-2) / total})
    assert binary.answer_probs_from_logprobs({"X": 0.0, "maybe": -1.0}) is None
    # on 0-100, "85" is the label 85 itself and "10" the label 10; "-" fits no label
    num = BUILTIN["numeric100"]
    assert num.answer_probs_from_logprobs({"85": -1.0, " 10 ": -1.0, "-": 0.0}) == {"85": 0.5, "10": 0.5}
    likert = BUILTIN["likert5"]
    assert likert.answer_probs_from_logprobs({"4": math.log(0.6), "5": math.log(0.2)}) == pytest.approx({"4": 0.75, "5": 0.25})


def test_expected_value_and_label_values_by_hand():
    likert = BUILTIN["likert5"]
    assert likert.answer_values() == {"1": 1.0, "2": 2.0, "3": 3.0, "4": 4.0, "5": 5.0}
    assert likert.expected_value({"4": 0.75, "5": 0.25}) == pytest.approx(4.25)      # 3 + 1.25
    assert likert.expected_value({}) is None and likert.expected_value(None) is None
    comp = BUILTIN["anchored"]
    assert comp.answer_values() == {"A++": 2, "A+": 1, "TIE": 0, "B+": -1, "B++": -2}
    assert comp.expected_value({"A+": 0.5, "B++": 0.5}) == pytest.approx(-0.5)       # (1 - 2)/2
    assert (comp.value_lo, comp.value_hi) == (-2.0, 2.0)


def test_user_scale_overrides_normalisation_bounds():
    fmt = format_from_spec({"name": "r", "range": [1, 10], "scale": [0, 20]})
    assert (fmt.value_lo, fmt.value_hi) == (0.0, 20.0) and fmt.normalise(5) == 0.25   # 5/20
    labels = format_from_spec({"name": "l", "labels": {"good": 3, "bad": -1}})
    assert (labels.value_lo, labels.value_hi) == (-1.0, 3.0) and labels.normalise(0) == 0.25  # (0+1)/4


def test_format_from_row_round_trip_and_spec_hash():
    import json
    for fmt in BUILTIN.values():   # (the store keeps using BUILTIN itself for the built-in names)
        assert format_from_row({"spec": json.dumps(fmt.spec()), "template": fmt.template}) == fmt
    user = format_from_spec({"name": "u", "kind": "comparative", "pairing": "anchored",
                             "labels": {"L": 1, "R": -1}, "scale": [-2, 2], "template": "T {a} {b}"})
    back = format_from_row({"spec": json.dumps(user.spec()), "template": "T {a} {b}"})
    assert back == user and back.spec_hash == user.spec_hash
    assert user.spec() == {"name": "u", "kind": "comparative", "pairing": "anchored",
                           "labels": {"L": 1.0, "R": -1.0}, "range": None, "scale": [-2.0, 2.0]}
    # the hash covers spec and template: another template, another hash
    other = format_from_row({"spec": user.spec(), "template": "other"})
    assert other.spec_hash != user.spec_hash and len(user.spec_hash) == 64


def test_render_fills_only_its_kind_of_slots():
    # a missing response renders as an empty one
    assert "Instruction: P\n\nResponse: \n\n" in BUILTIN["likert5"].render("P", response=None)
    assert "Response A: \n\nResponse B: \n\n" in BUILTIN["tournament"].render("P")
    assert "Response A: x\n\nResponse B: \n\n" in BUILTIN["tournament"].render("P", a="x")
    pw = format_from_spec({"name": "pw", "range": [1, 3], "template": "{prompt}|{response}|{a}"})
    assert pw.render("p", response="r", a="x") == "p|r|{a}"
    cmp_ = format_from_spec({"name": "c", "kind": "comparative", "labels": {"A": 1, "B": -1},
                             "template": "{prompt}|{a}|{b}|{response}"})
    assert cmp_.render("p", a="x", b=None) == "p|x||{response}"
    with pytest.raises(UserError, match="format 'nt' has no prompt template"):
        format_from_spec({"name": "nt", "range": [1, 3]}).render("p", response="r")


TWO = "must be a table of at least two label = number entries"
LOHI = "must be [lo, hi] with numbers lo < hi"


@pytest.mark.parametrize("spec, field, message", [
    ({"name": "  "}, "name", "required, a non-empty string"),
    ({"name": 3, "range": [1, 2]}, "name", "required, a non-empty string"),
    ({"name": "x", "labels": {"a": 1}, "range": [1, 2]}, "labels",
     "give exactly one of 'labels' (a table label = value) or 'range' = [lo, hi]"),
    ({"name": "x", "labels": ["a", "b"]}, "labels", TWO),
    ({"name": "x", "labels": {"a": 1}}, "labels", TWO),
    ({"name": "x", "labels": {"a": 1, "b": 1.0}}, "labels", "needs at least two different values"),
    ({"name": "x", "labels": {"a": True, "b": 0}}, "labels.a", "value must be a finite number, not True"),
    ({"name": "x", "labels": {"a": float("inf"), "b": 0}}, "labels.a", "value must be a finite number, not inf"),
    ({"name": "x", "range": [1, True]}, "range", "must be [lo, hi] with integers lo < hi, not [1, True]"),
    ({"name": "x", "range": [1, 2, 3]}, "range", "must be [lo, hi] with integers lo < hi, not [1, 2, 3]"),
    ({"name": "x", "range": [2, 2]}, "range", "must be [lo, hi] with integers lo < hi, not [2, 2]"),
    ({"name": "x", "range": [1.5, 3]}, "range", "must be [lo, hi] with integers lo < hi, not [1.5, 3]"),
    ({"name": "x", "kind": "comparative", "range": [1, 5]}, "range",
     "an integer range is for pointwise formats; comparative ones need labels"),
    ({"name": "x", "kind": "weird", "range": [1, 5]}, "kind", "must be one of pointwise, comparative, not 'weird'"),
    ({"name": "x", "range": [1, 5], "pairing": "anchored"}, "pairing", "a pointwise format has no pairing"),
    ({"name": "x", "kind": "comparative", "labels": {"a": 1, "b": 0}, "pairing": "pointwise"}, "pairing",
     "for a comparative format must be one of tournament, anchored"),
    ({"name": "x", "range": [1, 5], "scale": [1]}, "scale", LOHI),
    ({"name": "x", "range": [1, 5], "scale": [5, 1]}, "scale", LOHI),
    ({"name": "x", "range": [1, 5], "scale": [3, 3]}, "scale", LOHI),     # lo = hi: nothing to normalise by
    ({"name": "x", "range": [1, 5], "scale": ["a", 1]}, "scale", LOHI),
    ({"name": "x", "range": [1, 5], "template": 7}, "template", "must be a string"),
    ({"name": "x", "range": [1, 5], "colour": "red"}, "colour",
     "unknown key (known: kind, labels, name, pairing, range, scale, template)"),
])
def test_format_spec_errors_name_the_field_and_the_rule(spec, field, message):
    with pytest.raises(UserError) as err:
        format_from_spec(spec, source="s.toml")
    assert str(err.value) == f"s.toml, field '{field}': {message}"


def test_format_spec_errors_without_a_source_say_format_spec():
    with pytest.raises(UserError) as err:
        format_from_spec({"name": ""})
    assert str(err.value) == "format spec, field 'name': required, a non-empty string"


def test_format_spec_defaults_and_a_directory_or_binary_file(tmp_path):
    from ingest.scoring.formats import format_from_spec as spec_of
    assert spec_of({"name": " x ", "range": [1, 3]}).name == "x"
    comp = spec_of({"name": "c", "kind": "comparative", "labels": {"a": 1, "b": 0}})
    assert (comp.kind, comp.pairing) == ("comparative", "tournament")
    assert spec_of({"name": "p", "range": [0, 1]}).pairing is None          # kind says pointwise; no pairing
    assert spec_of({"name": "p", "range": [0, 1], "pairing": "pointwise"}).pairing is None   # a stored spec's layout
    with pytest.raises(UserError, match="is a directory"):
        load_format_spec(tmp_path)
    bad = tmp_path / "bin.toml"
    bad.write_bytes(b"name = \"\xff\"\n")
    with pytest.raises(UserError, match="bin.toml: not UTF-8"):
        load_format_spec(bad)


def test_a_spec_is_read_as_utf8_whatever_the_locale(tmp_path, monkeypatch):
    # labels with accents, written as UTF-8; the reader's locale is Latin-1 (as a Windows or an
    # old POSIX one may be), which would read "é" (bytes C3 A9) as "Ã©"
    import io
    spec = tmp_path / "fr.toml"
    spec.write_text('name = "fr"\nlabels = { "très bon" = 2, "passable" = 1, "médiocre" = 0 }\n', encoding="utf-8")
    monkeypatch.setattr(io, "text_encoding", lambda encoding, stacklevel=2: encoding or "latin-1")
    assert spec.read_text() != spec.read_text(encoding="utf-8")          # the locale is in effect
    assert load_format_spec(spec).labels == {"très bon": 2.0, "passable": 1.0, "médiocre": 0.0}


def test_a_bad_stored_format_names_the_store():
    with pytest.raises(UserError, match=r"^stored format, field 'range': must be \[lo, hi\]"):
        format_from_row({"spec": '{"name": "x", "range": [3, 1]}', "template": None})
