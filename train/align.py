"""`judgeaudit align`: a judge's instructions and demonstrations chosen on the human labels, as a
background run (docs/command-line.md#judgeaudit-align, docs/metrics.md#aligning-a-judge-align).

The run reads the cell's human-labelled items, splits off the evaluation prompts (the pool's held-out
prompts and a seeded share of the others) before anything is asked, searches on the training prompts
only (train/_align_search.py), then asks the judge the evaluation items as it was (the format's
built-in wording, no demonstrations) and as the winner, and reports the gain with its interval. The
winner is stored as a judge of its own: its identity binds the instructions and demonstrations, its
verdicts on the evaluation items stand in a cell run whose template is the winner's prompt (the
original's, where missing, beside them), so Drift and the Judges leaderboard read both.

Every answer is appended to a cache file named by the cell (pool, judge, its identity, format,
decoding), each under its prompt's hash and call, so a run cancelled or killed and started again asks
nothing twice and makes the same choices, and another search of the cell reuses what was asked.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import tomllib
from collections import Counter
from pathlib import Path
from urllib.parse import urlencode

import numpy as np
import polars as pl

import audit
from ingest import UserError
from ingest.runs import Cancelled, run_key, running, runs_dir
from ingest.scoring import ROW_SCHEMA, Caller, ScoreRequest, decoding_settings, ensure_spec_judge, identity_decoding
from ingest.scoring.formats import BUILTIN, base_instructions, instructed, stored_formats
from ingest.scoring.judges import CallHints, check_server, parse_judge
from ingest.store import CellRunDescription, judge_identity, reading, writing

from . import _align_gepa as G
from . import _align_search as S
from .subsets import pool_heldout

OPTIMIZERS = ("search", "gepa")


def instruction_variants(path: str | Path | None) -> list[dict]:
    """The wording variants a TOML file gives: `[[instructions]]` tables with `name` and `text`."""
    if path is None:
        return []
    p = Path(path)
    if not p.is_file():
        raise UserError(f"--instructions {p}: no such file")
    try:
        doc = tomllib.loads(p.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{p}: invalid TOML: {exc}") from None
    out = []
    for k, row in enumerate(doc.get("instructions", []), 1):
        if not isinstance(row, dict) or not isinstance(row.get("text"), str) or not row["text"].strip():
            raise UserError(f"{p}: instructions[{k}].text: required, a non-empty string")
        out.append({"name": str(row.get("name") or f"variant {k}"), "text": row["text"].strip()})
    if not out:
        raise UserError(f"{p}: no [[instructions]] table with a text")
    return out


def judge_spec(name: str, row: tuple, identity: dict, formats: dict, api_key_env: str | None):
    """The client spec of a stored judge, made again from what its row and identity record."""
    _, _, provider, model, endpoint = row
    if provider == "fake":
        spec = f"fake:{model.removeprefix('fake-')}?{urlencode(identity.get('params') or {})}"
    elif provider == "local":
        spec = "local:smollm2"
    elif provider == "openai" and endpoint and "," not in endpoint:
        spec = f"openai:{model}@{endpoint}"
    else:
        raise UserError(f"--judge {name}: a judge of provider '{provider}' cannot be asked again from this "
                        "database (imported verdicts, a jury or several endpoints); align a judge that was scored")
    return parse_judge(spec, formats, name=name, api_key_env=api_key_env)


class _Asker:
    """Asks the judge items under a prompt, each answer cached by (template, call) in `cache`."""

    def __init__(self, spec, fmt, settings: dict, texts: dict, refs: dict, cache: Path, concurrency: int):
        self.spec, self.fmt, self.settings, self.texts, self.refs = spec, fmt, settings, texts, refs
        self.cache_path, self.concurrency = cache, concurrency
        self.cache: dict[str, dict] = {}
        if cache.is_file():
            for line in cache.read_text(encoding="utf-8").splitlines():
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:
                    break           # a line cut short by a kill: that call was in flight
                self.cache[row["id"]] = row
        self.req = ScoreRequest(pool="", judge="", formats=[fmt.name])
        self.made = 0

    def ask(self, template_fmt, items: list[dict]) -> list[dict]:
        """The answers (raw, answer, value, status, error, latency_ms, tokens_in, tokens_out) of the items."""
        digest = hashlib.sha256(template_fmt.template.encode()).hexdigest()[:16]
        ids = [f"{digest}|{i['prompt_idx']}|{i['a_idx']}|{i['b_idx']}" for i in items]
        todo = [(cid, i) for cid, i in zip(ids, items) if cid not in self.cache]
        if todo:
            rows = asyncio.run(self._make(template_fmt, todo))
            with open(self.cache_path, "a", encoding="utf-8") as fh:
                for row in rows:
                    fh.write(json.dumps(row) + "\n")
                    self.cache[row["id"]] = row
            self.made += len(rows)
        return [self.cache[cid] for cid in ids]

    async def _make(self, template_fmt, todo: list[tuple[str, dict]]) -> list[dict]:
        caller = Caller(self.req, self.spec, {self.fmt.name: template_fmt}, self.settings)
        if self.spec.shared:            # the in-process model: loaded once for the whole run
            self.shared = getattr(self, "shared", None) or self.spec.factory()
        judge, gate = self.shared if self.spec.shared else self.spec.factory(), asyncio.Semaphore(self.concurrency)

        async def one(cid: str, item: dict) -> dict:
            call = {"format": self.fmt.name, "prompt_idx": item["prompt_idx"], "a_idx": item["a_idx"],
                    "b_idx": item["b_idx"]}
            hints = CallHints(format_name=self.fmt.name, kind=self.fmt.kind, reference_a=self.refs.get(item["a_idx"]),
                              reference_b=self.refs.get(item["b_idx"]),
                              key=f"{self.fmt.name}|{item['prompt_idx']}|{item['a_idx']}|{item['b_idx']}|0", sample=0,
                              texts={"prompt": self.texts["prompt"][item["prompt_idx"]],
                                     "a": self.texts["response"][item["a_idx"]],
                                     "b": self.texts["response"].get(item["b_idx"])})
            async with gate:
                reply, error, _ = await caller.call(judge, call, self.texts, hints)
            if reply is None:
                return {"id": cid, "raw": None, "answer": None, "value": None, "status": "failed", "error": error,
                        "latency_ms": None, "tokens_in": None, "tokens_out": None}
            parsed = self.fmt.parse(reply.text)
            return {"id": cid, "raw": reply.text, "answer": parsed.answer, "value": parsed.value,
                    "status": parsed.status, "error": None, "latency_ms": reply.latency_ms,
                    "tokens_in": reply.tokens_in, "tokens_out": reply.tokens_out}
        try:
            return list(await asyncio.gather(*(one(cid, i) for cid, i in todo)))
        finally:
            if not self.spec.shared:        # a client per event loop (each ask runs its own)
                await judge.aclose()

    def agreements(self, template_fmt, items: list[dict]) -> np.ndarray:
        """Each item's agreement with its human value under this prompt."""
        out = []
        for item, row in zip(items, self.ask(template_fmt, items)):
            v = row["value"]
            d = None if v is None else S.judge_decision(
                self.fmt.kind, self.fmt.normalise(v) if self.fmt.kind == "pointwise" else v)
            out.append(S.agreement(d, item["y"]))
        return np.asarray(out)


def _items(db, pool: str, kind: str, cands: pl.DataFrame, prompt_ids: dict, cand_ids: dict) -> list[dict]:
    items = audit.human_items(db, pool, kind).to_dicts()
    if not items:
        what = "accept/reject labels of candidates" if kind == "pointwise" else "human labels of pairs"
        raise UserError(f"pool '{pool}' has no {what}: a {kind} format is aligned on those "
                        "(import them with `judgeaudit import-labels`, or label on the Label page)")
    for i in items:
        i["prompt_id"] = prompt_ids[i["prompt_idx"]]
        i["a_id"], i["b_id"] = cand_ids[i["a_idx"]], cand_ids.get(i["b_idx"])
    return items


def _demo(fmt, item: dict, texts: dict) -> dict:
    answer = S.demonstration_answer(fmt.answer_values(), fmt.value_lo, fmt.value_hi, item["y"])
    out = {"prompt": texts["prompt"][item["prompt_idx"]], "answer": answer}
    if fmt.kind == "pointwise":
        return {**out, "response": texts["response"][item["a_idx"]]}
    return {**out, "a": texts["response"][item["a_idx"]], "b": texts["response"][item["b_idx"]]}


def _demo_record(fmt, item: dict, answer: str) -> dict:
    if fmt.kind == "pointwise":
        return {"prompt_id": item["prompt_id"], "candidate_id": item["a_id"], "label": answer}
    return {"prompt_id": item["prompt_id"], "a_id": item["a_id"], "b_id": item["b_id"], "label": answer}


def _reference(fmt, items: list[dict], before: list[dict], after: list[dict], cands: pl.DataFrame) -> dict | None:
    """The format's own tau_a and top1 against the references on the evaluation items, before and
    after (audit.reference_agreement); None when the pool holds no reference or the format is anchored."""
    refs = {k: v for k, v in zip(cands["cand_idx"].to_list(), cands["reference"].to_list()) if v is not None}
    if not refs or fmt.pairing == "anchored":
        return None
    prompt_of = dict(zip(cands["cand_idx"].to_list(), cands["prompt_idx"].to_list()))
    out = {}
    for side, answers in (("before", before), ("after", after)):
        calls = [{"a_idx": i["a_idx"], "b_idx": i["b_idx"], "value": a["value"]} for i, a in zip(items, answers)]
        out[side] = audit.reference_agreement(fmt.pairing, fmt.value_lo, fmt.value_hi, calls, prompt_of, refs)
    return {m: {"before": out["before"][m], "after": out["after"][m]} for m in ("tau_a", "top1")} | \
        {"n_prompts": {"before": out["before"]["n_prompts"], "after": out["after"]["n_prompts"]}}


def _evolve(run, fmt, asker, texts: dict, seed_wording: str, minibatch: list[dict], reflector, calls: int,
            seed: int) -> dict:
    """GEPA's best wording on the minibatch (train/_align_gepa.py), the judge asked through `asker`."""
    def prompt(wording):
        return instructed(fmt, wording if wording and wording != seed_wording else None)

    def ask(wording, items):
        if run.cancelled():
            raise Cancelled(f"run {run.id} was cancelled")
        out = asker.ask(prompt(wording), items)
        run.progress({"phase": "gepa", "calls": asker.made})
        return out

    def show(item: dict) -> str:
        head = f"Prompt: {texts['prompt'][item['prompt_idx']]}\n"
        if fmt.kind == "pointwise":
            return head + f"Response: {texts['response'][item['a_idx']]}"
        return head + f"Response A: {texts['response'][item['a_idx']]}\nResponse B: {texts['response'][item['b_idx']]}"

    def verdict(y: float) -> str:
        return S.demonstration_answer(fmt.answer_values(), fmt.value_lo, fmt.value_hi, y)

    adapter = G.JudgeAdapter(ask=ask, agree=lambda wording, items: asker.agreements(prompt(wording), items),
                             show=show, verdict=verdict)
    return G.evolve(seed_wording, minibatch, adapter, reflector, calls, seed,
                    run.out_dir / "gepa.log")


def align(db, pool: str, judge: str, fmt_name: str, decoding: str = "greedy", demonstrations: int = 2,
          budget: int = 200, held_out: float = 0.3, instructions_file=None, optimizer: str = "search", seed: int = 0,
          api_key_env: str | None = None, concurrency: int = 4, constraint: str | None = None,
          reflection: str | None = None, reflection_api_key_env: str | None = None,
          reflection_max_tokens: int = 1000) -> dict:
    """Align the judge (the module's doc) as a background run keyed by pool and judge; the document
    `align --json` prints. optimizer 'gepa': GEPA evolves the wording first (train/_align_gepa.py),
    with `reflection` (openai:MODEL@BASE_URL) as its reflection model."""
    if optimizer not in OPTIMIZERS:
        raise UserError(f"--optimizer: one of {', '.join(OPTIMIZERS)}, not {optimizer!r}")
    if not 0 <= held_out < 1:
        raise UserError(f"--held-out {held_out}: a share in [0, 1)")
    if demonstrations < 0 or budget < 1:
        raise UserError("--demonstrations must be 0 or more and --budget at least 1")
    if constraint is not None and decoding != "constrained":
        raise UserError("--constraint: the server's mechanism, for --decoding constrained with an openai: judge")
    variants = instruction_variants(instructions_file)
    reflector = None
    if optimizer == "gepa":
        G._gepa()
        reflector = G.reflection_model(reflection, reflection_api_key_env, reflection_max_tokens)
    elif reflection is not None:
        raise UserError("--reflection: the reflection model of --optimizer gepa")
    with reading(db) as unit:
        pid = unit.pool_id(pool)
        formats = {**stored_formats(unit.format_rows()), **BUILTIN}
        rows = {r[1]: r for r in unit.judges().values()}
        cands, prompts = unit.candidate_texts(pid), unit.prompt_texts(pid)
        prompt_ids = dict(zip(*unit.prompt_ids(pid).select("prompt_idx", "prompt_id").to_dict(as_series=False).values()))
        cand_ids = dict(zip(*unit.candidate_ids(pid).select("cand_idx", "candidate_id").to_dict(as_series=False).values()))
    if fmt_name not in formats:
        raise UserError(f"--format {fmt_name}: unknown format (known: {', '.join(sorted(formats))})")
    fmt = formats[fmt_name]
    if judge not in rows and ":" in judge:      # a SPEC: the judge it names, stored under its name first
        spec = parse_judge(judge, {fmt_name: fmt}, api_key_env=api_key_env)
        settings = decoding_settings(ScoreRequest(pool=pool, judge="", formats=[fmt_name], decoding=decoding,
                                                  constraint=constraint), spec)
        ensure_spec_judge(db, spec, settings)
        judge = spec.name
        with reading(db) as unit:
            rows = {r[1]: r for r in unit.judges().values()}
    if judge not in rows:
        raise UserError(f"--judge {judge}: no such judge in this database (give its name, or a SPEC such as "
                        "local:smollm2)")
    with reading(db) as unit:
        identity = unit.stored_identity(rows[judge][0])
        if constraint is None and decoding == "constrained" and rows[judge][2] == "openai":
            constraint = unit.cell_constraint(pid, rows[judge][0], fmt_name)    # as the cell was scored
    spec = judge_spec(judge, rows[judge], identity, {fmt_name: fmt}, api_key_env)
    if constraint is not None and spec.provider != "openai":
        raise UserError("--constraint: the server's mechanism, for --decoding constrained with an openai: judge "
                        "(local: and fake: judges constrain by themselves)")
    settings = decoding_settings(ScoreRequest(pool=pool, judge="", formats=[fmt_name], decoding=decoding,
                                              constraint=constraint), spec)
    if "constraint" in settings:    # one check call: a server that refuses or ignores it is told before the run
        check_server(spec, fmt, settings)
    wordings = [{"name": "built-in", "text": base_instructions(fmt)}, *variants]
    items = _items(db, pool, fmt.kind, cands, prompt_ids, cand_ids)
    held = set(pool_heldout(db, pool)[0].to_list())
    train_p, eval_p = S.split_prompts([i["prompt_idx"] for i in items], held, held_out,
                                      lambda p: hashlib.blake2b(f"align|{seed}|{prompt_ids[p]}".encode()).digest())
    train = [i for i in items if i["prompt_idx"] in train_p]
    evaluate = [i for i in items if i["prompt_idx"] in eval_p]
    if not evaluate or not train:
        raise UserError(f"pool '{pool}': {len(items)} labelled items on {len({i['prompt_idx'] for i in items})} "
                        f"prompts leave {len(train)} to search on and {len(evaluate)} to evaluate on; label more "
                        "items, or change --held-out")
    order = sorted(train_p, key=lambda p: hashlib.blake2b(f"align-mini|{seed}|{prompt_ids[p]}".encode()).digest())
    mini_p = S.minibatch_prompts(order, Counter(i["prompt_idx"] for i in train), budget, demonstrations)
    minibatch = [i for i in train if i["prompt_idx"] in mini_p]
    pool_demos = sorted((i for i in train if i["prompt_idx"] not in mini_p),
                        key=lambda i: hashlib.blake2b(f"align-demo|{seed}|{i['prompt_id']}|{i['a_id']}|{i['b_id']}"
                                                      .encode()).digest())
    if reflector is not None:
        G.check_room(len(minibatch), budget // 2)
    texts = {"prompt": dict(zip(prompts["prompt_idx"].to_list(), prompts["prompt"].to_list())),
             "response": dict(zip(cands["cand_idx"].to_list(), cands["response"].to_list()))}
    known = [v for v in cands["reference"].to_list() if v is not None]
    lo, hi = (min(known), max(known)) if known else (0.0, 1.0)
    refs = {k: ((v - lo) / (hi - lo) if hi > lo else 0.5) for k, v in zip(cands["cand_idx"], cands["reference"])
            if v is not None}
    # the answers depend on the judge and the prompt asked, not on the search's settings: one cache a cell
    request = {"pool": pool, "judge": judge, "format": fmt_name, "decoding": decoding, "identity": identity}
    if "constraint" in settings:
        request["constraint"] = settings["constraint"]["mechanism"]
    key = hashlib.sha256(json.dumps(request, sort_keys=True, default=str).encode()).hexdigest()[:20]
    config = {"judge": judge, "format": fmt_name, "provider": spec.provider, "model": spec.model}
    with running(db, "align", pool=pool, key=run_key("align", pool, judge), config=config) as run:
        cache = runs_dir(db) / "align-cache"
        cache.mkdir(parents=True, exist_ok=True)
        asker = _Asker(spec, fmt, settings, texts, refs, cache / f"{key}.jsonl", concurrency)
        evolved = None
        if reflector is not None:
            evolved = _evolve(run, fmt, asker, texts, wordings[0]["text"], minibatch, reflector, budget // 2, seed)
            if evolved["wording"] not in [w["text"] for w in wordings]:
                wordings.append({"name": "gepa", "text": evolved["wording"]})
        gepa_calls = evolved["metric_calls"] if evolved else 0
        prompt_of = {k: instructed(fmt, w["text"] if k else None) for k, w in enumerate(wordings)}

        def prompt(i: int, demos: list) -> object:
            return instructed(fmt, wordings[i]["text"] if i else None, [_demo(fmt, d, texts) for d in demos]) \
                if demos else prompt_of[i]

        def score(i: int, demos: list, batch: list) -> np.ndarray:
            if run.cancelled():
                raise Cancelled(f"run {run.id} was cancelled")
            out = asker.agreements(prompt(i, demos), batch)
            run.progress({"phase": "search", "calls": asker.made, "budget": budget})
            return out

        found = S.search(score, len(wordings), minibatch, pool_demos, demonstrations, max(budget - gepa_calls, 1))
        found["calls"] += gepa_calls
        run.progress({"phase": "evaluating", "calls": asker.made, "budget": budget})
        before_fmt, after_fmt = prompt_of[0], prompt(found["instruction"], found["demonstrations"])
        before = asker.agreements(before_fmt, evaluate)
        after = asker.agreements(after_fmt, evaluate)
        gain = S.clustered_gain(np.array([i["prompt_idx"] for i in evaluate]), before, after,
                                np.random.default_rng([seed, 38]))
        reference = _reference(fmt, evaluate, asker.ask(before_fmt, evaluate), asker.ask(after_fmt, evaluate), cands)
        demos = [_demo_record(fmt, d, _demo(fmt, d, texts)["answer"]) for d in found["demonstrations"]]
        wording = wordings[found["instruction"]]
        changed = after_fmt.template != before_fmt.template
        new_name = None
        if changed:
            digest = hashlib.sha256(after_fmt.template.encode()).hexdigest()
            new_name = f"{judge}-aligned-{digest[:6]}"
            params = {**(identity.get("params") or {}), "aligned_from": judge, "instructions": wording["text"],
                      "demonstrations": demos, "template_sha256": digest}
            _store(db, pid, run.id, new_name, spec, params, identity_decoding(settings), fmt, after_fmt, decoding,
                   settings, evaluate, asker.ask(after_fmt, evaluate), seed)
        _store(db, pid, run.id, judge, spec, None, None, fmt, before_fmt, decoding, settings, evaluate,
               asker.ask(before_fmt, evaluate), seed, original=rows[judge][0])
        doc = {"pool": pool, "format": fmt_name, "decoding": decoding, "original_judge": judge,
               "judge": new_name or judge, "stored": changed, "before": gain["before"], "after": gain["after"],
               "gain": gain["gain"], "measure": "agreement", "reference": reference, "instructions": wording["text"],
               "instructions_name": wording["name"], "demonstrations": demos,
               "n_heldout_items": len(evaluate), "n_heldout_prompts": len(eval_p), "n_train_items": len(train),
               "n_train_prompts": len(train_p), "labels_used": len(minibatch) + len({id(d) for t in found["trace"] for d in t["demonstrations"]}),
               "budget": budget, "search_calls": found["calls"], "calls_made": asker.made,
               "search_agreement": found["agreement"], "optimizer": optimizer, "run_id": run.id,
               "gepa": evolved,
               "template": after_fmt.template,
               "trace": [{**t, "instruction": wordings[t["instruction"]]["name"],
                          "demonstrations": [_demo_record(fmt, d, "")["prompt_id"] for d in t["demonstrations"]]}
                         for t in found["trace"]]}
        (run.out_dir / "align.json").write_text(json.dumps(doc, indent=1), encoding="utf-8")
        run.progress({"phase": "finished", "calls": asker.made, "budget": budget, "result": "align.json"})
    return doc


def _store(db, pid: int, run_id: int, name: str, spec, params, decoding_identity, fmt, asked_fmt, decoding: str,
           settings: dict, items: list[dict], answers: list[dict], seed: int, original: int | None = None) -> None:
    """The evaluation items' answers as verdicts of `name` (the aligned judge, made with its identity;
    or the original judge, `original` its id, where it holds no answer yet) in one cell run."""
    with writing(db) as unit:
        if original is None:
            identity = judge_identity(spec.provider, spec.model, spec.endpoint, params=params,
                                      decoding_settings=decoding_identity)
            jid = unit.ensure_judge(name, spec.provider, spec.model, spec.endpoint, params, identity)
        else:
            jid = original
        fid = unit.ensure_format(fmt)
        keys = pl.DataFrame([{"format_id": fid, "prompt_idx": i["prompt_idx"], "a_idx": i["a_idx"], "b_idx": i["b_idx"],
                              "swapped": False, "sample": 0, "decoding": decoding, "judge_id": jid} for i in items],
                            schema={"format_id": pl.Int32, "prompt_idx": pl.Int32, "a_idx": pl.Int32, "b_idx": pl.Int32,
                                    "swapped": pl.Boolean, "sample": pl.Int32, "decoding": pl.String, "judge_id": pl.Int32})
        todo = unit.unanswered(keys, pid, jid)
        wanted = {(r["prompt_idx"], r["a_idx"], r["b_idx"]) for r in todo.to_dicts()}
        rows = [(i, a) for i, a in zip(items, answers) if (i["prompt_idx"], i["a_idx"], i["b_idx"]) in wanted]
        if not rows:
            return
        how = CellRunDescription("align", template=asked_fmt.template, decoding_settings=settings, seed=seed,
                                 notes="judgeaudit align: the evaluation items")
        crid = unit.start_cell_run(pid, jid, fid, how, run_id=run_id)
        frame = pl.DataFrame([{"cell_run_id": crid, "pool_id": pid, "judge_id": jid, "format_id": fid,
                               "prompt_idx": i["prompt_idx"], "a_idx": i["a_idx"], "b_idx": i["b_idx"], "swapped": False,
                               "sample": 0, "raw": a["raw"], "answer": a["answer"], "value": a["value"],
                               "status": a["status"], "error": a["error"], "attempts": 1,
                               "latency_ms": a["latency_ms"], "tokens_in": a["tokens_in"], "tokens_out": a["tokens_out"],
                               "answer_probs": None, "expected": None, "decoding": decoding, "endpoint": None}
                              for i, a in rows], schema=ROW_SCHEMA)
        unit.insert_answers(frame)
        unit.finish_cell_run(crid, "finished", judge_model=spec.model)
