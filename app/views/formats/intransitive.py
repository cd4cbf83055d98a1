"""The Formats page's intransitive tournaments: per tournament cell, the share of decisive triads of a
prompt's candidates that go round in a circle, with its interval over prompts, beside a coin-flipping
judge's ¼. A frame in, lines out; the numbers are audit.intransitivity's."""

from __future__ import annotations

import polars as pl
import streamlit as st

from app import data


def lines(found: pl.DataFrame) -> list[str]:
    """One sentence per tournament cell, each number with its n."""
    out = []
    for r in found.sort("judge", "format", "decoding").to_dicts():
        out.append(f"**{r['judge']}** / {r['format']} / {r['decoding']}: {r['intransitive_share']:.0%} of "
                   f"{r['intransitive_triads']} decisive triads in {r['intransitive_prompts']} prompts form a cycle "
                   f"(95% interval over prompts {r['intransitive_lo']:.0%} to {r['intransitive_hi']:.0%}; "
                   f"a judge flipping coins: {r['intransitive_random']:.0%})")
    return out


def show(pool: str) -> None:
    found = data.result("intransitivity", pool)
    if found.height == 0:
        return
    st.subheader("Intransitive tournaments")
    st.caption("Three candidates of a prompt whose three pairs the judge decided (the same winner in every "
               "order it was asked) form a cycle when A beats B, B beats C and C beats A: no ranking is "
               "consistent with them. A judge that ranks the candidates makes none.")
    for line in lines(found):
        st.markdown("- " + line)
