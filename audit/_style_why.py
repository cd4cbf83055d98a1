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
