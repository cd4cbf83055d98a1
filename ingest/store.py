"""Every write to the database goes through this module, each inside one transaction."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import polars as pl

from . import _db
from ._anchor import reference_anchors
from ._files import first_repeat, first_row
from ._errors import UserError
from ._pool_file import pool_shape, read_pool
from ._verdict_file import read_verdicts
from .formats import BUILTIN, Format, format_from_row, load_format_spec

VERDICT_COLUMNS = ("run_id", "pool_id", "judge_id", "format_id", "prompt_idx", "a_idx", "b_idx",
                   "swapped", "sample", "raw", "label", "value", "status", "error", "attempts",
                   "latency_ms", "tokens_in", "tokens_out", "label_probs", "expected", "decoding")


def _next_id(con, table: str, column: str) -> int:
    """A fresh id for `table`, never one handed out before (even if its rows were deleted): the
    high-water mark lives in id_marks. Table and column names come from this module only."""
    used = con.execute(f"SELECT coalesce(max({column}), 0) FROM {table}").fetchone()[0]
    mark = _db.one(con, "SELECT last_id FROM id_marks WHERE name = $n", {"n": table})
    new = max(used, mark[0] if mark else 0) + 1
    if mark:
        con.execute("UPDATE id_marks SET last_id = $id WHERE name = $n", {"id": new, "n": table})
    else:
        con.execute("INSERT INTO id_marks VALUES ($n, $id)", {"n": table, "id": new})
    return new


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def pool_id(con, name: str) -> int | None:
    row = _db.one(con, "SELECT pool_id FROM pools WHERE name = $name", {"name": name})
    return row[0] if row else None


def _delete_pool(con, pid: int) -> None:
    """Everything stored about a pool (a --replace starts it anew): its children first (subset
    members; a study's generations and outcomes), then every table with a pool_id column."""
    con.execute("DELETE FROM subset_members WHERE subset_id IN "
                "(SELECT subset_id FROM subsets WHERE pool_id = $p)", {"p": pid})
    for child in ("generations", "evaluations"):
        con.execute(f"DELETE FROM {child} WHERE study_id IN (SELECT study_id FROM studies WHERE pool_id = $p)",
                    {"p": pid})
    tables = [r[0] for r in con.execute(
        "SELECT DISTINCT table_name FROM information_schema.columns WHERE column_name = 'pool_id' "
        "AND table_name <> 'pools' AND table_schema = 'main' ORDER BY 1").fetchall()]
    for table in tables:        # names from the catalogue, never from input
        con.execute(f'DELETE FROM "{table}" WHERE pool_id = $p', {"p": pid})
    con.execute("DELETE FROM pools WHERE pool_id = $p", {"p": pid})


def import_pool(db: str | os.PathLike | None, path: str | os.PathLike, name: str,
                replace: bool = False) -> dict:
    """Validate a pool file and store it under `name`. Lands whole or not at all."""
    if not name or not name.strip():
        raise UserError("--pool: a pool name is required")
    data = read_pool(path)          # all validation happens before the database is touched
    digest = _sha256(Path(path))
    with _db.writer(db) as con, _db.transaction(con):
        old = pool_id(con, name)
        if old is not None and not replace:
            raise UserError(f"pool '{name}' already exists (use --replace to overwrite it and "
                            "its verdicts)")
        replaced = 0
        if old is not None:
            replaced = _db.one(con, "SELECT count(*) FROM verdicts WHERE pool_id = $p", {"p": old})[0]
            _delete_pool(con, old)
        pid = _next_id(con, "pools", "pool_id")
        con.execute("INSERT INTO pools (pool_id, name, source_file, source_sha256, layout) "
                    "VALUES ($id, $name, $file, $sha, $layout)",
                    {"id": pid, "name": name, "file": str(path), "sha": digest, "layout": data.layout})
        prompts = data.prompts.with_columns(pl.lit(pid, pl.Int32).alias("pool_id"))
        candidates = data.candidates.with_columns(pl.lit(pid, pl.Int32).alias("pool_id"))
        con.register("prompts_df", prompts.to_arrow())
        con.register("candidates_df", candidates.to_arrow())
        con.execute("INSERT INTO prompts (pool_id, prompt_idx, prompt_id, prompt) "
                    "SELECT pool_id, prompt_idx, prompt_id, prompt FROM prompts_df")
        con.execute("INSERT INTO candidates (pool_id, cand_idx, prompt_idx, candidate_id, position, "
                    "response, reference, model, split) SELECT pool_id, cand_idx, prompt_idx, "
                    "candidate_id, position, response, reference, model, split FROM candidates_df")
        con.unregister("prompts_df")
        con.unregister("candidates_df")
    return {"pool": name, "layout": data.layout, "replaced_verdicts": replaced,
            **pool_shape(data.candidates)}


def judge_identity(provider: str, model: str | None = None, endpoint: str | None = None,
                   params: dict | None = None, decoding: dict | None = None) -> dict:
    """What a judge name stands for (DESIGN.md 'Judge identity'): provider, model, endpoint (without
    credentials or query string), the simulated judge's parameters and the decoding settings."""
    return {"provider": provider, "model": model, "endpoint": endpoint, "params": params or {},
            "decoding": decoding or {}}


def _identity_differences(stored: dict, wanted: dict) -> list[str]:
    out = []
    for key in ("provider", "model", "endpoint", "params", "decoding"):
        if key in stored and stored[key] != wanted.get(key):
            out.append(f"{key} {json.dumps(stored[key])} is stored, this run has {json.dumps(wanted.get(key))}")
    return out


def ensure_judge(con, name: str, provider: str, model: str | None = None,
                 endpoint: str | None = None, settings: dict | None = None,
                 identity: dict | None = None) -> int:
    """The judge's id, creating it on first use. A known name with another identity is refused,
    saying what differs. Settings never include secrets."""
    identity = identity or judge_identity(provider, model, endpoint)
    row = _db.one(con, "SELECT judge_id, provider, model, endpoint, identity FROM judges WHERE name = $n",
                  {"n": name})
    if row:
        jid, s_provider, s_model, s_endpoint, s_identity = row
        # Judges stored before identities were recorded are known by provider, model and endpoint.
        stored = json.loads(s_identity) if s_identity else {"provider": s_provider, "model": s_model,
                                                              "endpoint": s_endpoint}
        differences = _identity_differences(stored, identity)
        if differences:
            raise UserError(f"judge name '{name}' already stands for another judge: "
                            + "; ".join(differences) + ". Score this one under its own name with "
                            "--judge-name (e.g. --judge-name '" + f"{name}-2'" + ")")
        if not s_identity:
            con.execute("UPDATE judges SET identity = $i WHERE judge_id = $id",
                        {"i": json.dumps(identity), "id": jid})
        return jid
    jid = _next_id(con, "judges", "judge_id")
    con.execute("INSERT INTO judges (judge_id, name, provider, model, endpoint, settings, identity) "
                "VALUES ($id, $name, $provider, $model, $endpoint, $settings, $identity)",
                {"id": jid, "name": name, "provider": provider, "model": model, "endpoint": endpoint,
                 "settings": json.dumps(settings or {}), "identity": json.dumps(identity)})
    return jid


def stored_formats(con) -> dict[str, Format]:
    rows = con.execute("SELECT name, spec, template FROM formats").fetchall()
    return {name: format_from_row({"spec": spec, "template": template}) for name, spec, template in rows}


def ensure_format(con, fmt: Format) -> int:
    """The format's id, registering it on first use; a different definition under a known name
    is refused."""
    row = _db.one(con, "SELECT format_id, spec_hash FROM formats WHERE name = $n", {"n": fmt.name})
    if row:
        if row[1] != fmt.spec_hash:
            raise UserError(f"format '{fmt.name}' is already stored with a different definition; "
                            "give the new one another name")
        return row[0]
    fid = _next_id(con, "formats", "format_id")
    con.execute("INSERT INTO formats (format_id, name, kind, pairing, spec, value_lo, value_hi, "
                "template, spec_hash) VALUES ($id, $name, $kind, $pairing, $spec, $lo, $hi, "
                "$template, $hash)",
                {"id": fid, "name": fmt.name, "kind": fmt.kind, "pairing": fmt.pairing,
                 "spec": json.dumps(fmt.spec()), "lo": fmt.value_lo, "hi": fmt.value_hi,
                 "template": fmt.template, "hash": fmt.spec_hash})
    return fid


def start_run(con, pool: int, judge: int, fmt: Format, format_id: int, source: str,
              source_file: str | None = None, template: str | None = None,
              decoding: dict | None = None, judge_model: str | None = None,
              schedule: str | None = None, seed: int | None = None, notes: str | None = None,
              job_id: int | None = None) -> int:
    """Record how one (judge, format) cell's verdicts are being made; `job_id` is the background
    run (runs table) doing it, if any."""
    rid = _next_id(con, "cell_runs", "run_id")
    con.execute("INSERT INTO cell_runs (run_id, pool_id, judge_id, format_id, source, source_file, "
                "template, template_hash, decoding, judge_model, schedule, seed, notes, status, job_id) "
                "VALUES ($id, $pool, $judge, $fmt, $source, $file, $template, $thash, $decoding, "
                "$model, $schedule, $seed, $notes, 'running', $job)",
                {"id": rid, "pool": pool, "judge": judge, "fmt": format_id, "source": source, "job": job_id,
                 "file": source_file, "template": template,
                 "thash": hashlib.sha256(template.encode()).hexdigest() if template else None,
                 "decoding": json.dumps(decoding) if decoding is not None else None,
                 "model": judge_model, "schedule": schedule, "seed": seed, "notes": notes})
    return rid


def finish_run(con, run_id: int, status: str = "finished", judge_model: str | None = None) -> None:
    """Close a run; `judge_model` (the model id the judge reported) replaces the recorded one."""
    con.execute("UPDATE cell_runs SET status = $s, finished_at = current_timestamp, "
                "judge_model = coalesce($m, judge_model) WHERE run_id = $id",
                {"s": status, "m": judge_model, "id": run_id})


def close_orphan_cell_runs(con, pool: int, judge: int, reason: str) -> int:
    """Mark as failed the cell runs of (pool, judge) still 'running': called by a run that holds the
    pool and judge exclusively, so no live process is making them."""
    n = _db.one(con, "SELECT count(*) FROM cell_runs WHERE pool_id = $p AND judge_id = $j AND status = 'running'",
                {"p": pool, "j": judge})[0]
    if n:
        con.execute("UPDATE cell_runs SET status = 'failed', finished_at = current_timestamp, "
                    "notes = concat_ws('; ', notes, $why) WHERE pool_id = $p AND judge_id = $j "
                    "AND status = 'running'", {"p": pool, "j": judge, "why": reason})
    return n


def _complete(rows: pl.DataFrame) -> pl.DataFrame:
    """Verdict rows with every column of VERDICT_COLUMNS (missing optional ones null/default)."""
    defaults = {"b_idx": pl.Int32, "raw": pl.String, "label": pl.String, "value": pl.Float64,
                "error": pl.String, "latency_ms": pl.Float64, "tokens_in": pl.Int32,
                "tokens_out": pl.Int32, "label_probs": pl.String, "expected": pl.Float64}
    rows = rows.with_columns([pl.lit(None, dtype).alias(c) for c, dtype in defaults.items()
                              if c not in rows.columns])
    fixed = {"swapped": pl.lit(False), "attempts": pl.lit(1, pl.Int32), "decoding": pl.lit("greedy")}
    rows = rows.with_columns([value.alias(c) for c, value in fixed.items() if c not in rows.columns])
    return rows.select(VERDICT_COLUMNS)


def insert_verdicts(con, rows: pl.DataFrame) -> int:
    """Append verdict rows for calls not stored yet (columns from VERDICT_COLUMNS; missing optional
    ones become null). A call already stored violates the unique index and fails the transaction."""
    rows = _complete(rows)
    con.register("verdict_rows", rows.to_arrow())
    try:
        con.execute(f"INSERT INTO verdicts ({', '.join(VERDICT_COLUMNS)}) "
                    f"SELECT {', '.join(VERDICT_COLUMNS)} FROM verdict_rows")
    finally:
        con.unregister("verdict_rows")
    return rows.height


# One judge call, within a pool: the database holds at most one row per key (migration 003).
CALL_KEY = ["judge_id", "format_id", "decoding", "prompt_idx", "a_idx", "b_idx", "sample"]
_SAME_CALL = " AND ".join(["v.pool_id = n.pool_id"] + [
    f"v.{c} IS NOT DISTINCT FROM n.{c}" if c == "b_idx" else f"v.{c} = n.{c}" for c in CALL_KEY])
_ANSWER_COLUMNS = [c for c in VERDICT_COLUMNS if c not in CALL_KEY and c not in ("pool_id", "attempts")]


def insert_answers(con, rows: pl.DataFrame) -> dict:
    """Upsert a scoring run's batch (DESIGN.md 'Judge identity'): a call not stored yet is inserted;
    a stored failed attempt is replaced by the new row (attempts add up); a stored answer (parsed
    or not) is never replaced. Every match is within the row's own pool. Returns the counts."""
    rows = _complete(rows)
    if rows.height == 0:
        return {"inserted": 0, "replaced": 0, "kept": 0}
    # Within the batch too, one row per call: an answer before a failed attempt, then the latest.
    rows = (rows.with_row_index("_order").sort([pl.col("status") != "failed", "_order"])
            .unique(subset=["pool_id", *CALL_KEY], keep="last", maintain_order=True).drop("_order"))
    con.register("new_rows", rows.to_arrow())
    try:
        replaced = con.execute(
            f"UPDATE verdicts v SET {', '.join(f'{c} = n.{c}' for c in _ANSWER_COLUMNS)}, "
            f"attempts = v.attempts + n.attempts, created_at = current_timestamp "
            f"FROM new_rows n WHERE {_SAME_CALL} AND v.status = 'failed'").fetchall()[0][0]
        inserted = con.execute(
            f"INSERT INTO verdicts ({', '.join(VERDICT_COLUMNS)}) SELECT {', '.join('n.' + c for c in VERDICT_COLUMNS)} "
            f"FROM new_rows n WHERE NOT EXISTS (SELECT 1 FROM verdicts v WHERE {_SAME_CALL})").fetchall()[0][0]
    finally:
        con.unregister("new_rows")
    return {"inserted": inserted, "replaced": replaced, "kept": rows.height - inserted - replaced}


def unanswered(con, calls: pl.DataFrame, pool: int, judge: int | None = None) -> pl.DataFrame:
    """The calls (CALL_KEY columns) the pool holds no answer for, from any judge or one; a failed
    attempt is not an answer."""
    done = _db.frame(con, f"SELECT {', '.join(CALL_KEY)} FROM verdicts "
                          "WHERE pool_id = $p AND status <> 'failed' AND ($j IS NULL OR judge_id = $j)",
                     {"p": pool, "j": judge})
    return calls.join(done.cast({c: calls.schema[c] for c in CALL_KEY}), on=CALL_KEY, how="anti",
                      nulls_equal=True)


def _parse_distinct(rows: pl.DataFrame, formats: dict[str, Format]) -> pl.DataFrame:
    """Parse each distinct (format, raw) once: judges repeat themselves, so this is fast."""
    pairs = rows.select("format", "raw").unique()
    parsed = [formats[f].parse(raw) if raw is not None else None for f, raw in pairs.iter_rows()]
    return pairs.with_columns(
        pl.Series("value", [p.value if p else None for p in parsed], pl.Float64),
        pl.Series("label", [p.label if p else None for p in parsed], pl.String),
        pl.Series("status", [p.status if p else "empty" for p in parsed], pl.String))


def _expected(t, rows: pl.DataFrame, formats: dict[str, Format]) -> pl.Series:
    """The expected value of each row's `label_probs` (pointwise formats; null otherwise), after
    checking that every label in it is one of its format's labels."""
    out = []
    for i, (fmt_name, probs) in enumerate(zip(rows["format"].to_list(), rows["label_probs"].to_list())):
        if probs is None:
            out.append(None)
            continue
        fmt = formats[fmt_name]
        probs = json.loads(probs)
        unknown = [k for k in probs if k not in fmt.label_values()]
        if unknown:
            raise UserError(f"{t.at(int(rows['_row'][i]), 'label_probs')}: {unknown[0]!r} is not a label of "
                            f"format {fmt_name!r}")
        out.append(fmt.expected_value(probs) if fmt.kind == "pointwise" else None)
    return pl.Series("expected", out, pl.Float64)


def import_verdicts(db: str | os.PathLike | None, path: str | os.PathLike, pool: str,
                    format_specs: list[str | os.PathLike] | str | os.PathLike | None = None) -> dict:
    """Import verdicts made elsewhere (DESIGN.md 'Verdict file'). The whole file lands or nothing.

    Rows whose call (judge, format, prompt, candidates, sample) is already stored are skipped, so
    importing the same file twice changes nothing.
    """
    t, rows = read_verdicts(path)
    if isinstance(format_specs, (str, os.PathLike)):
        format_specs = [format_specs]
    extra = {str(p): load_format_spec(p) for p in format_specs or []}
    with _db.writer(db) as con, _db.transaction(con):
        pid = pool_id(con, pool)
        if pid is None:
            raise UserError(f"no pool named '{pool}' (see `judgeaudit pools`)")
        formats = {**stored_formats(con), **BUILTIN}
        for spec_path, fmt in extra.items():
            if fmt.name in formats and formats[fmt.name].spec_hash != fmt.spec_hash:
                raise UserError(f"{spec_path}: format '{fmt.name}' is already stored with a "
                                "different definition; give this one another name")
            formats[fmt.name] = fmt
        row = first_row(~rows["format"].is_in(list(formats)))
        if row is not None:
            raise UserError(f"{t.at(row, 'format')}: unknown format {rows['format'][row]!r} (known: "
                            f"{', '.join(sorted(formats))}; define others with --format-spec)")
        kinds = pl.DataFrame({"format": list(formats), "kind": [f.kind for f in formats.values()],
                              "pairing": [f.pairing for f in formats.values()]})
        rows = rows.join(kinds, on="format", how="left")
        point = rows["kind"] == "pointwise"
        for name, mask in (("candidate_id", point), ("a_id", ~point), ("b_id", ~point)):
            row = first_row(mask & rows[name].is_null())
            if row is not None:
                kind = "pointwise" if name == "candidate_id" else "comparative"
                raise UserError(f"{t.at(row, name)}: required for the {kind} format {rows['format'][row]!r}")

        prompts = _db.frame(con, "SELECT prompt_id, prompt_idx FROM prompts WHERE pool_id = $p", {"p": pid})
        cands = _db.frame(con, "SELECT prompt_idx, candidate_id, cand_idx, position, reference "
                            "FROM candidates WHERE pool_id = $p", {"p": pid})
        rows = rows.join(prompts, on="prompt_id", how="left")
        row = first_row(rows["prompt_idx"].is_null())
        if row is not None:
            raise UserError(f"{t.at(row, 'prompt_id')}: unknown prompt {rows['prompt_id'][row]!r} in pool '{pool}'")
        rows = rows.with_columns(pl.when(point).then(pl.col("candidate_id")).otherwise(pl.col("a_id"))
                                 .alias("_a"))
        lookup = cands.select("prompt_idx", "candidate_id", "cand_idx", "position")
        rows = rows.join(lookup.rename({"candidate_id": "_a", "cand_idx": "a_idx", "position": "_pa"}),
                         on=["prompt_idx", "_a"], how="left") \
            .join(lookup.rename({"candidate_id": "b_id", "cand_idx": "b_idx", "position": "_pb"}),
                  on=["prompt_idx", "b_id"], how="left").sort("_row")
        for fld, col in (("candidate_id", "a_idx"), ("a_id", "a_idx"), ("b_id", "b_idx")):
            mask = rows[col].is_null() & (point if fld == "candidate_id" else ~point)
            if fld == "b_id":
                mask = mask & rows["b_id"].is_not_null()
            row = first_row(mask)
            if row is not None:
                value = rows["_a"][row] if col == "a_idx" else rows["b_id"][row]
                raise UserError(f"{t.at(row, fld)}: unknown candidate {value!r} for prompt "
                                f"{rows['prompt_id'][row]!r} in pool '{pool}'")

        dup = first_repeat(rows, ["judge", "format", "decoding", "prompt_idx", "a_idx", "b_idx", "sample"])
        if dup:
            raise UserError(f"{t.at(dup[0])}: the same call (judge, format, decoding, prompt, candidates, "
                            f"sample) appears twice; first at line {t.line_of(dup[1])}")
        rows = rows.with_columns(_expected(t, rows, formats))

        rows = rows.join(_parse_distinct(rows, formats), on=["format", "raw"], how="left",
                         nulls_equal=True)
        rows = rows.with_columns(
            pl.when(pl.col("raw").is_null() & pl.col("error").is_not_null()).then(pl.lit("failed"))
            .otherwise(pl.col("status")).alias("status"))
        rows = _orient(rows, cands)

        judges = {j: ensure_judge(con, j, "imported") for j in rows["judge"].unique().to_list()}
        fids = {f: ensure_format(con, formats[f]) for f in rows["format"].unique().to_list()}
        rows = rows.with_columns(pl.col("judge").replace_strict(judges, return_dtype=pl.Int32).alias("judge_id"),
                                 pl.col("format").replace_strict(fids, return_dtype=pl.Int32).alias("format_id"))
        # `decoding` comes from the file: greedy (the paper's protocol: generate, then parse) by default.
        existing = _db.frame(con, f"SELECT {', '.join(CALL_KEY)} FROM verdicts WHERE pool_id = $p "
                                  "AND list_contains($j, judge_id) AND list_contains($f, format_id)",
                             {"p": pid, "j": list(judges.values()), "f": list(fids.values())})
        n_in_file = rows.height
        if existing.height:
            rows = rows.join(existing.cast({c: rows.schema[c] for c in CALL_KEY}), on=CALL_KEY, how="anti",
                             nulls_equal=True)
        runs = {}
        for (judge, fmt_name) in rows.select("judge", "format").unique().sort("judge", "format").iter_rows():
            runs[(judge, fmt_name)] = start_run(con, pid, judges[judge], formats[fmt_name], fids[fmt_name],
                                                "import", source_file=str(path))
        if rows.height:
            run_frame = pl.DataFrame({"judge": [k[0] for k in runs], "format": [k[1] for k in runs],
                                      "run_id": list(runs.values())})
            rows = rows.join(run_frame, on=["judge", "format"]).with_columns(pl.lit(pid).alias("pool_id"))
            insert_verdicts(con, rows)
        for rid in runs.values():
            finish_run(con, rid)
        counts = rows.group_by("status").len().sort("status") if rows.height else None
    return {"pool": pool, "rows_in_file": n_in_file, "imported": rows.height,
            "skipped_existing": n_in_file - rows.height,
            "status_counts": dict(counts.iter_rows()) if counts is not None else {},
            "judges": sorted(judges), "formats": sorted(fids)}


def _orient(rows: pl.DataFrame, cands: pl.DataFrame) -> pl.DataFrame:
    """Mark comparative calls made in the reverse orientation of their item (DESIGN.md 'bias').

    Anchored: reverse when the anchor is in slot A against another candidate. The anchor comes
    from references; for a prompt without complete references it is the candidate shown as B most
    often (forward calls always show the anchor as B). Tournament: reverse when the later-listed
    candidate is in slot A.
    """
    if not (rows["pairing"] != "pointwise").any():
        return rows.with_columns(pl.lit(False).alias("swapped"))
    anchors = reference_anchors(cands)
    anch_rows = rows.filter(pl.col("pairing") == "anchored")
    if anch_rows.height:
        missing = anch_rows.join(anchors, on="prompt_idx", how="anti")
        if missing.height:
            mode = missing.group_by("prompt_idx", "b_idx").len() \
                .sort("prompt_idx", "len", "b_idx", descending=[False, True, False]) \
                .group_by("prompt_idx", maintain_order=True).first() \
                .select("prompt_idx", pl.col("b_idx").alias("anchor_idx"))
            anchors = pl.concat([anchors, mode.with_columns(pl.col("anchor_idx").cast(anchors["anchor_idx"].dtype))])
    rows = rows.join(anchors, on="prompt_idx", how="left")
    swapped = (pl.when(pl.col("pairing") == "anchored")
               .then((pl.col("a_idx") == pl.col("anchor_idx")) & (pl.col("b_idx") != pl.col("a_idx")))
               .when(pl.col("pairing") == "tournament").then(pl.col("_pa") > pl.col("_pb"))
               .otherwise(False))
    return rows.with_columns(swapped.fill_null(False).alias("swapped")).drop("anchor_idx")
