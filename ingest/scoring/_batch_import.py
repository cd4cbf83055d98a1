"""Batch results back in (docs/scale.md#past-one-machine-batch-files): `judgeaudit import-batch PATH...`.

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
from typing import Iterator

import polars as pl

from .._errors import UserError, where
from ..store import CellRunDescription, Database, writing
from ._journal import ROW_SCHEMA
from ._request import ScoreRequest
from ._runner import _Scoring
from .formats import stored_formats
from .judges import JudgeSpec

COUNTS = ("lines", "matched", "stored", "parsed", "failed", "unknown", "duplicate", "malformed")
SHOWN = 10    # how many unknown ids and malformed lines a summary names
CHUNK = 20_000   # result lines made into rows and stored at a time


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


def read_chunks(files: list[Path], counts: dict, malformed: list[str]) -> Iterator[dict]:
    """The result lines, CHUNK distinct custom_ids at a time (custom_id -> its first line); a later
    line naming an id already read is a duplicate. Only the ids read so far are held, not the lines;
    `malformed` gets the first SHOWN malformed lines, named by file and line."""
    seen: set[str] = set()
    batch: dict[str, dict] = {}
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
                    if len(malformed) < SHOWN:
                        malformed.append(f"{where(str(path), number)}: {why}")
                    continue
                if line["custom_id"] in seen:
                    counts["duplicate"] += 1
                    continue
                seen.add(line["custom_id"])
                batch[line["custom_id"]] = line
                if len(batch) == CHUNK:
                    yield batch
                    batch = {}
    if batch:
        yield batch


def import_batch(paths, db=None) -> dict:
    """Store the answers of batch result files; returns the counts (COUNTS), `unknown_ids` and
    `malformed_lines` (the first few named), and `cell_runs` (one per export cell run answered).
    One transaction: the files land whole or not at all. They are read a chunk of lines at a time,
    so memory follows the chunk, not the files."""
    files = result_files(paths)
    db = Database.of(db).path
    if not db.exists():
        raise UserError(f"{db}: no such database (export the batch from it with score --batch-out)")
    counts = dict.fromkeys(COUNTS, 0)
    malformed: list[str] = []
    unknown: list[str] = []
    with writing(db) as unit:
        answers = _Answers(unit, [str(f) for f in files], counts)
        for lines in read_chunks(files, counts, malformed):
            known = unit.exported_calls(list(lines))
            exported = set(known["custom_id"].to_list())
            unknown += [cid for cid in lines if cid not in exported][:SHOWN - len(unknown)]
            counts["unknown"] += len(lines) - known.height
            counts["matched"] += known.height
            answers.check_identity(known)
            answers.store(answers.rows(known, lines))
        cell_runs = answers.finish()
    return {**counts, "unknown_ids": unknown, "malformed_lines": malformed, "cell_runs": cell_runs,
            "files": [str(f) for f in files]}


class _Answers:
    """The verdict rows of matched result lines, made and stored chunk by chunk in the caller's
    transaction, with one import cell run per export cell run answered."""

    def __init__(self, unit, files: list[str], counts: dict):
        self.unit, self.files, self.counts = unit, files, counts       # unit: the caller's store.writing
        stored = unit.format_rows()
        self.formats = stored_formats(stored)
        self.format_names = {r["format_id"]: r["name"] for r in stored}
        self.judges = unit.judges()
        self.recorders: dict[tuple[int, int], _Scoring] = {}   # per judge and export: its decoding
        self.checked: set[tuple[int, int]] = set()
        self.import_cell_run_of: dict[int, int] = {}            # export cell run -> import cell run
        self.judge_of: dict[int, int] = {}                      # import cell run -> judge

    def check_identity(self, known: pl.DataFrame) -> None:
        """Each judge must still stand for the judge its requests were exported for."""
        for row in known.unique(["export_id", "judge_id"]).iter_rows(named=True):
            if (row["export_id"], row["judge_id"]) in self.checked:
                continue
            if json.loads(row["export_identity"]) != json.loads(row["judge_identity"] or "null"):
                raise UserError(f"judge '{row['judge']}' no longer stands for the judge these requests were "
                                "exported for (its identity changed); nothing was imported")
            self.checked.add((row["export_id"], row["judge_id"]))

    def rows(self, known: pl.DataFrame, lines: dict) -> list[dict]:
        """One verdict row per matched call, made by the online run's `record`."""
        from .judges.openai_compat import reply_from_body   # httpx loads only here
        rows = []
        for call in known.iter_rows(named=True):
            jid = call["judge_id"]
            settings = json.loads(call["export_decoding_settings"])
            if (jid, call["export_id"]) not in self.recorders:
                _, name, provider, model, endpoint = self.judges[jid]
                spec = JudgeSpec(name, provider, model, endpoint, {}, factory=None)
                self.recorders[jid, call["export_id"]] = _Scoring(
                    ScoreRequest(pool=call["pool"], judge="", formats=[]), spec, self.formats, None, settings)
            line = lines[call["custom_id"]]
            constraint = settings.get("constraint") if call["decoding"] == "constrained" else None
            reply, error = None, failure(line)
            if error is None:
                try:
                    reply = reply_from_body(line["response"]["body"], constraint)
                except (KeyError, IndexError, TypeError, AttributeError) as exc:
                    error = (f"malformed response: {type(exc).__name__}: "
                             f"{json.dumps(line['response']['body'])[:120]!r}")
            hit = {**call, "format": self.format_names[call["format_id"]]}
            row = self.recorders[jid, call["export_id"]].record(hit, reply, error, 1)
            row["endpoint"] = None      # answered by a batch runner, not by a server this tool called
            self.counts["failed"] += row["status"] == "failed"
            self.counts["parsed"] += row["status"] == "ok"
            rows.append(row)
        return rows

    def store(self, rows: list[dict]) -> None:
        """Write the rows that change something: a call with no row yet, or a failed one now
        answered. A row's cell_run_id is its export's cell run (set by `record`); it is stored under an
        import cell run that carries that export's template, decoding, schedule and seed."""
        if not rows:
            return
        new = pl.DataFrame(rows, schema=ROW_SCHEMA)
        before = self.unit.stored_statuses(new)
        new = new.filter(before.is_null() | ((before == "failed") & (new["status"] != "failed")))
        for (pid, jid, fid, source), _ in new.group_by(["pool_id", "judge_id", "format_id", "cell_run_id"],
                                                       maintain_order=True):
            if source in self.import_cell_run_of:
                continue
            template, settings, schedule, seed = self.unit.cell_run_recipe(source)
            self.import_cell_run_of[source] = self.unit.start_cell_run(pid, jid, fid, CellRunDescription(
                "batch-import", source_file=", ".join(self.files), template=template,
                decoding_settings=json.loads(settings) if settings else None, schedule=schedule, seed=seed,
                notes=f"answers to the batch requests of export cell run {source}"))
            self.judge_of[self.import_cell_run_of[source]] = jid
        if new.height:
            new = new.with_columns(pl.col("cell_run_id").replace_strict(self.import_cell_run_of, return_dtype=pl.Int32))
            done = self.unit.insert_answers(new)
            self.counts["stored"] += done["inserted"] + done["replaced"]

    def finish(self) -> list[int]:
        """Close the import cell runs, each with the model ids its answers reported."""
        models: dict[int, set] = {}
        for (jid, _), recorder in self.recorders.items():
            models.setdefault(jid, set()).update(recorder.judge_models)
        for cell_run_id, jid in self.judge_of.items():
            self.unit.finish_cell_run(cell_run_id, "finished", judge_model=", ".join(sorted(models.get(jid, ()))) or None)
        self.unit.refresh_juries_of(list(self.judge_of))   # the juries with these judges as members see their answers
        return list(self.import_cell_run_of.values())
