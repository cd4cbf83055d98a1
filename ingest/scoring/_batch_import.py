"""Batch results back in (DESIGN.md 'Past one machine'): `judgeaudit import-batch PATH...`.

Reads result files of either shape: OpenAI's `{"id", "custom_id", "response": {"status_code",
"request_id", "body"} | null, "error": {"code", "message"} | null}` and vLLM's (`error` a plain
string or an object; a failed line has status 400 and a null body). A line has failed when its
error is not null, its status is not 200 or its body is null. Each answer goes through the online
path: the body is read by the online judge's own `reply_from_body`, the row made by the runner's
`record` (parsed by its format, label probabilities, one row per call), and a failure is a failed
row with its reason. A `custom_id` is looked up in the mapping stored at export; one that names
no call of this database is counted as unknown, never guessed. Importing twice changes nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from .._errors import UserError, where
from ..store import (db_path, exported_calls, finish_cell_run, frame, insert_answers, one, start_cell_run,
                     transaction, writer)
from ._journal import ROW_SCHEMA
from ._request import ScoreRequest
from ._runner import _Scoring
from .formats import stored_formats
from .judges import JudgeSpec

COUNTS = ("lines", "matched", "stored", "parsed", "failed", "unknown", "duplicate", "malformed")
SHOWN = 10    # how many unknown ids and malformed lines a summary names


def result_files(paths) -> list[Path]:
    """The files named, a folder standing for its *.jsonl files other than request files."""
    out = []
    for p in map(Path, paths):
        if p.is_dir():
            out += sorted(f for f in p.glob("*.jsonl") if not f.name.startswith("requests-"))
        elif p.is_file():
            out.append(p)
        else:
            raise UserError(f"{p}: no such file or folder")
    if not out:
        raise UserError(f"{', '.join(map(str, paths))}: no result files (*.jsonl) to import")
    return out


def failure(line: dict) -> str | None:
    """Why a result line failed, or None when it carries an answer body."""
    error, response = line.get("error"), line.get("response")
    if error is not None:
        if isinstance(error, dict):
            code, message = error.get("code"), error.get("message")
            return f"batch error{f' {code}' if code else ''}: {message if message is not None else json.dumps(error)}"
        return f"batch error: {error}"
    if not isinstance(response, dict):
        return "batch: the line has no response"
    status = response.get("status_code")
    body = response.get("body")
    if status != 200:
        detail = body.get("error", {}).get("message") if isinstance(body, dict) and isinstance(body.get("error"), dict) \
            else None
        return f"batch: HTTP {status}" + (f": {detail}" if detail else "")
    if body is None:
        return "batch: HTTP 200 with no body"
    return None


def read_lines(files: list[Path], counts: dict, malformed: list[str]) -> dict[str, dict]:
    """custom_id -> its first result line; later lines naming the same id are duplicates."""
    first: dict[str, dict] = {}
    for path in files:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for number, text in enumerate(fh, 1):
                if not text.strip():
                    continue
                counts["lines"] += 1
                try:
                    line = json.loads(text)
                except json.JSONDecodeError as exc:
                    line, why = None, f"not JSON ({exc.msg})"
                else:
                    why = "no custom_id"
                if not isinstance(line, dict) or not isinstance(line.get("custom_id"), str):
                    counts["malformed"] += 1
                    malformed.append(f"{where(str(path), number)}: {why}")
                    continue
                if line["custom_id"] in first:
                    counts["duplicate"] += 1
                    continue
                first[line["custom_id"]] = line
    return first


def import_batch(paths, db=None) -> dict:
    """Store the answers of batch result files; returns the counts (COUNTS), `unknown_ids` and
    `malformed_lines` (the first few named), and `cell_runs` (one per judge and format written)."""
    files = result_files(paths)
    db = db_path(db).resolve()
    if not db.exists():
        raise UserError(f"{db}: no such database (export the batch from it with score --batch-out)")
    counts = dict.fromkeys(COUNTS, 0)
    malformed: list[str] = []
    lines = read_lines(files, counts, malformed)
    with writer(db) as con:
        known = exported_calls(con, list(lines))
        formats = stored_formats(con)
        format_names = dict(con.execute("SELECT format_id, name FROM formats").fetchall())
        judges = {r[0]: r for r in con.execute("SELECT judge_id, name, provider, model, endpoint FROM judges").fetchall()}
    exported = set(known["custom_id"].to_list())
    unknown = [cid for cid in lines if cid not in exported]
    counts["unknown"], counts["matched"] = len(unknown), known.height
    for row in known.unique(["export_id", "judge_id"]).iter_rows(named=True):
        if json.loads(row["export_identity"]) != json.loads(row["judge_identity"] or "null"):
            raise UserError(f"judge '{row['judge']}' no longer stands for the judge these requests were exported "
                            "for (its identity changed); nothing was imported")
    rows, models = _rows(known, lines, formats, format_names, judges, counts)
    written = _store(db, rows, formats, format_names, [str(f) for f in files], models)
    counts["stored"] = written["stored"]
    return {**counts, "unknown_ids": unknown[:SHOWN], "malformed_lines": malformed[:SHOWN],
            "cell_runs": written["cell_runs"], "files": [str(f) for f in files]}


def _rows(known: pl.DataFrame, lines: dict, formats: dict, format_names: dict, judges: dict,
          counts: dict) -> tuple[list[dict], dict]:
    """One verdict row per matched call, made by the online run's `record`; and per judge the
    model ids the answers reported."""
    from .judges.openai_compat import reply_from_body   # httpx loads only here
    recorders: dict[tuple[int, int], _Scoring] = {}   # per judge and export: its decoding
    rows = []
    for call in known.iter_rows(named=True):
        jid = call["judge_id"]
        if (jid, call["export_id"]) not in recorders:
            _, name, provider, model, endpoint = judges[jid]
            spec = JudgeSpec(name, provider, model, endpoint, {}, factory=None)
            recorders[jid, call["export_id"]] = _Scoring(ScoreRequest(pool=call["pool"], judge="", formats=[]), spec,
                                                         formats, None, json.loads(call["export_decoding"]))
        recorder = recorders[jid, call["export_id"]]
        line = lines[call["custom_id"]]
        decoding = json.loads(call["export_decoding"])
        constraint = decoding.get("constraint") if call["decoding"] == "constrained" else None
        hit = {**call, "format": format_names[call["format_id"]]}
        reply, error = None, failure(line)
        if error is None:
            try:
                reply = reply_from_body(line["response"]["body"], constraint)
            except (KeyError, IndexError, TypeError, AttributeError) as exc:
                error = f"malformed response: {type(exc).__name__}: {json.dumps(line['response']['body'])[:120]!r}"
        row = recorder.record(hit, reply, error, 1)
        row["endpoint"] = None      # answered by a batch runner, not by a server this tool called
        counts["failed"] += row["status"] == "failed"
        counts["parsed"] += row["status"] == "ok"
        rows.append(row)
    models: dict[int, set] = {}
    for (jid, _), recorder in recorders.items():
        models.setdefault(jid, set()).update(recorder.judge_models)
    return rows, models


def _store(db: Path, rows: list[dict], formats: dict, format_names: dict,
           files: list[str], models: dict) -> dict:
    """Write the rows that change something: a call with no row yet, or a failed one now answered.
    One transaction; a cell run per export cell run answered records the import."""
    if not rows:
        return {"stored": 0, "cell_runs": []}
    new = pl.DataFrame(rows, schema=ROW_SCHEMA)
    key = ["pool_id", "judge_id", "format_id", "decoding", "prompt_idx", "a_idx", "b_idx", "sample"]
    with writer(db) as con, transaction(con):
        con.register("batch_new", new.select(key).to_arrow())
        try:
            stored = frame(con, "SELECT v.pool_id, v.judge_id, v.format_id, v.decoding, v.prompt_idx, v.a_idx, "
                                "v.b_idx, v.sample, v.status AS stored_status FROM verdicts v JOIN batch_new n "
                                "USING (pool_id, judge_id, format_id, decoding, prompt_idx, a_idx, sample) "
                                "WHERE v.b_idx IS NOT DISTINCT FROM n.b_idx")
        finally:
            con.unregister("batch_new")
        stored = stored.drop("b_idx").with_columns(stored["b_idx"].cast(pl.Int32)).cast(
            {c: new.schema[c] for c in key})
        new = new.join(stored, on=key, how="left", nulls_equal=True)
        new = new.filter(pl.col("stored_status").is_null()
                         | ((pl.col("stored_status") == "failed") & (pl.col("status") != "failed"))).drop("stored_status")
        if new.height == 0:
            return {"stored": 0, "cell_runs": []}
        # One import cell run per export cell run answered (a row's run_id is its export's cell run,
        # set by `record`), with that export's template, decoding, schedule and seed.
        runs, judge_of = {}, {}
        for (pid, jid, fid, source), _ in new.group_by(["pool_id", "judge_id", "format_id", "run_id"],
                                                       maintain_order=True):
            template, decoding, schedule, seed = one(
                con, "SELECT template, decoding, schedule, seed FROM cell_runs WHERE run_id = $r", {"r": source})
            runs[source] = start_cell_run(
                con, pid, jid, formats[format_names[fid]], fid, "batch-import", source_file=", ".join(files),
                template=template, decoding=json.loads(decoding) if decoding else None, schedule=schedule,
                seed=seed, notes=f"answers to the batch requests of export cell run {source}")
            judge_of[runs[source]] = jid
        new = new.with_columns(pl.col("run_id").replace_strict(runs, return_dtype=pl.Int32))
        counts = insert_answers(con, new)
        for rid, jid in judge_of.items():
            finish_cell_run(con, rid, "finished", judge_model=", ".join(sorted(models.get(jid, ()))) or None)
    return {"stored": counts["inserted"] + counts["replaced"], "cell_runs": list(runs.values())}
