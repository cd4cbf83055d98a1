"""Human labels for calibration (DESIGN.md `calibrate`): read, check against a pool, store.

Sources:
- `jsonl`: the DESIGN labels file, one row per labelled pair: `prompt_id, a_id, b_id, label` with
  label `A` (a_id is better), `B` (b_id is better) or `tie`; optional `annotator`.
- `mtbench`: MT-Bench expert votes as `lmsys/mt_bench_human_judgments` ships them (`question_id,
  turn, model_a, model_b, winner, judge`): prompt_id = question_id, candidates = model names,
  annotator = judge. Only first-turn votes are read (a pool holds one prompt per question).
- `llmfao`: LLMFAO comparisons (`prompt_id, model_x, model_y, model_x_name, model_y_name, judge,
  worker, winner` x|y|tie); only the crowd's votes are labels (annotator `crowd:<worker>`); a
  candidate is found by the model's numeric id or, failing that, its name.
For the two public sources, votes about prompts the pool does not hold are skipped (and counted).

A file lands whole or not at all; every error names the file, the line and the field. The same
annotator labelling the same pair again (either way round) is dropped when it says the same thing
and refused when it contradicts itself or a stored label.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import polars as pl

from . import _db
from ._errors import UserError, where
from ._files import jsonl_objects

SOURCES = ("jsonl", "mtbench", "llmfao")
LABELS = {"a": "A", "b": "B", "tie": "tie"}
FLIP = {"A": "B", "B": "A", "tie": "tie"}


def _text(value, path, line, fld, required=True) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise UserError(f"{where(path, line, fld)}: required")
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise UserError(f"{where(path, line, fld)}: expected a string, got {json.dumps(value)}")
    return str(value)




def read_labels(path: str | os.PathLike, source: str = "jsonl") -> tuple[list[dict], dict]:
    """The labels of a file as dicts (line, prompt_id, a_ids, b_ids, label, annotator) — a_ids and
    b_ids are the candidate ids to try, in order — and the counts of rows skipped, by reason."""
    p = Path(path)
    if source not in SOURCES:
        raise UserError(f"--source {source}: use one of {', '.join(SOURCES)}")
    if not p.is_file():
        raise UserError(f"{p}: no such file")
    out, skipped = [], {}
    try:
        for n, row in jsonl_objects(p):
            if source == "jsonl":
                raw = _text(row.get("label"), p, n, "label")
                label = LABELS.get(raw.strip().lower())
                if label is None:
                    raise UserError(f"{where(p, n, 'label')}: {raw!r} is not a label (use A, B or tie)")
                rec = {"prompt_id": _text(row.get("prompt_id"), p, n, "prompt_id"),
                       "a_ids": [_text(row.get("a_id"), p, n, "a_id")],
                       "b_ids": [_text(row.get("b_id"), p, n, "b_id")],
                       "annotator": _text(row.get("annotator"), p, n, "annotator", required=False) or ""}
            elif source == "mtbench":
                if row.get("turn", 1) != 1:
                    skipped["second turn"] = skipped.get("second turn", 0) + 1
                    continue
                winner = _text(row.get("winner"), p, n, "winner")
                label = {"model_a": "A", "model_b": "B"}.get(winner, "tie" if winner.startswith("tie") else None)
                if label is None:
                    raise UserError(f"{where(p, n, 'winner')}: {winner!r} (use model_a, model_b or tie)")
                rec = {"prompt_id": _text(row.get("question_id"), p, n, "question_id"),
                       "a_ids": [_text(row.get("model_a"), p, n, "model_a")],
                       "b_ids": [_text(row.get("model_b"), p, n, "model_b")],
                       "annotator": _text(row.get("judge"), p, n, "judge")}
            else:
                if row.get("judge") != "crowd":
                    skipped["not a crowd vote"] = skipped.get("not a crowd vote", 0) + 1
                    continue
                winner = _text(row.get("winner"), p, n, "winner")
                label = {"x": "A", "y": "B", "tie": "tie"}.get(winner)
                if label is None:
                    raise UserError(f"{where(p, n, 'winner')}: {winner!r} (use x, y or tie)")
                rec = {"prompt_id": _text(row.get("prompt_id"), p, n, "prompt_id"),
                       "a_ids": [_text(row.get("model_x"), p, n, "model_x"),
                                 _text(row.get("model_x_name"), p, n, "model_x_name", required=False)],
                       "b_ids": [_text(row.get("model_y"), p, n, "model_y"),
                                 _text(row.get("model_y_name"), p, n, "model_y_name", required=False)],
                       "annotator": "crowd:" + _text(row.get("worker"), p, n, "worker")}
            rec.update(line=n, label=label)
            out.append(rec)
    except UnicodeDecodeError as exc:
        raise UserError(f"{p}: not valid UTF-8 ({exc.reason})") from None
    if not out:
        raise UserError(f"{p}: no labels in the file" + (f" (skipped: {skipped})" if skipped else ""))
    return out, skipped


def _candidate(cands: dict, prompt_idx: int, ids: list[str | None]) -> int | None:
    for cid in ids:
        if cid is not None and (prompt_idx, cid) in cands:
            return cands[(prompt_idx, cid)]
    return None


def resolve_labels(con, pid: int, pool: str, path, rows: list[dict], source: str,
                   skipped: dict) -> pl.DataFrame:
    """Place the labels in the pool: prompt_idx, a_idx, b_idx (the file's orientation), label,
    annotator, line. Identical repeats of an annotator's label are dropped; contradictions refused."""
    prompts = dict(con.execute("SELECT prompt_id, prompt_idx FROM prompts WHERE pool_id = $p", {"p": pid}).fetchall())
    cands = {(pi, cid): ci for pi, cid, ci in con.execute(
        "SELECT prompt_idx, candidate_id, cand_idx FROM candidates WHERE pool_id = $p", {"p": pid}).fetchall()}
    lenient = source != "jsonl"
    fld = {"jsonl": ("prompt_id", "a_id", "b_id"), "mtbench": ("question_id", "model_a", "model_b"),
           "llmfao": ("prompt_id", "model_x", "model_y")}[source]
    seen: dict[tuple, tuple[str, int]] = {}
    out = []
    for r in rows:
        pi = prompts.get(r["prompt_id"])
        if pi is None:
            if lenient:
                skipped["prompt not in the pool"] = skipped.get("prompt not in the pool", 0) + 1
                continue
            raise UserError(f"{where(path, r['line'], fld[0])}: unknown prompt {r['prompt_id']!r} in pool '{pool}'")
        a, b = _candidate(cands, pi, r["a_ids"]), _candidate(cands, pi, r["b_ids"])
        for ci, ids, name in ((a, r["a_ids"], fld[1]), (b, r["b_ids"], fld[2])):
            if ci is None:
                raise UserError(f"{where(path, r['line'], name)}: unknown candidate {ids[0]!r} for prompt "
                                f"{r['prompt_id']!r} in pool '{pool}'")
        if a == b:
            raise UserError(f"{where(path, r['line'], fld[2])}: a pair needs two different candidates")
        key = (pi, min(a, b), max(a, b), r["annotator"])
        oriented = r["label"] if a < b else FLIP[r["label"]]
        if key in seen:
            if seen[key][0] != oriented:
                raise UserError(f"{where(path, r['line'], 'label')}: contradicts line {seen[key][1]} "
                                f"(the same annotator {r['annotator']!r} on the same pair)")
            skipped["repeated label"] = skipped.get("repeated label", 0) + 1
            continue
        seen[key] = (oriented, r["line"])
        out.append({"prompt_idx": pi, "a_idx": a, "b_idx": b, "label": r["label"],
                    "annotator": r["annotator"], "line": r["line"]})
    if not out:
        raise UserError(f"{path}: none of its labels is about pool '{pool}' (skipped: {skipped})")
    return pl.DataFrame(out, schema={"prompt_idx": pl.Int32, "a_idx": pl.Int32, "b_idx": pl.Int32,
                                     "label": pl.String, "annotator": pl.String, "line": pl.Int32})


def _pool_id(con, pool: str) -> int:
    row = _db.one(con, "SELECT pool_id FROM pools WHERE name = $n", {"n": pool})
    if row is None:
        raise UserError(f"no pool named '{pool}' (see `judgeaudit pools`)")
    return row[0]


def _sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def labels_from_file(db, path: str | os.PathLike, pool: str, source: str = "jsonl") -> tuple[pl.DataFrame, dict]:
    """A labels file checked against the pool, without storing it: (labels frame, skipped counts)."""
    rows, skipped = read_labels(path, source)
    _db.ensure_current(db)
    with _db.reader(db) as con:
        return resolve_labels(con, _pool_id(con, pool), pool, path, rows, source, skipped), skipped


def import_labels(db, path: str | os.PathLike, pool: str, source: str = "jsonl",
                  replace: bool = False) -> dict:
    """Store a labels file for a pool, whole or not at all. Labels already stored (same annotator,
    pair and verdict) are skipped; `replace` first drops every stored label of the pool."""
    rows, skipped = read_labels(path, source)
    digest = _sha256(Path(path))
    with _db.writer(db) as con, _db.transaction(con):
        pid = _pool_id(con, pool)
        frame = resolve_labels(con, pid, pool, path, rows, source, skipped)
        if replace:
            con.execute("DELETE FROM labels WHERE pool_id = $p", {"p": pid})
        stored = {(pi, min(a, b), max(a, b), ann): (lab if a < b else FLIP[lab])
                  for pi, a, b, lab, ann in con.execute(
                      "SELECT prompt_idx, a_idx, b_idx, label, annotator FROM labels WHERE pool_id = $p",
                      {"p": pid}).fetchall()}
        keep = []
        for r in frame.iter_rows(named=True):
            a, b = r["a_idx"], r["b_idx"]
            key = (r["prompt_idx"], min(a, b), max(a, b), r["annotator"])
            if key in stored:
                if stored[key] != (r["label"] if a < b else FLIP[r["label"]]):
                    raise UserError(f"{where(path, r['line'], 'label')}: annotator {r['annotator']!r} already "
                                    "labelled this pair otherwise (use --replace to start over)")
                continue
            keep.append(r)
        if keep:
            new = pl.DataFrame(keep, schema=frame.schema).with_columns(
                pl.lit(pid, pl.Int32).alias("pool_id"), pl.lit(source).alias("source"),
                pl.lit(str(path)).alias("source_file"), pl.lit(digest).alias("source_sha256"))
            con.register("label_rows", new.to_arrow())
            try:
                con.execute("INSERT INTO labels (pool_id, prompt_idx, a_idx, b_idx, label, annotator, source, "
                            "source_file, source_sha256, line) SELECT pool_id, prompt_idx, a_idx, b_idx, label, "
                            "annotator, source, source_file, source_sha256, line FROM label_rows")
            finally:
                con.unregister("label_rows")
    return {"pool": pool, "source": source, "rows_in_file": len(rows), "imported": len(keep),
            "already_stored": frame.height - len(keep), "skipped": skipped,
            "n_pairs": frame.select("prompt_idx", pl.min_horizontal("a_idx", "b_idx").alias("lo"),
                                    pl.max_horizontal("a_idx", "b_idx").alias("hi")).unique().height,
            "n_annotators": frame["annotator"].n_unique()}


def declare_calibration(db, pool: str, threshold: float | None, target_width: float | None,
                        labels: str) -> int:
    """Record a calibration before it runs: its acceptance threshold is fixed from here on."""
    from .store import _next_id
    with _db.writer(db) as con, _db.transaction(con):
        pid = _pool_id(con, pool)
        cid = _next_id(con, "calibrations", "calibration_id")
        con.execute("INSERT INTO calibrations (calibration_id, pool_id, threshold, target_width, labels) "
                    "VALUES ($id, $p, $t, $w, $l)",
                    {"id": cid, "p": pid, "t": threshold, "w": target_width, "l": labels})
    return cid


def declared_threshold(db, pool: str) -> float | None:
    """The threshold of the pool's latest calibration that declared one (None if none did)."""
    _db.ensure_current(db)
    with _db.reader(db) as con:
        row = _db.one(con, "SELECT c.threshold FROM calibrations c JOIN pools p USING (pool_id) "
                           "WHERE p.name = $n AND c.threshold IS NOT NULL "
                           "ORDER BY c.calibration_id DESC LIMIT 1", {"n": pool})
    return row[0] if row else None


def finish_calibration(db, calibration_id: int, result: dict) -> None:
    """Save the result document with its calibration record."""
    with _db.writer(db) as con, _db.transaction(con):
        con.execute("UPDATE calibrations SET result = $r, finished_at = current_timestamp "
                    "WHERE calibration_id = $id", {"r": json.dumps(result, allow_nan=False), "id": calibration_id})


def labels_description(path: str | os.PathLike | None) -> str:
    return "stored" if path is None else f"{path} sha256:{_sha256(Path(path))}"
