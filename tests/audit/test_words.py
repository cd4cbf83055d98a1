"""How a number is said (audit/_words.py): the one "too few to say" rule, counts with their noun in
the right number, and the minus sign U+2212; and that every sentence of the dashboard and the report
that says "too few to say" takes its minimum from that one place."""

import ast

import pytest

from audit import MIN_N, MINUS, minus, plural, signed, too_few, too_few_note
from tests.conftest import REPO


def test_too_few_below_five_items():
    # five is the smallest n at which one item moves a share by no more than 20 points (1/5)
    assert MIN_N == 5 and 1 / MIN_N <= 0.20 < 1 / (MIN_N - 1)
    assert [too_few(n) for n in (None, 0, 1, 4, 5, 6, 1000)] == [True, True, True, True, False, False, False]
    assert too_few_note(3, "call") == "too few to say: 3 calls, at least 5 needed"
    assert too_few_note(1, "label") == "too few to say: 1 label, at least 5 needed"


@pytest.mark.parametrize("n, noun, nouns, text", [
    (1, "pair", None, "1 pair"), (0, "pair", None, "0 pairs"), (2, "pair", None, "2 pairs"),
    (1200, "call", None, "1,200 calls"), (1, "annotator pair", None, "1 annotator pair"),
    (3, "analysis", "analyses", "3 analyses"),
])
def test_plural(n, noun, nouns, text):
    assert plural(n, noun, nouns) == text


def test_one_minus_sign():
    assert MINUS == "\u2212"
    assert minus("-0.37 to -1, top-1, x-2, e-05 and (-3)") == "\u22120.37 to \u22121, top-1, x-2, e-05 and (\u22123)"
    assert minus("-.5") == "\u2212.5"
    assert signed(-0.371) == "\u22120.37" and signed(0.371) == "+0.37" and signed(0.0) == "+0.00"


def _strings(tree: ast.AST) -> list[str]:
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def test_every_too_few_to_say_takes_its_minimum_from_the_one_rule():
    """A module whose words say "too few to say" imports the rule (MIN_N, too_few or too_few_note) from
    audit, and no module writes its own minimum ("at least 5 needed" as text, a MIN_PROMPTS of its own)."""
    offenders, checked = [], 0
    for folder in ("app", "audit", "train", "ingest"):
        for path in sorted((REPO / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            words = " ".join(_strings(tree)).lower()
            names = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                     and (n.module or "").lstrip(".").split(".")[0] in ("audit", "_words") for a in n.names}
            assigned = {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) for t in n.targets
                        if isinstance(t, ast.Name)}
            if path.name == "_words.py":
                continue
            if "too few to say" in words:
                checked += 1
                if not names & {"MIN_N", "too_few", "too_few_note"}:
                    offenders.append(f"{path.relative_to(REPO)}: says too few to say without audit's rule")
            if "at least 5 needed" in words or "MIN_PROMPTS" in assigned:
                offenders.append(f"{path.relative_to(REPO)}: a minimum of its own")
    assert checked >= 5 and not offenders, offenders
