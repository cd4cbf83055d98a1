"""Pure verdict parsers. They never raise: every output is a value or a parse status.

Statuses: 'ok', 'empty', 'no_label' (nothing recognisable), 'ambiguous' (two different verdicts),
'out_of_range' (a number outside the scale), 'not_integer' (a fraction on an integer scale).
"""

from __future__ import annotations

import re
from typing import NamedTuple

_MARKUP = re.compile(r"[*`_\"'“”‘’#]")
_EDGE_PUNCT = " \t\r\n.,;:!?()[]{}<>"
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\d])")


class Parsed(NamedTuple):
    value: float | None
    answer: str | None  # the format's answer read (its key in `labels`)
    status: str


def _clean(raw: object) -> str:
    if not isinstance(raw, str):
        return ""
    return _MARKUP.sub("", raw).strip()


def parse_answer(raw: object, labels: dict[str, float]) -> Parsed:
    """Match one of the answers, `labels` (case-insensitively), in a judge output.

    Order: the whole stripped output; then a search for answers as tokens anywhere, longest answer
    first ("A+ (A slightly better)" is A+): exactly one distinct answer found is a verdict, two
    different ones ("ACCEPT or REJECT") are 'ambiguous'. One-letter answers are matched
    case-sensitively in that search, so the article "a" is not read as a verdict "A".
    """
    text = _clean(raw)
    if not text:
        return Parsed(None, None, "empty")
    by_upper = {k.upper(): k for k in labels}
    whole = text.strip(_EDGE_PUNCT).upper()
    if whole in by_upper:
        key = by_upper[whole]
        return Parsed(float(labels[key]), key, "ok")
    ordered = sorted(labels, key=len, reverse=True)
    found = set()
    for key in ordered:
        flags = 0 if len(key) == 1 else re.IGNORECASE
        pattern = r"(?<![0-9A-Za-z+\-=<>])" + re.escape(key) + r"(?![0-9A-Za-z+\-=<>])"
        if re.search(pattern, text, flags):
            found.add(key)
    if len(found) == 1:
        key = found.pop()
        return Parsed(float(labels[key]), key, "ok")
    if len(found) > 1:
        return Parsed(None, None, "ambiguous")
    return Parsed(None, None, "no_label")


def _fmt_num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def parse_range(raw: object, lo: int, hi: int) -> Parsed:
    """Read one integer on the scale lo..hi from a judge output.

    Mentions of the scale itself ("on a 1-5 scale") are ignored; "4/5" and "85 out of 100" read
    as the numerator when the denominator is the top of the scale. Two different numbers are
    'ambiguous'; one number outside lo..hi is 'out_of_range'; 3.5 is 'not_integer'.
    """
    text = _clean(raw)
    if not text:
        return Parsed(None, None, "empty")
    text = re.sub(rf"(?<![\d.]){lo}\s*(?:-|–|to)\s*{hi}(?![\d.])", " ", text)
    fraction = re.compile(r"(-?\d+(?:\.\d+)?)\s*(?:/|out of)\s*(\d+(?:\.\d+)?)", re.IGNORECASE)
    numbers: list[float] = []

    def take_fraction(m: re.Match) -> str:
        if float(m.group(2)) == hi:
            numbers.append(float(m.group(1)))
            return " "
        return m.group(0)

    text = fraction.sub(take_fraction, text)
    numbers += [float(m.group(0)) for m in _NUMBER.finditer(text)]
    distinct = sorted(set(numbers))
    if not distinct:
        return Parsed(None, None, "no_label")
    if len(distinct) > 1:
        return Parsed(None, None, "ambiguous")
    v = distinct[0]
    if not v.is_integer():
        return Parsed(None, _fmt_num(v), "not_integer")
    if v < lo or v > hi:
        return Parsed(None, _fmt_num(v), "out_of_range")
    return Parsed(v, _fmt_num(v), "ok")
