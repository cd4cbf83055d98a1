"""Generation: each condition answers the held-out prompts (greedy, batched, by train/_model.py),
one base model loaded at a time; every answer is stored with its length, whether it uses
markdown, and whether it was cut at max_new_tokens."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl

from audit import stored_generations
from ingest.store import insert_generations

from ._conditions import Condition
from ._model import generate, load_base, use_adapter
from ._request import EvalRequest

MARKDOWN = re.compile(r"^\s{0,3}#{1,6}\s|^\s*(?:[-*+]|\d+[.)])\s+\S|\*\*[^*\n]+\*\*|__[^_\n]+__|^\s*```"
                      r"|^\s*\|.*\|\s*$|\[[^\]\n]+\]\([^)\n]+\)", re.MULTILINE)


def has_markdown(text: str) -> bool:
    """Headings, list items, bold, code fences, table rows or links."""
    return bool(MARKDOWN.search(text or ""))


# pragma: no mutate start (make mutate: generation, tested with the model by the slow tests)
def generate_all(req: EvalRequest, db: Path, study_id: int, conds: list[Condition], items: pl.DataFrame,
                 run_id, cancelled, progress) -> int:
    """Generate what is not stored yet, one base model loaded at a time; returns answers made."""
    done = stored_generations(db, study_id)
    done_keys = set(zip(done["condition"].to_list(), done["seed"].to_list(), done["prompt_idx"].to_list()))
    todo = {id(c): [r for r in items.iter_rows(named=True) if (c.name, c.seed, r["prompt_idx"]) not in done_keys]
            for c in conds}
    total, made = sum(len(v) for v in todo.values()), 0
    if total == 0:
        return 0
    for base in sorted({c.base for c in conds if todo[id(c)]}):
        progress({"phase": "loading", "base": base, "done": made, "total": total})
        model, tokenizer = load_base(base)
        peft_model = None
        # the base model first: attaching an adapter changes the loaded model in place
        group = sorted((c for c in conds if c.base == base and todo[id(c)]), key=lambda c: c.adapter is not None)
        for n, cond in enumerate(group):
            lm = model
            if cond.adapter is not None:
                peft_model = use_adapter(model, peft_model, cond.adapter, f"c{n}")
                lm = peft_model
            rows = todo[id(cond)]

            def store(batch, answers, rows=rows, cond=cond):
                nonlocal made
                records = [{"condition": cond.name, "seed": cond.seed, "train_run": cond.run, "base_model": base,
                            "prompt_idx": rows[i]["prompt_idx"], "answer": a["answer"], "answer_len": len(a["answer"]),
                            "ref_idx": rows[i]["ref_idx"], "ref_len": len(rows[i]["ref_answer"]),
                            "markdown": has_markdown(a["answer"]), "tokens_out": a["tokens_out"],
                            "truncated": a["truncated"]} for i, a in zip(batch, answers)]
                insert_generations(db, study_id, records, run_id)
                made += len(records)
                progress({"phase": "generating", "condition": cond.name, "seed": cond.seed, "done": made,
                          "total": total})
                return not cancelled()

            generate(lm, tokenizer, [r["prompt"] for r in rows], req.max_new_tokens, req.batch_size, store)
            if cancelled():
                return made
        del model, peft_model
    return made


# pragma: no mutate end
