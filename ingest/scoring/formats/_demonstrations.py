"""A format asked with other instructions and worked demonstrations (docs/scoring.md#aligned-judges):
the same format (its answers, values and parser), its prompt rewritten. What `judgeaudit align`
searches over, and what an aligned judge's cell runs record as their template.

The built-in wording of a format is its template's text before the first `Instruction: {prompt}`;
the instructions replace it. Demonstrations stand between the instructions and the item to judge,
each as the item would be shown, then `Verdict:` and the answer the humans gave, the block closed by
DEMONSTRATIONS_END. Texts go in by plain replacement, as Format.render does.
"""

from __future__ import annotations

from dataclasses import replace

from ..._errors import UserError
from ._format import Format

ITEM = "Instruction: {prompt}"
DEMONSTRATIONS_START = "Examples a person judged, with the verdict they gave:"
DEMONSTRATIONS_END = "Now judge this one."
EXAMPLE = "Example {k}"


def base_instructions(fmt: Format) -> str:
    """The format's built-in wording: its template before `Instruction: {prompt}`, stripped."""
    if fmt.template is None or ITEM not in fmt.template:
        raise UserError(f"format '{fmt.name}': its template has no '{ITEM}' line, so its instructions "
                        "cannot be told apart from the item")
    return fmt.template.split(ITEM, 1)[0].strip()


def demonstration_text(fmt: Format, k: int, demo: dict) -> str:
    """One worked example: `Example k`, the item as the format shows it, and `Verdict: ANSWER`.
    demo: prompt, response (pointwise) or a, b (comparative), answer."""
    if fmt.kind == "pointwise":
        shown = f"Instruction: {demo['prompt']}\n\nResponse: {demo['response']}"
    else:
        shown = f"Instruction: {demo['prompt']}\n\nResponse A: {demo['a']}\n\nResponse B: {demo['b']}"
    return f"{EXAMPLE.format(k=k)}\n\n{shown}\n\nVerdict: {demo['answer']}"


def instructed(fmt: Format, instructions: str | None = None, demonstrations: list[dict] = ()) -> Format:
    """The format with `instructions` (None: its built-in wording) in place of its wording and the
    demonstrations before the item: the same name, answers and parser, another template."""
    wording = base_instructions(fmt) if instructions is None else instructions.strip()
    rest = ITEM + fmt.template.split(ITEM, 1)[1]
    parts = [wording]
    if demonstrations:
        parts += [DEMONSTRATIONS_START, *(demonstration_text(fmt, k, d) for k, d in enumerate(demonstrations, 1)),
                  DEMONSTRATIONS_END]
    return replace(fmt, template="\n\n".join([*parts, rest]))


def shown_demonstrations(content: str) -> list[str]:
    """The demonstrations a rendered prompt shows (each one's text from `Example k` on), [] when none."""
    if DEMONSTRATIONS_START not in content or DEMONSTRATIONS_END not in content:
        return []
    block = content.split(DEMONSTRATIONS_START, 1)[1].split(DEMONSTRATIONS_END, 1)[0]
    out, k = [], 1
    while EXAMPLE.format(k=k) in block:
        after = block.split(EXAMPLE.format(k=k), 1)[1]
        out.append(after.split(EXAMPLE.format(k=k + 1), 1)[0].strip())
        k += 1
    return out
