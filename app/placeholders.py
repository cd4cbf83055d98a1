"""The warning a page shows when a pool's texts are placeholders (audit.placeholder_texts): the
bundled ko-arena-hard and arena-bench carry the judges' verdicts but not the texts judged, so style
features measure the notices, and training on them teaches the notices."""

from __future__ import annotations

import streamlit as st

from app import data

CONSEQUENCE = {
    "rankings": "The rankings come from the stored verdicts and stand, but style control measures the "
                "placeholders' length and markdown, not the responses'.",
    "train": "Curate & Train would train on these placeholders, not on real prompts and responses: the "
             "adapter would learn the notices. Use a pool with its texts for training.",
}


def placeholder_words(p: dict, use: str) -> str | None:
    """The warning's text, or None when the pool's texts are real (pure: tests/app/test_tables_demo.py)."""
    if not p or not p.get("flagged"):
        return None
    parts = []
    if p["placeholder_prompts"]:
        parts.append(f"{p['placeholder_prompts']:,} of its {p['n_prompts']:,} prompts")
    if p["placeholder_responses"]:
        size = p["min_chars"] if p["min_chars"] == p["max_chars"] else f"{p['min_chars']}–{p['max_chars']}"
        parts.append(f"{p['placeholder_responses']:,} of its {p['n_responses']:,} responses ({size} characters each)")
    example = f" such as “{p['example']}”" if p.get("example") else ""
    return (f"**This pool's texts are placeholders**: {' and '.join(parts)} are notices{example}, "
            f"not the texts the judges saw. {CONSEQUENCE[use]}")


def placeholder_warning(pool: str, use: str, read=None) -> bool:
    """st.warning when the pool's texts are placeholders; whether it warned. read(pool) -> the dict
    of data.placeholders (the default), e.g. from the stored derived result."""
    words = placeholder_words((read or data.placeholders)(pool), use)
    if words:
        st.warning(words, icon=":material/warning:")
    return words is not None
