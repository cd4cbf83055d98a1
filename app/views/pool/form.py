"""The Pool page's guidance as data (pure, tested): the fields a pool file needs
(docs/files.md#pool-file), a small example file that imports as it is, and the page's own words for a
taken name."""

from __future__ import annotations

import json

REPLACE_LABEL = "Replace a pool of the same name (its verdicts go too)"   # the page's checkbox

FIELDS = [   # (field, required, what it holds)
    ("prompt_id", True, "text: the prompt's id; every row of one prompt repeats it"),
    ("prompt", True, "text: the instruction, the same on every row of the prompt"),
    ("candidate_id", True, "text: the response's id, unique within its prompt (a system name ranks systems)"),
    ("response", True, "text: the candidate response"),
    ("reference", False, "number, higher is better: a reference score (human rating, win rate)"),
    ("model", False, "text: the model that wrote the response"),
    ("split", False, "`pool` (default) or `heldout`: held-out prompts are never curated, only evaluated"),
    ("category", False, "text: the prompt's category (writing, math ...), the same on every row of the prompt; "
                        "`estimate --strata category` splits by it"),
]

EXAMPLE = [
    {"prompt_id": "q1", "prompt": "Name three primary colours.", "candidate_id": "sys-a",
     "response": "Red, yellow and blue.", "reference": 4, "model": "model-a",
     "category": "general"},
    {"prompt_id": "q1", "prompt": "Name three primary colours.", "candidate_id": "sys-b",
     "response": "Red.", "reference": 1, "model": "model-b",
     "category": "general"},
    {"prompt_id": "q1", "prompt": "Name three primary colours.", "candidate_id": "sys-c",
     "response": "In painting: red, yellow, blue; in light: red, green, blue.", "reference": 5, "model": "model-c",
     "category": "general"},
    {"prompt_id": "q2", "prompt": "What is 12 x 12?", "candidate_id": "sys-a", "response": "144", "reference": 5,
     "model": "model-a", "category": "math"},
    {"prompt_id": "q2", "prompt": "What is 12 x 12?", "candidate_id": "sys-b", "response": "124", "reference": 1,
     "model": "model-b", "category": "math"},
    {"prompt_id": "q2", "prompt": "What is 12 x 12?", "candidate_id": "sys-c", "response": "12 x 12 = 144.",
     "reference": 5, "model": "model-c", "split": "heldout", "category": "math"},
]


def fields_markdown() -> str:
    """The fields as a Markdown list, required ones first and in bold."""
    return "\n".join(f"- **`{name}`** (required): {what}" if required else f"- `{name}` (optional): {what}"
                     for name, required, what in FIELDS)


def example_jsonl() -> str:
    """The example pool as JSON lines: 2 prompts x 3 candidates, every field used once."""
    return "".join(json.dumps(row) + "\n" for row in EXAMPLE)


def taken(name: str, existing: list[str], replace: bool) -> str | None:
    """The page's refusal for a name already in use without the Replace box ticked, else None."""
    name = (name or "").strip()
    if replace or name not in existing:
        return None
    return (f"A pool named '{name}' already exists. Tick **{REPLACE_LABEL}** to overwrite it and its "
            "verdicts, or choose another name.")


def imported(result: dict) -> str:
    """The confirmation shown after a successful import (ingest.store.import_pool's summary)."""
    extra = f", replacing the previous pool and its {result['replaced_verdicts']:,} verdicts" \
        if result.get("replaced_verdicts") else ""
    return (f"Imported pool '{result['pool']}': {_count(result['n_prompts'], 'prompt')}, "
            f"{_count(result['n_candidates'], 'candidate')}{extra}. It is now the sidebar's pool: score it on "
            "the Score page.")


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")
