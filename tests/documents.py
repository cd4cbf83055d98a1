"""Comparing a stored document with what a command prints now: structurally, floats to a tolerance.

A bootstrap bound or a fitted strength is the same number on every machine only to the last few
bits: the BLAS and libm of an AMD EPYC sum in another order than an Intel laptop's (8.102417164e-08
printed where the stored document has 8.102417120e-08). So two floats agree when
|a - b| <= max(REL * max(|a|, |b|), ABS); everything else (keys, strings, ints, booleans, nulls,
lengths) must be equal exactly.
"""

import math
import re

REL, ABS = 1e-9, 1e-12


def close(a: float, b: float) -> bool:
    """Two floats agree: relative 1e-9 or absolute 1e-12, whichever is looser; nan only with nan."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= max(REL * max(abs(a), abs(b)), ABS)


def _is_float_pair(a, b) -> bool:
    """Numbers to compare with the tolerance: at least one a float, neither a bool."""
    numbers = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b))
    return numbers and (isinstance(a, float) or isinstance(b, float))


def differences(old, new, where: str = "document", *, new_keys: bool = False) -> list[str]:
    """Where `new` differs from `old`; [] when they agree. Dicts and lists are walked, floats compared
    with `close`, everything else with ==. With `new_keys`, `new` may hold keys `old` lacks (later
    issues add fields, never change or drop one); without it, the keys must be the same."""
    if isinstance(old, dict):
        if not isinstance(new, dict):
            return [f"{where}: {new!r} is not an object"]
        found = [d for k, v in old.items()
                 for d in (differences(v, new[k], f"{where}.{k}", new_keys=new_keys) if k in new
                           else [f"{where}.{k}: missing"])]
        if not new_keys:
            found += [f"{where}.{k}: new" for k in new if k not in old]
        return found
    if isinstance(old, list):
        if not isinstance(new, list) or len(new) != len(old):
            return [f"{where}: {len(old)} items became {len(new) if isinstance(new, list) else new!r}"]
        return [d for i, (a, b) in enumerate(zip(old, new))
                for d in differences(a, b, f"{where}[{i}]", new_keys=new_keys)]
    if _is_float_pair(old, new):
        return [] if close(float(old), float(new)) else [f"{where}: {old!r} became {new!r}"]
    if isinstance(old, bool) != isinstance(new, bool):
        return [f"{where}: {old!r} became {new!r}"]
    return [] if old == new else [f"{where}: {old!r} became {new!r}"]


def keeps(old, new, where: str = "document") -> list[str]:
    """Where `new` differs from `old` on old's keys (new may add keys); [] when every old key holds its
    old value (floats to the tolerance)."""
    return differences(old, new, where, new_keys=True)


# a number as a command prints it: sign, digits, an optional fraction and exponent (not part of a word)
NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w.])")


def text_differences(old: str, new: str) -> list[str]:
    """Where the text `new` differs from `old`: the numbers in them compared with `close` (a number
    with a point or an exponent; integers exactly), the text between them exactly."""
    old_parts, new_parts = NUMBER.split(old), NUMBER.split(new)
    old_numbers, new_numbers = NUMBER.findall(old), NUMBER.findall(new)
    if old_parts != new_parts:
        return [f"text: {p!r} became {q!r}" for p, q in zip(old_parts, new_parts) if p != q] or \
            [f"text: {len(old_numbers)} numbers became {len(new_numbers)}"]
    found = []
    for i, (a, b) in enumerate(zip(old_numbers, new_numbers)):
        floats = any(c in s for s in (a, b) for c in ".eE")
        same = close(float(a), float(b)) if floats else a == b
        if not same:
            found.append(f"number {i}: {a} became {b}")
    return found
