"""Downstream evaluation (`judgeaudit evaluate`): answer a pool's held-out prompts with each trained
adapter and with the base model (batched greedy generation, left padding), then judge every answer
against the prompt's reference-top answer in both orders with the paper's comparative format
(`tournament`), through the judge providers and the runner's retries. One outcome per (condition,
seed, prompt, evaluation judge): 1 wins both orders, 0 loses both, 0.5 otherwise; null when a
verdict did not parse (or the call failed), and a re-run asks again for failed calls only.

torch, transformers and peft are imported inside the functions that need them.

A training run's folder holds config.json (`base`; the condition comes from `condition` or from
the subset record: 'JUDGE/FORMAT@RATE' (with '+expected' for expected scores, '~constrained'
for constrained decoding), 'POLICY@RATE' or 'full'; the seed from
hyper_parameters.seed) and the adapter. The base model is condition 'base', seed 0 (with several
bases: 'base:NAME').
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from ingest import UserError

MARKDOWN = re.compile(r"^\s{0,3}#{1,6}\s|^\s*(?:[-*+]|\d+[.)])\s+\S|\*\*[^*\n]+\*\*|__[^_\n]+__|^\s*```"
                      r"|^\s*\|.*\|\s*$|\[[^\]\n]+\]\([^)\n]+\)", re.MULTILINE)
FORMAT = "tournament"


def has_markdown(text: str) -> bool:
    """Headings, list items, bold, code fences, table rows or links."""
    return bool(MARKDOWN.search(text or ""))


def outcome(value_ab: float | None, value_ba: float | None) -> float | None:
    """The student's answer was Response A in the first call and Response B in the second; margins
    favour Response A. 1 if it wins both orders, 0 if it loses both, 0.5 otherwise; None unless
    both parsed."""
    if value_ab is None or value_ba is None:
        return None
    if value_ab > 0 and value_ba < 0:
        return 1.0
    if value_ab < 0 and value_ba > 0:
        return 0.0
    return 0.5


# pragma: no mutate start (make mutate: orchestration, tested with the model by the slow tests)
@dataclass
class EvalRequest:
    runs: list[str]
    pool: str
    judges: list[str]
    db: str | os.PathLike | None = None
    study: str | None = None
    max_new_tokens: int = 256
    batch_size: int = 8
    heldout_share: float = 0.1
    heldout_seed: int = 0
    max_prompts: int | None = None
    concurrency: int = 8
    timeout: float = 60.0
    max_retries: int = 4
    api_key_env: str | None = None
    flush_every: int = 64

    @property
    def study_name(self) -> str:
        return self.study or self.pool

    def check(self) -> None:
        if self.max_new_tokens < 1 or self.batch_size < 1 or self.concurrency < 1:
            raise UserError("--max-new-tokens, --batch-size and --concurrency must be at least 1")
        if not 0 < self.heldout_share < 1:
            raise UserError("--heldout-share must be in (0, 1)")
        if self.max_prompts is not None and self.max_prompts < 1:
            raise UserError("--max-prompts must be at least 1")
        if not self.judges:
            raise UserError("--judge: at least one evaluation judge")

    def config(self) -> dict:
        return {"runs": self.runs, "pool": self.pool, "judges": self.judges, "study": self.study_name,
                "max_new_tokens": self.max_new_tokens, "batch_size": self.batch_size,
                "heldout_share": self.heldout_share, "heldout_seed": self.heldout_seed,
                "max_prompts": self.max_prompts}


@dataclass
class Condition:
    name: str
    seed: int
    base: str
    adapter: Path | None = None         # None: the base model itself
    run: str | None = None
    heldout: dict | None = None         # the training run's held-out rule (config.json's subset.heldout)


# -- which adapters --------------------------------------------------------------------------------

def _folder_of(db, ref: str) -> Path:
    """A run id (the runs table) or a folder."""
    if ref.isdigit():
        from ingest.runs import get_run
        row = get_run(db, int(ref))
        if row is None:
            raise UserError(f"--runs {ref}: no such run (see `judgeaudit runs`)")
        if row["kind"] != "train":
            raise UserError(f"--runs {ref}: run {ref} is a {row['kind']} run, not a training run")
        config = row.get("config") or {}
        argv = [str(a) for a in config.get("argv") or []]
        options = [config.get("out"), argv[argv.index("--out") + 1] if "--out" in argv[:-1] else None, row["out_dir"]]
        for option in options:
            if option and (Path(option) / "adapter_config.json").is_file():
                return Path(option)
        raise UserError(f"--runs {ref}: run {ref} ({row['status']}) has no saved adapter in "
                        f"{', '.join(str(o) for o in options if o)}")
    path = Path(ref).expanduser()
    if not path.is_dir():
        raise UserError(f"--runs {ref}: neither a run id nor a run folder")
    return path


# pragma: no mutate end
def condition_name(config: dict) -> str:
    if config.get("condition"):
        return str(config["condition"])
    subset = config.get("subset") or {}
    policy, rate = subset.get("policy"), subset.get("rate")
    if policy == "full":
        return "full"
    if policy in (None, "judge") and subset.get("judge") and subset.get("format"):
        cell = f"{subset['judge']}/{subset['format']}"
        cell += "+expected" if subset.get("score") == "expected" else ""
        cell += f"~{subset['decoding']}" if subset.get("decoding") not in (None, "greedy") else ""
        return f"{cell}@{rate:g}" if rate is not None else cell
    if policy:
        return f"{policy}@{rate:g}" if rate is not None else str(policy)
    return Path(subset.get("path") or "adapter").stem


# pragma: no mutate start (make mutate: database lookups, tested with the model by the slow tests)
def resolve_runs(db, refs: list[str]) -> list[Condition]:
    """The adapters to evaluate, then one base condition per base model."""
    conds, seen = [], {}
    for ref in refs:
        folder = _folder_of(db, ref)
        where = folder / "config.json"
        if not where.is_file() or not (folder / "adapter_config.json").is_file():
            raise UserError(f"--runs {ref}: {folder} lacks config.json or adapter_config.json (not a finished "
                            "training run)")
        try:
            config = json.loads(where.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise UserError(f"{where}: not JSON ({exc.msg})") from None
        if not config.get("base"):
            raise UserError(f"{where}, field 'base': the base model is not recorded")
        seed = config.get("seed", (config.get("hyper_parameters") or {}).get("seed", 0))
        rule = (config.get("subset") or {}).get("heldout") or config.get("heldout")
        cond = Condition(condition_name(config), int(seed), str(config["base"]), folder, ref,
                         dict(rule) if isinstance(rule, dict) else None)
        key = (cond.name, cond.seed)
        if key in seen:
            raise UserError(f"--runs: {ref} and {seen[key]} are both condition '{cond.name}' with seed {cond.seed}")
        seen[key] = ref
        conds.append(cond)
    bases = sorted({c.base for c in conds})
    for b in bases:
        conds.append(Condition("base" if len(bases) == 1 else f"base:{b}", 0, b))
    return conds


# -- the held-out rule ----------------------------------------------------------------------------

# pragma: no mutate end
def rule_key(rule: dict) -> tuple:
    """What decides the held-out prompts: ('marked',) or ('share', share, seed); n is left out."""
    if rule.get("rule") in ("split", "marked"):
        return ("marked",)
    return ("share", float(rule.get("share")), int(rule.get("seed", 0)))


def check_heldout(conds: list[Condition], rule: dict) -> list[str]:
    """Refuse (UserError naming the run and both rules) a training run whose held-out rule differs
    from the evaluation's, else the evaluation could score prompts the run was trained on.
    A run folder without a recorded rule was curated by train.heldout's defaults (marked prompts,
    else SHARE and SEED): those are assumed, and a note says so. Returns the notes."""
    from .heldout import SEED, SHARE
    notes = []
    for cond in conds:
        if cond.adapter is None:
            continue
        run_rule = cond.heldout
        if run_rule is None:
            # curation picks the marked prompts whenever the pool marks some, else the default share
            run_rule = rule if rule.get("rule") == "split" else {"rule": "share", "share": SHARE, "seed": SEED}
            notes.append(f"run {cond.run}: config.json records no held-out rule; assumed curation's default "
                         f"(marked prompts, else share {SHARE} with seed {SEED})")
        if rule_key(run_rule) != rule_key(rule):
            raise UserError(f"--runs {cond.run}: trained with held-out rule {_rule_text(run_rule)} but this "
                            f"evaluation uses {_rule_text(rule)}; it could score prompts the run was trained on "
                            "(use the run's rule: --heldout-share / --heldout-seed)")
    return notes


def _rule_text(rule: dict) -> str:
    key = rule_key(rule)
    return "'marked prompts'" if key == ("marked",) else f"'share {key[1]:g}, seed {key[2]}'"


# -- generation ------------------------------------------------------------------------------------

# pragma: no mutate start (make mutate: generation and judging, tested with the model by the slow tests)
def _generate_all(req: EvalRequest, db: Path, study_id: int, conds: list[Condition], items: pl.DataFrame,
                  run_id, cancelled, progress) -> int:
    """Generate what is not stored yet, one base model loaded at a time; returns answers made."""
    from ingest.store import insert_generations
    from audit import stored_generations
    done = stored_generations(db, study_id)
    done_keys = set(zip(done["condition"].to_list(), done["seed"].to_list(), done["prompt_idx"].to_list()))
    todo = {id(c): [r for r in items.iter_rows(named=True) if (c.name, c.seed, r["prompt_idx"]) not in done_keys]
            for c in conds}
    total, made = sum(len(v) for v in todo.values()), 0
    if total == 0:
        return 0
    for base in sorted({c.base for c in conds if todo[id(c)]}):
        from ._model import generate, load_base, use_adapter
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


# -- judging ---------------------------------------------------------------------------------------

@dataclass
class _Judging:
    """What the judge workers share: calls to make and finished rows waiting to be written."""
    calls: list[dict]
    rows: list[dict] = field(default_factory=list)
    done: int = 0


async def _judge_one(spec_str: str, spec, req: EvalRequest, db: Path, calls: list[dict], texts: dict,
                     flush, cancelled) -> str:
    from ingest import redact
    from ingest.scoring.formats import BUILTIN
    from ingest.scoring.judges import CallHints
    from ingest.scoring import Caller, ScoreRequest, decoding_settings
    fmt = BUILTIN[FORMAT]
    sreq = ScoreRequest(pool=req.pool, judge=spec_str, formats=[FORMAT], db=db, timeout=req.timeout,
                        max_retries=req.max_retries, api_key_env=req.api_key_env, logprobs=False)
    caller = Caller(sreq, spec, {FORMAT: fmt}, decoding_settings(sreq, spec))
    state = _Judging(list(calls))
    stop = asyncio.Event()

    async def both_orders(judge, call) -> dict:
        row = {k: call[k] for k in ("condition", "seed", "prompt_idx", "judge_id")}
        for order, a, b in (("ab", "student", "reference"), ("ba", "reference", "student")):
            if order in call.get("kept", {}):
                row.update(call["kept"][order])
                continue
            c = {"format": FORMAT, "prompt_idx": call["key"], "a_idx": (call["key"], a), "b_idx": (call["key"], b)}
            hints = CallHints(format_name=FORMAT, kind="comparative",
                              key=f"eval|{call['condition']}|{call['seed']}|{call['prompt_idx']}|{order}|{call['digest']}")
            reply, error, _ = await caller.call(judge, c, texts, hints)
            parsed = fmt.parse(reply.text) if reply is not None else None
            row.update({f"raw_{order}": reply.text if reply is not None else None,
                        f"value_{order}": parsed.value if parsed is not None else None,
                        f"status_{order}": parsed.status if parsed is not None else "failed",
                        f"error_{order}": redact(error) if error else None})
        row["outcome"] = outcome(row["value_ab"], row["value_ba"])
        return row

    async def worker(judge) -> None:
        while state.calls and not stop.is_set():
            row = await both_orders(judge, state.calls.pop())
            state.rows.append(row)
            state.done += 1
            if len(state.rows) >= req.flush_every:
                rows, state.rows = state.rows, []
                await asyncio.to_thread(flush, rows, state.done)
            if cancelled():
                stop.set()

    judges = [await asyncio.to_thread(spec.factory)] if spec.shared else \
        [spec.factory() for _ in range(max(1, min(req.concurrency, len(calls))))]
    try:
        await asyncio.gather(*(worker(j) for j in judges))
    finally:
        for j in judges:
            await j.aclose()
    await asyncio.to_thread(flush, state.rows, state.done)
    return "cancelled" if stop.is_set() else "finished"


def _judge_all(req: EvalRequest, db: Path, study_id: int, specs: list, conds: list[Condition],
               items: pl.DataFrame, run_id, cancelled, progress) -> dict:
    import hashlib
    from ingest.scoring import ensure_spec_judge
    from ingest.store import insert_evaluations
    from audit import judged, stored_generations
    from ingest.scoring import decoding_settings, ScoreRequest
    gens = stored_generations(db, study_id).filter(
        pl.struct("condition", "seed").is_in(pl.DataFrame({"condition": [c.name for c in conds],
                                                           "seed": [c.seed for c in conds]}).to_struct().implode())
        & pl.col("prompt_idx").is_in(items["prompt_idx"].implode()))
    prompt_text = dict(zip(items["prompt_idx"].to_list(), items["prompt"].to_list()))
    ref_text = dict(zip(items["prompt_idx"].to_list(), items["ref_answer"].to_list()))
    summary = {"judged": 0, "unparsed": 0, "status": "finished"}
    for spec_str, spec in specs:
        sreq = ScoreRequest(pool=req.pool, judge=spec_str, formats=[FORMAT], logprobs=False)
        jid = ensure_spec_judge(db, spec, decoding_settings(sreq, spec))
        stored = judged(db, study_id, jid)
        done = stored.filter((pl.col("status_ab") != "failed") & (pl.col("status_ba") != "failed"))
        todo = gens.join(done, on=["condition", "seed", "prompt_idx"], how="anti")
        # an order whose call succeeded is kept: only the failed order is asked again
        kept = {(r["condition"], r["seed"], r["prompt_idx"]): {
                    order: {f"{f}_{order}": r[f"{f}_{order}"] for f in ("raw", "value", "status", "error")}
                    for order in ("ab", "ba") if r[f"status_{order}"] != "failed"}
                for r in stored.iter_rows(named=True)}
        calls, texts = [], {"prompt": {}, "response": {}}
        for r in todo.iter_rows(named=True):
            key = f"{r['condition']}|{r['seed']}|{r['prompt_idx']}"
            texts["prompt"][key] = prompt_text[r["prompt_idx"]]
            texts["response"][(key, "student")] = r["answer"]
            texts["response"][(key, "reference")] = ref_text[r["prompt_idx"]]
            calls.append({"condition": r["condition"], "seed": r["seed"], "prompt_idx": r["prompt_idx"],
                          "judge_id": jid, "key": key,
                          "kept": kept.get((r["condition"], r["seed"], r["prompt_idx"]), {}),
                          "digest": hashlib.blake2b(r["answer"].encode(), digest_size=6).hexdigest()})
        calls.reverse()            # workers pop from the end: judge in stored order

        def flush(rows, done, spec=spec, n=len(calls)):
            insert_evaluations(db, study_id, rows, run_id)
            summary["judged"] += len(rows)
            summary["unparsed"] += sum(r["outcome"] is None for r in rows)
            progress({"phase": "judging", "judge": spec.name, "done": done, "total": n})

        if calls:
            status = asyncio.run(_judge_one(spec_str, spec, req, db, calls, texts, flush, cancelled))
            if status == "cancelled":
                summary["status"] = "cancelled"
                break
    return summary


# -- the whole evaluation ----------------------------------------------------------------------------

def evaluate(req: EvalRequest, run=None) -> dict:
    """Generate, then judge; `run` is the background run (ingest.runs.Run) or None. Returns a summary."""
    from ingest.store import db_path, ensure_current
    from ingest.store import ensure_study
    from audit import eval_prompts
    from ingest.scoring.formats import BUILTIN
    from ingest.scoring.judges import parse_judge
    from .heldout import heldout_prompt_ids
    req.check()
    db = db_path(req.db).resolve()
    ensure_current(db)
    cancelled = run.cancelled if run is not None else (lambda: False)
    progress = run.progress if run is not None else (lambda record: None)
    run_id = run.id if run is not None else None
    specs = [(s, parse_judge(s, {FORMAT: BUILTIN[FORMAT]}, api_key_env=req.api_key_env, timeout=req.timeout))
             for s in req.judges]
    if len({spec.name for _, spec in specs}) < len(specs):
        raise UserError("--judge: two evaluation judges with the same name")
    conds = resolve_runs(db, req.runs)
    prompts = eval_prompts(db, req.pool)
    ids, rule = heldout_prompt_ids(prompts, req.heldout_share, req.heldout_seed)
    heldout_notes = check_heldout(conds, rule)
    items = prompts.filter(pl.col("prompt_id").is_in(ids)).sort("prompt_idx")
    no_ref = items.filter(pl.col("ref_idx").is_null()).height
    items = items.filter(pl.col("ref_idx").is_not_null())
    if req.max_prompts:
        items = items.head(req.max_prompts)
    if items.height == 0:
        raise UserError(f"pool '{req.pool}': no held-out prompt has a reference-top answer to judge against")
    study_id = ensure_study(db, req.study_name, req.pool, rule)
    started = time.monotonic()
    made = _generate_all(req, db, study_id, conds, items, run_id, cancelled, progress)
    gen_s = time.monotonic() - started
    summary = {"study": req.study_name, "pool": req.pool, "heldout": rule, "heldout_notes": heldout_notes,
               "n_prompts": items.height,
               "n_without_reference": no_ref, "conditions": [{"condition": c.name, "seed": c.seed, "run": c.run,
                                                              "base": c.base} for c in conds],
               "judges": [spec.name for _, spec in specs], "generated": made, "generation_s": round(gen_s, 2),
               "judged": 0, "unparsed": 0, "status": "cancelled" if cancelled() else "finished"}
    if summary["status"] == "finished":
        started = time.monotonic()
        summary.update(_judge_all(req, db, study_id, specs, conds, items, run_id, cancelled, progress))
        summary["judging_s"] = round(time.monotonic() - started, 2)
    from audit import stored_generations
    summary["generations_stored"] = stored_generations(db, study_id).height
    progress({"phase": "done", **{k: summary[k] for k in ("generated", "judged", "unparsed", "status")}})
    return summary


def export_outcomes(db, study: str, path: str | os.PathLike) -> int:
    """Write the study's outcomes as the JSONL `contrasts --outcomes` reads; returns rows written."""
    from audit import study_outcomes
    frame = study_outcomes(db, study)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for row in frame.iter_rows(named=True):
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return frame.height
# pragma: no mutate end
