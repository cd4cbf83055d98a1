"""How a number is said, in one place for the dashboard, the report and the command line's sentences
(docs/metrics.md#too-few-to-say): the one "too few to say" rule, a count with its noun in the right
number, and the one minus sign.

- Too few to say: a share or a claim that rests on fewer than MIN_N items (prompts, calls, pairs,
  labels) is written as too few to say, never as a finding. Five is the smallest n at which one item
  moves a share by no more than 20 points; below it a 100% or a 0% is one or two items' accident.
- A count names its noun in the right number: "1 pair", "2 pairs".
- A negative number is written with the minus sign U+2212 ("−0.37"), as the charts (d3's format)
  and the headline sentences write it, never with the hyphen-minus.

Pure: no database, no Streamlit; tests/audit/test_words.py checks each by hand.
"""

from __future__ import annotations

import re

MIN_N = 5
MINUS = "\u2212"
_HYPHEN_NUMBER = re.compile(r"(?<![\w.])-(?=\.?\d)")


def too_few(n: int | None) -> bool:
    """Whether a share or claim over n items is too few to say (n unknown counts as too few)."""
    return n is None or n < MIN_N


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """'1 pair', '3 pairs', '1,200 calls' (nouns: the plural where it is not noun + 's')."""
    return f"{n:,} {noun if n == 1 else (nouns or noun + 's')}"


def too_few_note(n: int | None, noun: str, nouns: str | None = None) -> str:
    """'too few to say: 3 calls, at least 5 needed' (the words every page and the report use)."""
    have = "no count" if n is None else plural(n, noun, nouns)
    return f"too few to say: {have}, at least {MIN_N} needed"


def minus(text: str) -> str:
    """The text with each hyphen-minus that signs a number made the minus sign: '-0.37 to -1' ->
    '−0.37 to −1' (a hyphen inside a word or a range like 'top-1' is left alone)."""
    return _HYPHEN_NUMBER.sub(MINUS, text)


def signed(x: float, digits: int = 2) -> str:
    """A number with its sign always written: '+0.37', '−0.37' (the minus sign)."""
    return minus(f"{x:+.{digits}f}")


def number(x: float | None, digits: int = 3, missing: str = "n/a") -> str:
    """A number to `digits` decimals with the minus sign; `missing` for None."""
    return missing if x is None else minus(f"{x:.{digits}f}")
