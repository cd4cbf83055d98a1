"""Batch request files (docs/scale.md#past-one-machine-batch-files): `judgeaudit score ... --batch-out DIR`
plans exactly the calls an online run would make, leaves out those already answered, and writes
them as OpenAI Batch input, `DIR/requests-00000.jsonl`, ... plus `DIR/manifest.json`. No HTTP call
is made. Each line's body is built by the online judge's own `request_body`, so the two cannot
drift; each `custom_id` is a hash of the call key and is stored with its call in the database
(the store's record_batch_export) before the manifest is written, so a lost manifest loses
nothing. `vllm run-batch`, the OpenAI and Together Batch APIs, or any runner then answer the
lines, and `judgeaudit import-batch` stores the answers (_batch_import.py).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import polars as pl

from .._errors import UserError
from ..store import CellRunDescription, Database, writing
from ._calls import messages
from ._request import (DECODINGS, ScoreRequest, check_samples, decoding_mode, decoding_settings, ensure_spec_judge,
                       resolve_formats)
from ._schedule import SCHEDULES, plan_calls, schedule_of
from .judges import parse_judge

MAX_LINES = 50_000            # OpenAI's Batch API: at most 50,000 requests per file ...
MAX_BYTES = 190_000_000       # ... and 200 MB; 190 MB leaves room
URL = "/v1/chat/completions"


def custom_id(pool_key: str, judge: str, fmt: str, decoding: str, prompt_idx: int, a_idx: int,
              b_idx: int | None, sample: int) -> str:
    """The call's id in batch files: 'ja-' and 40 hex digits of a hash of its call key (pool,
    judge, format, decoding, prompt, slot A, slot B, sample), so the same call gets the same id in
    every export. `pool_key` names the pool's instance (id, name, import time): a file of a pool
    in another database, or of a pool since replaced, names no call of this one."""
    key = f"{pool_key}|{judge}|{fmt}|{decoding}|{prompt_idx}|{a_idx}|{b_idx}|{sample}"
    return "ja-" + hashlib.blake2b(key.encode(), digest_size=20).hexdigest()


def _check(req: ScoreRequest, spec) -> None:
    if req.schedule not in SCHEDULES:
        raise UserError(f"--schedule: one of {', '.join(SCHEDULES)}, not {req.schedule!r}")
    if req.decoding not in DECODINGS:
        raise UserError(f"--decoding: one of {', '.join(DECODINGS)}, not {req.decoding!r}")
    if spec.provider != "openai":
        raise UserError(f"--batch-out: batch files are OpenAI chat-completions requests, for an openai:MODEL@URL "
                        f"judge, not {req.judge!r} (local: and fake: judges answer in-process: score without "
                        "--batch-out)")
    if req.strategy:
        raise UserError("--batch-out: a --strategy verdict takes several dependent calls; batch files hold "
                        "single calls: score it online")
    if req.constraint is not None and req.decoding != "constrained":
        raise UserError("--constraint: the server's mechanism, for --decoding constrained")


PARTIAL = ".partial"          # a file of an export not yet recorded in the database


def _write_files(folder: Path, lines: list[str], max_lines: int, max_bytes: int) -> list[dict]:
    """requests-00000.jsonl.partial, ...: at most `max_lines` lines and `max_bytes` bytes each;
    `_publish` gives them their names once the database holds the export."""
    folder.mkdir(parents=True, exist_ok=True)
    too_big = next((len(line.encode()) for line in lines if len(line.encode()) > max_bytes), None)
    if too_big is not None:
        raise UserError(f"--batch-out: one request is {too_big} bytes, more than a batch file may hold ({max_bytes})")
    files, chunk, size = [], [], 0

    def flush() -> None:
        data = "".join(chunk).encode()
        name = f"requests-{len(files):05d}.jsonl"
        (folder / (name + PARTIAL)).write_bytes(data)
        files.append({"name": name, "lines": len(chunk), "bytes": len(data),
                      "sha256": hashlib.sha256(data).hexdigest()})

    for line in lines:
        n = len(line.encode())
        if chunk and (len(chunk) == max_lines or size + n > max_bytes):
            flush()
            chunk, size = [], 0
        chunk.append(line)
        size += n
    if chunk:
        flush()
    return files


def _publish(folder: Path, files: list[dict]) -> None:
    """Replace an earlier export's files in `folder` (requests-*.jsonl, manifest.json) by the new
    ones: only once the new export is recorded, so a failed export leaves the earlier one whole."""
    for old in [*folder.glob("requests-*.jsonl"), folder / "manifest.json"]:
        old.unlink(missing_ok=True)
    for f in files:
        (folder / (f["name"] + PARTIAL)).replace(folder / f["name"])


def export_batch(req: ScoreRequest, folder: str | Path, max_lines: int = MAX_LINES,
                 max_bytes: int = MAX_BYTES) -> dict:
    """Write the calls of `req` still missing or failed as batch request files in `folder`;
    returns {pool, judge, formats, decoding, planned, already_done, exported, folder, files,
    manifest, export_id}. The judge name is bound to its identity as an online run binds it."""
    folder = Path(folder)
    db = Database.of(req.db).path
    with writing(db) as unit:
        pid = unit.pool_id(req.pool)
        formats = resolve_formats(req, unit)
        pool_key = "|".join(str(v) for v in unit.pool_instance(pid))
    spec = parse_judge(req.judge, formats, name=req.judge_name, api_key_env=req.api_key_env, timeout=req.timeout)
    _check(req, spec)
    check_samples(req, spec)
    req = dataclasses.replace(req, decoding=decoding_mode(req))   # greedy at T > 0 is stored as sampled
    settings = decoding_settings(req, spec)   # no check call of the constraint: no HTTP call at all
    with writing(db) as unit:
        cands = unit.candidate_texts(pid)
        prompts = unit.prompt_texts(pid)
    # the plan's own refusals come before anything is stored: the judge and formats are bound after it
    plan, notes = plan_calls(cands, list(formats.values()), req.schedule, req.swap_sample, req.seed, req.samples)
    jid = ensure_spec_judge(db, spec, settings)
    with writing(db) as unit:
        identity = unit.stored_identity(jid)
        fids = {name: unit.ensure_format(fmt) for name, fmt in formats.items()}
    plan = plan.with_columns(pl.lit(jid, pl.Int32).alias("judge_id"), pl.lit(req.decoding).alias("decoding"),
                             pl.col("format").replace_strict(fids, return_dtype=pl.Int32).alias("format_id"))
    with writing(db) as unit:
        todo = unit.unanswered(plan, pid, jid)
    texts = {"prompt": dict(zip(prompts["prompt_idx"].to_list(), prompts["prompt"].to_list())),
             "response": dict(zip(cands["cand_idx"].to_list(), cands["response"].to_list()))}
    from .judges.openai_compat import request_body   # httpx loads only here
    constrained = "constraint" in settings
    calls = todo.to_dicts()
    lines, ids = [], []
    for call in calls:
        fmt = formats[call["format"]]
        body = request_body(spec.model, messages(fmt, call, texts), settings,
                            list(fmt.answer_values()) if constrained else None, call["sample"])
        cid = custom_id(pool_key, spec.name, fmt.name, req.decoding, call["prompt_idx"], call["a_idx"],
                        call["b_idx"], call["sample"])
        ids.append(cid)
        lines.append(json.dumps({"custom_id": cid, "method": "POST", "url": URL, "body": body},
                                ensure_ascii=False) + "\n")
    files = _write_files(folder, lines, max_lines, max_bytes)
    todo = todo.with_columns(pl.Series("custom_id", ids, dtype=pl.String), pl.lit(pid, pl.Int32).alias("pool_id"))
    try:
        with writing(db) as unit:
            cell_runs = {}
            for name in todo["format"].unique(maintain_order=True).to_list():
                n = todo.filter(pl.col("format") == name).height
                fmt = formats[name]
                cell_run_id = unit.start_cell_run(pid, jid, fids[name], CellRunDescription(
                    "batch-export", source_file=str(folder.resolve()), template=fmt.template,
                    decoding_settings=settings, schedule=schedule_of(fmt, req.schedule), seed=req.seed,
                    notes="; ".join([f"{n} call(s) written as batch requests",
                                     *[x for x in notes if x.startswith(name + ":")]])))
                unit.finish_cell_run(cell_run_id, "finished")
                unit.refresh_juries_of([cell_run_id])   # a jury's mark counts its members' latest cell run
                cell_runs[name] = cell_run_id
            todo = todo.with_columns(pl.col("format").replace_strict(cell_runs, default=None, return_dtype=pl.Int32)
                                     .alias("cell_run_id"))
            eid = unit.record_batch_export(pid, jid, identity, settings, str(folder.resolve()), files, todo)
    except BaseException:
        for f in files:
            (folder / (f["name"] + PARTIAL)).unlink(missing_ok=True)
        raise
    _publish(folder, files)
    manifest = {"pool": req.pool, "judge": spec.name, "identity": identity, "model": spec.model,
                "formats": list(formats), "decoding": req.decoding, "decoding_settings": settings,
                "samples": req.samples, "schedule": req.schedule, "swap_sample": req.swap_sample, "seed": req.seed,
                "export_id": eid, "planned": plan.height, "already_done": plan.height - todo.height,
                "calls": todo.height, "url": URL, "files": files,
                "custom_id": "ja- + blake2b-160 of the call key; the mapping is stored in the database (batch_calls)"}
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return {"pool": req.pool, "judge": spec.name, "formats": list(formats), "decoding": req.decoding,
            "planned": plan.height, "already_done": plan.height - todo.height, "exported": todo.height,
            "folder": str(folder), "files": files, "manifest": str(folder / "manifest.json"), "export_id": eid,
            "notes": notes}
