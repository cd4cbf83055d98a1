"""The Overview's headline: what a pool shows for one judge, in two to four plain sentences, each
term explained where it first appears.

Pure: one judge's audit cells (audit.audit_cells, parsed labels only) and slot-bias rows
(audit.bias) in, markdown sentences out; no Streamlit, no database. The sentences follow fixed
rules (below), so tests/app/test_overview.py works them out by hand from frames built by hand.

1. Levels. With both decoding modes: what constrained decoding does to the parse rate and to the
   effective levels; otherwise the range of effective levels across formats.
2. Coin flips: how often two or more candidates share a prompt's top score.
3. Slot bias: whether it dominates the comparative formats (every b's interval excludes 0 and
   |b| > |q|), is clear in some, or is clear in none; or that it was not measured.
`agreement` (which format agrees best with the reference, or that none does) leads the details.

Small numbers: every share says what it is a share of ("… of 5 prompts", "… of 72 calls"). A share
of prompts over fewer than MIN_N prompts is "too few to say" (the one rule, audit.MIN_N:
docs/metrics.md#too-few-to-say), and a cell whose calls parse less than MIN_PARSE of the time is
left out of the coin-flip claims with its parse rate named: its few scored candidates decide little.
"""

from __future__ import annotations

import polars as pl

from audit import MIN_N, plural, signed

COLLAPSED = 1.25    # D2 below this: (nearly) every candidate got the same score
NEAR_ZERO = 0.10    # best τa below this: no format agrees with the reference
MAX_NAMED = 3       # formats named in one list before "and N more"
MIN_PARSE = 0.5     # a cell parsing less often is left out of the coin-flip claims, its parse rate named

D2_TERM = ("effective levels (D2: how many equally used scores would tie as often as these do; "
           "1 = the same score for every candidate)")
COIN_TERM = "the prompts with at least two scored candidates"
TAU_TERM = ("τa is Kendall's tau-a within each prompt: +1 = the reference's order, 0 = no relation, "
            "−1 = reversed; a tied pair counts as no agreement")
B_TERM = ("b: the part of a verdict that stays when the two responses swap places, the mean of its "
          "margins in both orders; 0 = none, on the labels' margin, −2 to +2 for the built-in formats")


def pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def one(x: float) -> str:
    return f"{x:.1f}"


def span(values: list[float], fmt=pct) -> str:
    """'4% to 81%', or one figure when they are all the same."""
    lo, hi = fmt(min(values)), fmt(max(values))
    return lo if lo == hi else f"{lo} to {hi}"


def share_of(values: list[float], ns: list[int | None], noun: str, labels: list[str] | None = None) -> str:
    """Shares with the n each is a share of: '81% of 72 calls'; '4% to 81% of 24 calls each'; where the
    n differ, the lowest and the highest with theirs: '4% of 24 calls for **binary** to 81% of 42
    for **anchored**' (labels: each share's cell, named beside its n); no n known: '4% to 81% of calls'."""
    known = sorted({n for n in ns if n is not None})
    if not known:
        return f"{span(values)} of {noun}s"
    if len(known) == 1:
        return f"{span(values)} of {plural(known[0], noun)}" + (" each" if len(ns) > 1 else "")
    order = sorted(range(len(values)), key=lambda i: (values[i], ns[i] if ns[i] is not None else -1))
    lo, hi = order[0], order[-1]

    def one_of(i: int, first: bool) -> str:
        n = "?" if ns[i] is None else (plural(ns[i], noun) if first else f"{ns[i]:,}")
        return f"{pct(values[i])} of {n}" + (f" for {labels[i]}" if labels else "")
    return f"{one_of(lo, True)} to {one_of(hi, False)}"


def names(items: list[str]) -> str:
    """'a', 'a and b', 'a, b and c', 'a, b, c and 2 more'."""
    if len(items) > MAX_NAMED + 1:
        items = items[:MAX_NAMED] + [f"{len(items) - MAX_NAMED} more"]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def cell_name(fmt: str, decoding: str | None, modes: int) -> str:
    return f"**{fmt}**" + (f" ({decoding})" if decoding and modes > 1 else "")


def grouped_names(rows: list[dict], modes: int) -> str:
    """The cells as formats, each with its decoding modes: '**likert5** (greedy and constrained)'."""
    by_format: dict[str, list[str]] = {}
    for r in sorted(rows, key=lambda r: (r["format"], r["decoding"] != "greedy")):
        by_format.setdefault(r["format"], []).append(r["decoding"])
    return names([cell_name(f, " and ".join(d), modes) for f, d in by_format.items()])


def _rows(frame: pl.DataFrame, *not_null: str) -> list[dict]:
    return [r for r in frame.iter_rows(named=True) if all(r[c] is not None for c in not_null)]


def levels_sentence(cells: pl.DataFrame) -> str | None:
    pair = {}
    for r in cells.iter_rows(named=True):
        pair.setdefault(r["format"], {})[r["decoding"]] = r
    both = [p for p in pair.values() if {"greedy", "constrained"} <= set(p)]
    if both:
        g = [p["greedy"]["parse_rate"] for p in both]
        k = [p["constrained"]["parse_rate"] for p in both]
        g_n = [p["greedy"].get("n_verdicts") for p in both]
        k_n = [p["constrained"].get("n_verdicts") for p in both]
        named = [cell_name(p["greedy"]["format"], None, 1) for p in both]
        if min(k) == 1 and min(g) < 1:
            parse = (f"makes every verdict parse, where the judge's own answer (greedy decoding, then parsed) "
                     f"parses in {share_of(g, g_n, 'call', named)}")
        elif sum(k) != sum(g):
            parse = (f"{'raises' if sum(k) > sum(g) else 'lowers'} the share of verdicts that parse from "
                     f"{share_of(g, g_n, 'call', named)} (greedy: the judge's own answer, then parsed) to "
                     f"{share_of(k, k_n, 'call', named)}")
        else:
            parse = f"parses as often as greedy decoding ({share_of(k, k_n, 'call', named)})"
        levels = [p["constrained"] for p in both if p["constrained"]["d2"] is not None]
        if not levels:
            return f"Constrained decoding (the judge may answer only with one of the format's labels) {parse}."
        flat = [r for r in levels if r["d2"] < COLLAPSED]
        if flat:
            lean = (f"but {names([cell_name(r['format'], None, 1) for r in flat])} then give"
                    f"{'s' if len(flat) == 1 else ''} (nearly) every candidate the same label: "
                    f"{names([one(r['d2']) for r in flat])} {D2_TERM}")
        else:
            lean = f"and its labels use {span([r['d2'] for r in levels], one)} {D2_TERM}"
        return f"Constrained decoding (the judge may answer only with one of the format's labels) {parse}, {lean}."
    rows = sorted(_rows(cells, "d2"), key=lambda r: (r["d2"], r["format"]))
    if not rows:
        rows = _rows(cells, "parse_rate")
        parsed = [r["parse_rate"] for r in rows]
        return (f"No candidate has a score yet: {share_of(parsed, [r.get('n_verdicts') for r in rows], 'call')} "
                "parse to a label.") if parsed else None
    modes = cells["decoding"].n_unique()
    if len(rows) == 1:
        r = rows[0]
        of = f" of {r['nominal_levels']}" if r["kind"] == "pointwise" and r["nominal_levels"] else ""
        text = f"{cell_name(r['format'], r['decoding'], modes)} uses {r['d2']:.1f} {D2_TERM}{of}"
    else:
        lo, hi = rows[0], rows[-1]
        text = (f"The formats use from {lo['d2']:.1f} ({cell_name(lo['format'], lo['decoding'], modes)}) to "
                f"{hi['d2']:.1f} ({cell_name(hi['format'], hi['decoding'], modes)}) {D2_TERM}")
        flat = [r for r in rows if r["d2"] < COLLAPSED]
        if flat:
            text += (f"; {grouped_names(flat, modes)} give{'s' if len(flat) == 1 else ''} (nearly) every "
                     "candidate the same score")
    parsed = sorted(_rows(cells, "parse_rate"), key=lambda r: (r["parse_rate"], r["format"]))
    if parsed and parsed[0]["parse_rate"] < 0.95:
        r = parsed[0]
        of = f"{r['n_verdicts']:,} " if r.get("n_verdicts") else ""
        text += (f", and only {pct(r['parse_rate'])} of the {of}{cell_name(r['format'], r['decoding'], modes)} "
                 "verdicts parse to a label")
    return text + "."


def prompts_of(rows: list[dict]) -> str:
    """'5 prompts' or '5 to 24 prompts': the n the shares of these cells stand on."""
    ns = sorted({r["n_top_prompts"] for r in rows if r.get("n_top_prompts") is not None})
    if not ns:
        return ""
    return plural(ns[0], "prompt") if len(ns) == 1 else f"{ns[0]:,} to {ns[-1]:,} prompts"


def set_aside(rows: list[dict], modes: int) -> tuple[list[dict], list[str]]:
    """The cells a coin-flip claim may rest on, and why the others are left out: calls that parse
    under MIN_PARSE, or fewer than MIN_N prompts with two scored candidates."""
    kept, notes = [], []
    low = [r for r in rows if r.get("parse_rate") is not None and r["parse_rate"] < MIN_PARSE]
    few = [r for r in rows if r not in low and r.get("n_top_prompts") is not None
           and r["n_top_prompts"] < MIN_N]
    kept = [r for r in rows if r not in low and r not in few]
    if low:
        named = [cell_name(r["format"], r["decoding"], modes) for r in low]
        notes.append(f"{grouped_names(low, modes)} left out: {'its' if len(low) == 1 else 'their'} calls parse "
                     f"in only {share_of([r['parse_rate'] for r in low], [r.get('n_verdicts') for r in low], 'call', named)}")
    if few:
        notes.append(f"too few to say for {grouped_names(few, modes)} ({prompts_of(few)} with two scored "
                     f"candidates; at least {MIN_N} needed)")
    return kept, notes


def coin_flip_sentence(cells: pl.DataFrame) -> str | None:
    rows = _rows(cells, "top_tied")
    if not rows:
        return None
    modes = cells["decoding"].n_unique()
    rows, notes = set_aside(rows, modes)
    tail = ("; " + "; ".join(notes)) if notes else ""
    if not rows:
        return "Too few to say whether picking the best candidate of a prompt is a coin flip: " + "; ".join(notes) + "."
    over = prompts_of(rows)
    of = f"of {over} with at least two scored candidates" if over else f"of {COIN_TERM}"
    shares = [r["top_tied"] for r in rows]
    hi = max(shares)
    if hi == 0:
        return ("No prompt's top score is shared by two candidates in any format, so picking the best "
                f"candidate of a prompt is never a coin flip ({over or 'every prompt'} with two scored "
                f"candidates{' a cell' if over and ' to ' in over else ''}){tail}.")
    often = "often" if hi >= 0.5 else "sometimes"
    text = f"Picking the best candidate of a prompt is {often} a coin flip: two or more candidates share the top score"
    if pct(min(shares)) == pct(hi):
        return f"{text} in {pct(hi)} {of}" + (", in every format" if len(rows) > 1 else "") + f"{tail}."
    top = [r for r in rows if pct(r["top_tied"]) == pct(hi)]
    n_top = prompts_of(top)
    each = " each" if len(top) > 1 else ""
    count = (f", {round(hi * top[0]['n_top_prompts'])} of {n_top}{each}" if n_top and " to " not in n_top else
             f", of {n_top}" if n_top else "")
    return (f"{text} in {span(shares)} {of}, depending on the format"
            f"{' and decoding' if modes > 1 else ''}; {pct(hi)} for {grouped_names(top, modes)}{count}{tail}.")


def slot_sentence(bias: pl.DataFrame | None) -> str | None:
    if bias is None or bias.height == 0:
        return None
    rows = _rows(bias, "b")
    rows = [r for r in rows if r["n_pairs"]]
    if not rows:
        return ("The comparative formats were not asked in both orders, so their slot bias is not measured "
                "(score them with `--swap-sample` to measure it).")
    lo = [r["b_lo"] if r["b_lo"] is not None else r["b"] for r in rows]
    hi = [r["b_hi"] if r["b_hi"] is not None else r["b"] for r in rows]
    clear = [r for r, a, z in zip(rows, lo, hi) if a > 0 or z < 0]
    b = [r["b"] for r in rows]
    if not clear:
        return (f"No clear slot bias in the comparative formats: the 95% interval of b ({B_TERM}) includes 0 "
                f"in every one (b = {span(b, signed)}).")
    q = [r["q"] for r in clear if r["q"] is not None]
    toward = ("toward the response shown first (slot A)" if all(r["b"] > 0 for r in clear) else
              "toward the response shown second (slot B)" if all(r["b"] < 0 for r in clear) else "by slot")
    against = f", against a quality signal q of {span(q, signed)} (the part that follows the responses)" if q else ""
    if len(clear) == len(rows) and all(r["q"] is None or abs(r["b"]) > abs(r["q"]) for r in rows):
        both = [r for r in rows if r["consistency"] is not None]
        named = [cell_name(r["format"], r["decoding"], bias["decoding"].n_unique()) for r in both]
        kept = share_of([r["consistency"] for r in both], [r["n_pairs"] for r in both], "pair", named)
        keep = (f", and only {kept} keep their preference when the order flips (pairs asked in both orders)"
                if both else "")
        return (f"Slot bias dominates the comparative formats: their verdicts lean {toward} by "
                f"b = {span(b, signed)} ({B_TERM}){against}{keep}.")
    modes = bias["decoding"].n_unique()
    rest = "" if len(clear) == len(rows) else "; elsewhere the 95% interval of b includes 0"
    return (f"Slot bias is clear in {grouped_names(clear, modes)}: the verdicts lean {toward} by "
            f"b = {span([r['b'] for r in clear], signed)} ({B_TERM}){against}{rest}.")


def agreement_sentence(cells: pl.DataFrame) -> str | None:
    rows = sorted(_rows(cells, "tau_a"), key=lambda r: (-r["tau_a"], r["format"], r["decoding"]))
    if not rows:
        return None
    modes = cells["decoding"].n_unique()
    best, worst = rows[0], rows[-1]
    name = cell_name(best["format"], best["decoding"], modes)
    if best["tau_a"] < NEAR_ZERO:
        which = "the highest" if len(rows) > 1 else "its"
        near = "close to 0, no relation" if best["tau_a"] > 0 else "no better than 0, no relation"
        return (f"No format agrees with the reference: {which} τa is {signed(best['tau_a'])} ({name}), "
                f"{near} ({TAU_TERM}).")
    if len(rows) == 1:
        return f"Against the reference, {name} agrees at τa = {signed(best['tau_a'])} ({TAU_TERM})."
    least = "not at all" if worst["tau_a"] <= 0 else "least"
    return (f"Against the reference, {name} agrees best within prompts (τa = {signed(best['tau_a'])}; "
            f"{TAU_TERM}), and {cell_name(worst['format'], worst['decoding'], modes)} {least} "
            f"(τa = {signed(worst['tau_a'])}).")


def headline(cells: pl.DataFrame, bias: pl.DataFrame | None = None) -> list[str]:
    """One judge's headline: the levels, coin-flip and slot-bias sentences that apply, in that order.
    cells: that judge's label cells (audit.audit_cells rows); bias: that judge's audit.bias rows."""
    found = [levels_sentence(cells), coin_flip_sentence(cells), slot_sentence(bias)]
    return [s for s in found if s]
