"""The training examples: a subset file's rows read and checked, tokenised with the prompt masked,
and a seeded share set aside for eval_loss."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from ingest import UserError

IGNORE = -100       # the label of a token the loss skips: the prompt's and the padding


def jsonl_lines(path: str | os.PathLike) -> Iterator[tuple[Path, int, object]]:
    """(path, line number, parsed value) of each non-blank line of a JSONL file given as --subset;
    a missing file or a line that is not JSON is a UserError naming it."""
    p = Path(path)
    if not p.is_file():
        raise UserError(f"--subset {p}: no such file")
    with open(p, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                yield p, n, json.loads(line)
            except json.JSONDecodeError as exc:
                raise UserError(f"{p} line {n}: not JSON ({exc.msg})") from None


def read_subset(path: str | os.PathLike) -> list[dict]:
    """The rows of a TRL conversational prompt-completion JSONL file; errors name line and field."""
    p, rows = Path(path), []
    for p, n, row in jsonl_lines(path):
        for field, role in (("prompt", None), ("completion", "assistant")):
            msgs = row.get(field) if isinstance(row, dict) else None
            if not isinstance(msgs, list) or not msgs or not all(
                    isinstance(m, dict) and isinstance(m.get("content"), str) and isinstance(m.get("role"), str)
                    for m in msgs):
                raise UserError(f"{p} line {n}: field '{field}' must be a list of "
                                "{\"role\", \"content\"} messages")
            if role and msgs[-1]["role"] != role:
                raise UserError(f"{p} line {n}: field '{field}' must end with an {role} message")
        rows.append({"prompt": row["prompt"], "completion": row["completion"]})
    if not rows:
        raise UserError(f"--subset {p}: no examples")
    return rows


def tokenize(rows: list[dict], tokenizer, max_length: int) -> tuple[list[dict], dict]:
    """input_ids and labels per example: labels are IGNORE (-100) on the prompt's tokens (chat
    template with the generation prompt), the token ids on the completion's. Sequences longer
    than max_length are cut there; an example whose prompt alone fills the cap is dropped.

    Returns (examples, stats) with stats n_examples, n_cut, share_cut, n_dropped, n_tokens,
    n_completion_tokens.
    """
    out, n_cut, n_dropped, n_tokens, n_comp = [], 0, 0, 0, 0
    for row in rows:
        prompt = tokenizer.apply_chat_template(row["prompt"], add_generation_prompt=True, tokenize=True,
                                               return_dict=False)
        full = tokenizer.apply_chat_template(row["prompt"] + row["completion"], tokenize=True, return_dict=False)
        if full[:len(prompt)] == prompt and len(full) > len(prompt):
            completion = full[len(prompt):]
        else:   # a template that renders the turns differently: the completion's text and EOS
            text = "".join(m["content"] for m in row["completion"])
            completion = tokenizer(text, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
        ids = list(prompt) + list(completion)
        if len(ids) > max_length:
            n_cut += 1
            ids = ids[:max_length]
        if len(prompt) >= len(ids):
            n_dropped += 1
            continue
        labels = [IGNORE] * len(prompt) + ids[len(prompt):]
        out.append({"input_ids": ids, "labels": labels})
        n_tokens += len(ids)
        n_comp += len(ids) - len(prompt)
    stats = {"n_examples": len(rows), "n_cut": n_cut, "share_cut": n_cut / len(rows) if rows else 0.0,
             "n_dropped": n_dropped, "n_tokens": n_tokens, "n_completion_tokens": n_comp}
    return out, stats


def split_eval(examples: list[dict], share: float, seed: int) -> tuple[list[dict], list[dict]]:
    """(train, eval): a seeded share (at least one example when share > 0 and there are >= 2)."""
    n = len(examples)
    n_eval = 0 if share <= 0 or n < 2 else max(1, int(round(share * n)))
    order = np.random.default_rng([seed, 5]).permutation(n)
    held = set(order[:n_eval].tolist())
    return ([e for i, e in enumerate(examples) if i not in held], [examples[i] for i in sorted(held)])
