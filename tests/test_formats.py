import pytest

from ingest import UserError, load_format_spec
from ingest.formats import BUILTIN


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
    with pytest.raises(UserError, match="built-in"):
        load_format_spec(clash)
