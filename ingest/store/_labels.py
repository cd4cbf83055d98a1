"""Human labels in the store (docs/files.md#label-files): a
labels file of pairs (A | B | tie) and candidates (accept | reject) placed in a pool and stored,
whole or not at all; calibrations declared before they run and their results.

Within one file, an annotator labelling the same item again (a pair either way round) is dropped
when it says the same thing and refused when it contradicts itself (a slip, not a decision). A
label the store already holds from that annotator is replaced by the file's: their later label of
an item replaces the earlier one, as on the Label page.
"""

from __future__ import annotations

import json
import os

import polars as pl

from .._errors import UserError, where
from ..files import FLIP, file_sha256, read_labels
from . import _sql
from ._database import ensure_current, next_id, reader, transaction, writer
from .connection import pool_id
from .database import Database


def _candidate(cands: dict, prompt_idx: int, ids: list[str | None]) -> int | None:
    for cid in ids:
        if cid is not None and (prompt_idx, cid) in cands:
            return cands[(prompt_idx, cid)]
    return None


def resolve_labels(con, pid: int, pool: str, path, rows: list[dict], source: str,
                   skipped: dict, accepts_out: list | None = None) -> pl.DataFrame:
    """Place the labels in the pool: the pairs' prompt_idx, a_idx, b_idx (the file's orientation),
    label, annotator, line (the accept rows, prompt_idx, cand_idx, label, annotator, line, appended
    to `accepts_out` when given). Identical repeats of an annotator's label are dropped;
    contradictions refused."""
    prompts = dict(_sql.rows(con, "prompt_ids", pool_id=pid))
    cands = {(pi, cid): ci for pi, cid, ci, _, _ in _sql.rows(con, "candidate_ids", pool_id=pid)}
    lenient = source != "jsonl"
    fld = {"jsonl": ("prompt_id", "a_id", "b_id"), "mtbench": ("question_id", "model_a", "model_b"),
           "llmfao": ("prompt_id", "model_x", "model_y")}[source]
    seen: dict[tuple, tuple[str, int]] = {}
    out, accepts = [], []
    for r in rows:
        pi = prompts.get(r["prompt_id"])
        if pi is None:
            if lenient:
                skipped["prompt not in the pool"] = skipped.get("prompt not in the pool", 0) + 1
                continue
            raise UserError(f"{where(path, r['line'], fld[0])}: unknown prompt {r['prompt_id']!r} in pool '{pool}'")
        if r["kind"] == "accept":
            accepts.append(_accept_row(cands, pi, r, path, pool, seen, skipped))
            continue
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
    accepts = [a for a in accepts if a is not None]
    if not out and not accepts:
        raise UserError(f"{path}: none of its labels is about pool '{pool}' (skipped: {skipped})")
    frame = pl.DataFrame(out, schema=PAIR_SCHEMA)
    if accepts_out is not None:
        accepts_out.append(pl.DataFrame(accepts, schema=ACCEPT_SCHEMA))
    return frame


PAIR_SCHEMA = {"prompt_idx": pl.Int32, "a_idx": pl.Int32, "b_idx": pl.Int32, "label": pl.String,
               "annotator": pl.String, "line": pl.Int32}
ACCEPT_SCHEMA = {"prompt_idx": pl.Int32, "cand_idx": pl.Int32, "label": pl.String, "annotator": pl.String,
                 "line": pl.Int32}


def _accept_row(cands: dict, prompt_idx: int, r: dict, path, pool: str, seen: dict, skipped: dict) -> dict | None:
    """An accept/reject row placed in the pool; None for an identical repeat (a contradiction is refused)."""
    ci = cands.get((prompt_idx, r["a_ids"][0]))
    if ci is None:
        raise UserError(f"{where(path, r['line'], 'candidate_id')}: unknown candidate {r['a_ids'][0]!r} for prompt "
                        f"{r['prompt_id']!r} in pool '{pool}'")
    key = ("accept", ci, r["annotator"])
    if key in seen:
        if seen[key][0] != r["label"]:
            raise UserError(f"{where(path, r['line'], 'label')}: contradicts line {seen[key][1]} "
                            f"(the same annotator {r['annotator']!r} on the same candidate)")
        skipped["repeated label"] = skipped.get("repeated label", 0) + 1
        return None
    seen[key] = (r["label"], r["line"])
    return {"prompt_idx": prompt_idx, "cand_idx": ci, "label": r["label"], "annotator": r["annotator"],
            "line": r["line"]}


def labels_from_file(db, path: str | os.PathLike, pool: str, source: str = "jsonl") -> tuple[pl.DataFrame, dict]:
    """A labels file checked against the pool, without storing it: (labels frame, skipped counts)."""
    rows, skipped = read_labels(path, source)
    ensure_current(db)
    with reader(db) as con:
        return resolve_labels(con, pool_id(con, pool), pool, path, rows, source, skipped), skipped


def import_labels(db, path: str | os.PathLike, pool: str, source: str = "jsonl",
                  replace: bool = False) -> dict:
    """Store a labels file for a pool, whole or not at all. Labels already stored (same annotator,
    pair and verdict) are skipped; `replace` first drops every stored label of the pool."""
    rows, skipped = read_labels(path, source)
    digest = file_sha256(path)
    accepts: list[pl.DataFrame] = []
    with writer(db) as con, transaction(con):
        pid = pool_id(con, pool)
        frame = resolve_labels(con, pid, pool, path, rows, source, skipped, accepts)
        if replace:
            _sql.script(con, "delete_pool_labels", pool_id=pid)
        stored = {(pi, min(a, b), max(a, b), ann): (lab if a < b else FLIP[lab])
                  for pi, a, b, lab, ann in _sql.rows(con, "pool_labels", pool_id=pid)}
        keep, replaced = [], 0
        for r in frame.iter_rows(named=True):
            a, b = r["a_idx"], r["b_idx"]
            key = (r["prompt_idx"], min(a, b), max(a, b), r["annotator"])
            if key in stored:
                if stored[key] == (r["label"] if a < b else FLIP[r["label"]]):
                    continue
                replaced += 1          # the annotator's later label replaces the earlier one
                _sql.execute(con, "delete_pair_label", pool_id=pid, prompt_idx=r["prompt_idx"], lo=key[1],
                             hi=key[2], annotator=r["annotator"])
            keep.append(r)
        extra = {"pool_id": pid, "source": source, "source_file": str(path), "source_sha256": digest}
        if keep:
            _register_insert(con, "label_rows", "insert_labels", pl.DataFrame(keep, schema=frame.schema), extra)
        acc = accepts[0]
        held = {(ci, ann): lab for ci, ann, lab in _sql.rows(con, "pool_accept_labels", pool_id=pid)}
        new_acc = acc.filter([held.get((ci, ann)) != lab for ci, ann, lab in
                              zip(acc["cand_idx"], acc["annotator"], acc["label"])])
        if new_acc.height:
            _register_insert(con, "accept_label_rows", "insert_accept_labels", new_acc, extra)
        replaced += sum((ci, ann) in held for ci, ann in zip(new_acc["cand_idx"], new_acc["annotator"]))
    return {"pool": pool, "source": source, "rows_in_file": len(rows), "imported": len(keep) + new_acc.height,
            "already_stored": frame.height + acc.height - len(keep) - new_acc.height, "replaced": replaced,
            "skipped": skipped, "n_accept": acc.height,
            "n_pairs": frame.select("prompt_idx", pl.min_horizontal("a_idx", "b_idx").alias("lo"),
                                    pl.max_horizontal("a_idx", "b_idx").alias("hi")).unique().height,
            "n_annotators": pl.concat([frame["annotator"], acc["annotator"]]).n_unique()}


def _register_insert(con, view: str, name: str, rows: pl.DataFrame, extra: dict) -> None:
    """Insert `rows` (with the file's columns `extra`) through sql/NAME.sql, which reads them as `view`."""
    rows = rows.with_columns(pl.lit(extra["pool_id"], pl.Int32).alias("pool_id"), pl.lit(extra["source"]).alias("source"),
                             pl.lit(extra["source_file"]).alias("source_file"),
                             pl.lit(extra["source_sha256"]).alias("source_sha256"))
    con.register(view, rows.to_arrow())
    try:
        _sql.execute(con, name)
    finally:
        con.unregister(view)


def declare_calibration(db, pool: str, threshold: float | None, target_width: float | None,
                        labels: str) -> int:
    """Record a calibration before it runs: its acceptance threshold is fixed from here on."""
    with writer(db) as con, transaction(con):
        pid = pool_id(con, pool)
        cid = next_id(con, "calibrations")
        _sql.execute(con, "insert_calibration", calibration_id=cid, pool_id=pid, threshold=threshold,
                     target_width=target_width, labels=labels)
    return cid


def declared_threshold(db, pool: str) -> float | None:
    """The threshold of the pool's latest calibration that declared one (None if none did)."""
    ensure_current(db)
    with reader(db) as con:
        row = _sql.first(con, "declared_threshold", pool=pool)
    return row[0] if row else None


def finish_calibration(db, calibration_id: int, result: dict) -> None:
    """Save the result document with its calibration record."""
    with writer(db) as con, transaction(con):
        _sql.execute(con, "finish_calibration", result=json.dumps(result, allow_nan=False),
                     calibration_id=calibration_id)


def labelled_pools(db: str | os.PathLike | None) -> set[str]:
    """The names of the pools holding human labels; none without a database file."""
    p = Database.of(db).path
    if not p.is_file():
        return set()
    with reader(p) as con:
        return {r[0] for r in _sql.rows(con, "labelled_pools")}


def labels_description(path: str | os.PathLike | None) -> str:
    return "stored" if path is None else f"{path} sha256:{file_sha256(path)}"
