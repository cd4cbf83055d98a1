"""Why a style-controlled fit has no finite maximum, in words: the Rankings page
and `rank --style` say it instead of a bare "no finite fit".

Without a penalty the maximum-likelihood fit is finite only when no parameter separates the
outcomes. The reasons, checked in this order and all that apply given:
- separation by a system: a system that never lost (every comparison it was in went its way, ties
  count half a win each, so a tie breaks it) or never won: its strength runs to infinity;
- otherwise separation by style or slot: some combination of the style features (or the slot)
  predicts every outcome, e.g. the longer response always wins;
- too few comparisons: fewer than MIN_ROWS_PER_PARAMETER a parameter (1 slot + systems − 1 +
  features kept) make a separation likely;
- no variation in a feature: the features dropped (sd 0 over the cell's rows).

And, fitted or not, what the cell's comparisons cannot tell apart (`why_held`: the parameters
audit._style_fit.held_out holds at 0): the slot effect where a system is always in one slot (an anchor
always in slot B), a feature that is a combination of the slot and the systems' columns.
"""

from __future__ import annotations

import numpy as np

MIN_ROWS_PER_PARAMETER = 5


def _names(items: list[str], most: int = 4) -> str:
    shown = ", ".join(items[:most])
    return shown + (f" and {len(items) - most} more" if len(items) > most else "")


def why_no_fit(ids: list[str], a: np.ndarray, b: np.ndarray, y: np.ndarray, dropped: list[str]) -> str:
    """The reasons, as one sentence each joined by a space. ids: the systems (codes a, b index
    them); y: outcomes (1 slot A preferred, 0 slot B, 0.5 a tie); dropped: features without variation."""
    n = len(ids)
    games = np.bincount(a, minlength=n) + np.bincount(b, minlength=n)
    wins = np.bincount(a, weights=y, minlength=n) + np.bincount(b, weights=1 - y, minlength=n)
    never_lost = [ids[i] for i in range(n) if games[i] and wins[i] >= games[i]]
    never_won = [ids[i] for i in range(n) if games[i] and wins[i] <= 0]
    out = []
    if never_lost or never_won:
        parts = ([f"{_names(never_lost)} never lost a comparison"] if never_lost else []) + \
                ([f"{_names(never_won)} never won one"] if never_won else [])
        out.append("Separation: " + " and ".join(parts) + " (ties count half a win), so its strength runs to "
                   "infinity.")
    else:
        out.append("Separation by style or slot: together the style features (or the slot) predict every "
                   "outcome, e.g. the longer response always wins.")
    k = 1 + (n - 1) + (4 - len(dropped))
    if a.size < MIN_ROWS_PER_PARAMETER * k:
        out.append(f"Too few comparisons: {a.size} for {k} parameters (fewer than {MIN_ROWS_PER_PARAMETER} a "
                   "parameter).")
    if dropped:
        out.append(f"No variation in {', '.join(dropped)}: left out.")
    return " ".join(out)


def why_held(ids: list[str], a: np.ndarray, b: np.ndarray, slot: bool, features: list[str]) -> str:
    """The parameters held out, in words. ids: the systems (codes a, b index them, one per row, any
    weights aside); slot: the slot effect is held; features: the features held."""
    n = len(ids)
    in_a, in_b = np.bincount(a, minlength=n) > 0, np.bincount(b, minlength=n) > 0
    only_b = [ids[i] for i in range(n) if in_b[i] and not in_a[i]]
    only_a = [ids[i] for i in range(n) if in_a[i] and not in_b[i]]
    out = []
    if slot:
        one_side = [(s, "B") for s in only_b] if len(only_b) <= len(only_a) or not only_a else [(s, "A") for s in only_a]
        if one_side and len(one_side) < n:
            names = _names([s for s, _ in one_side])
            side = one_side[0][1]
            verb = "is" if len(one_side) == 1 else "are"
            out.append(f"Slot effect not told apart: {names} {verb} always in slot {side}, so the slot effect and "
                       f"{'its' if len(one_side) == 1 else 'their'} strength are one parameter. Fitted without a "
                       f"slot effect (held at 0): the strength of {names} includes the judge's preference for "
                       f"slot {side}.")
        else:
            out.append("Slot effect not told apart: in this cell's comparisons it is a combination of the "
                       "systems' strengths. Fitted without a slot effect (held at 0): the strengths include it.")
    if features:
        verb = "is" if len(features) == 1 else "are"
        out.append(f"{', '.join(features).capitalize()} {verb} not told apart from the systems' strengths and the "
                   "slot in this cell's comparisons: left out (held at 0).")
    return " ".join(out)
