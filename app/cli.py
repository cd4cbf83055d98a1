"""The `judgeaudit` command line (DESIGN.md 'Command line'). Thin: parse flags, call ingest or
audit, print. Errors go to stderr as one message naming the file, line and field; no tracebacks."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import traceback
from pathlib import Path

import click
import polars as pl

DB_HELP = "DuckDB file (default: $JUDGEAUDIT_DB or ./judgeaudit.duckdb)"


def _jsonable(value):
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def emit_json(document: dict) -> None:
    click.echo(json.dumps(_jsonable(document), allow_nan=False, ensure_ascii=False))


def emit_table(frame: pl.DataFrame, title: str | None = None) -> None:
    if title:
        click.echo(title)
    with pl.Config(tbl_cols=-1, tbl_rows=-1, tbl_width_chars=250, float_precision=4,
                   tbl_hide_dataframe_shape=True, tbl_hide_column_data_types=True):
        click.echo(str(frame))


def current(db):
    """Upgrade an older database's schema before reading it; returns db."""
    from ingest.store import ensure_current
    ensure_current(db)
    return db


def db_option(f):
    return click.option("--db", "db", type=click.Path(dir_okay=True, path_type=Path), default=None,
                        help=DB_HELP)(f)


def json_option(f):
    return click.option("--json", "as_json", is_flag=True, help="print one JSON document")(f)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def cli():
    """judgeaudit: audit how an LLM judge's scoring format shapes what it can express."""


@cli.command("import-pool")
@click.argument("file", type=click.Path(path_type=Path, exists=False))
@click.option("--pool", required=True, help="name to store the pool under")
@click.option("--replace", is_flag=True, help="overwrite an existing pool of that name")
@db_option
@json_option
def import_pool_cmd(file, pool, replace, db, as_json):
    """Import a candidate pool (.jsonl, .csv, .parquet; also the UltraFeedback layout)."""
    from ingest.store import import_pool
    result = import_pool(db, file, pool, replace=replace)
    if as_json:
        emit_json(result)
    else:
        click.echo(f"imported pool '{pool}' ({result['layout']} layout): {result['n_prompts']} prompts, "
                   f"{result['n_candidates']} candidates ({result['k_min']}-{result['k_max']} per prompt)"
                   + (f"; replaced {result['replaced_verdicts']} verdicts" if replace else ""))


@cli.command("pools")
@db_option
@json_option
def pools_cmd(db, as_json):
    """List the pools in the database."""
    from audit import pools
    frame = pools(current(db))
    if as_json:
        emit_json({"pools": frame.to_dicts()})
    else:
        emit_table(frame)


@cli.command("import-verdicts")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--pool", required=True, help="the pool the verdicts are about")
@click.option("--format-spec", "format_specs", type=click.Path(path_type=Path), multiple=True,
              help="TOML file defining a format the verdicts use (repeatable)")
@db_option
@json_option
def import_verdicts_cmd(file, pool, format_specs, db, as_json):
    """Import verdicts produced elsewhere (JSONL; parsed with the format's parser)."""
    from ingest.scoring import import_verdicts
    result = import_verdicts(db, file, pool, format_specs=list(format_specs))
    if as_json:
        emit_json(result)
    else:
        statuses = ", ".join(f"{k} {v}" for k, v in result["status_counts"].items()) or "none new"
        click.echo(f"imported {result['imported']} verdicts into pool '{pool}' "
                   f"({result['skipped_existing']} already present); parse status: {statuses}")


@cli.command("score")
@click.option("--pool", required=True)
@click.option("--judge", "judge_spec", required=True,
              help="openai:MODEL@BASE_URL | local:smollm2 | fake:NAME[?noise=..&slot_bias=..&unparsed=..]")
@click.option("--formats", required=True, help="comma-separated, e.g. binary,likert5,numeric100,anchored,tournament")
@click.option("--concurrency", default=8, show_default=True, help="calls in flight at once")
@click.option("--swap-sample", default="0", show_default=True,
              help="re-ask N seeded comparative calls (or 'all') with the responses swapped")
@click.option("--schedule", type=click.Choice(["listing", "balanced", "both"]), default="listing",
              show_default=True, help="tournament slot schedule")
@click.option("--seed", default=0, show_default=True)
@click.option("--timeout", default=60.0, show_default=True, help="seconds per call")
@click.option("--max-retries", default=4, show_default=True)
@click.option("--api-key-env", default=None, help="NAME of the environment variable holding the API key")
@click.option("--judge-name", default=None, help="the judge's name in the store (default: MODEL / smollm2 / NAME)")
@click.option("--format-spec", "format_specs", type=click.Path(path_type=Path), multiple=True,
              help="TOML file defining a format (repeatable)")
@click.option("--logprobs/--no-logprobs", default=True, show_default=True,
              help="ask for token log-probabilities (expected scores)")
@click.option("--decoding", type=click.Choice(["greedy", "constrained"]), default="greedy", show_default=True,
              help="greedy: generate, then parse (the paper's protocol); constrained: restricted to the labels")
@click.option("--constraint", default=None,
              type=click.Choice(["structured_outputs", "guided_choice", "grammar", "json_schema", "response_format"]),
              help="openai: judges under --decoding constrained: the server's mechanism (vLLM structured_outputs "
                   "or guided_choice, llama.cpp grammar or json_schema, OpenAI response_format; default "
                   "response_format); checked with one call before the run")
@click.option("--strategy", default=None, help="mitigation wrappers, combinable: swap, ensemble:K, "
              "cross:SPEC;SPEC, reason, rubric, reference, combined (the judge is stored as NAME+STRATEGY)")
@db_option
@json_option
def score_cmd(pool, judge_spec, formats, concurrency, swap_sample, schedule, seed, timeout, max_retries,
              api_key_env, judge_name, format_specs, logprobs, decoding, constraint, strategy, db, as_json):
    """Score a pool with a judge under several formats. Re-running the same command resumes."""
    from ingest import UserError
    from ingest.scoring import score, ScoreRequest
    if swap_sample != "all":
        try:
            swap_sample = int(swap_sample)
        except ValueError:
            raise UserError(f"--swap-sample: a number or 'all', not {swap_sample!r}") from None
    result = score(ScoreRequest(
        pool=pool, judge=judge_spec, formats=[f.strip() for f in formats.split(",") if f.strip()], db=db,
        concurrency=concurrency, swap_sample=swap_sample, schedule=schedule, seed=seed, timeout=timeout,
        max_retries=max_retries, api_key_env=api_key_env, judge_name=judge_name, logprobs=logprobs,
        decoding=decoding, constraint=constraint, format_specs=list(format_specs), strategy=strategy))
    if as_json:
        emit_json(result)
    else:
        click.echo(f"{result['status']}: {result['made']} calls made ({result['already_done']} already done, "
                   f"{result['recovered_from_journal']} recovered), {result['failed']} failed, "
                   f"{result['unparsed']} unparsed")
        for note in result["notes"]:
            click.echo(f"note: {note}")


@cli.command("audit")
@click.option("--pool", required=True)
@click.option("--seed", default=0, show_default=True, help="seed of the top-1 tie-break")
@db_option
@json_option
def audit_cmd(pool, seed, db, as_json):
    """Diagnostics per (judge, format): levels, ties, agreement with the reference."""
    from audit import audit_cells
    frame = audit_cells(current(db), pool, seed=seed)
    if as_json:
        emit_json({"pool": pool, "cells": frame.to_dicts()})
    else:
        emit_table(frame)


@cli.command("bias")
@click.option("--pool", required=True)
@click.option("--seed", default=0, show_default=True, help="seed of the bootstrap")
@click.option("--n-boot", default=2000, show_default=True, help="bootstrap resamples")
@db_option
@json_option
def bias_cmd(pool, seed, n_boot, db, as_json):
    """Slot-bias decomposition per (judge, comparative format)."""
    from audit import bias
    frame = bias(current(db), pool, seed=seed, n_boot=n_boot)
    if as_json:
        emit_json({"pool": pool, "cells": frame.to_dicts()})
    else:
        emit_table(frame)


@cli.command("levels")
@click.option("--pool", required=True)
@click.option("--alpha", "alphas", multiple=True, type=float,
              help="orders of D_alpha (repeatable; default 0, 0.5, 1, 2, inf)")
@db_option
@json_option
def levels_cmd(pool, alphas, db, as_json):
    """Effective number of levels D_alpha per (judge, format)."""
    from audit import effective_levels
    frame = effective_levels(current(db), pool, tuple(alphas) or (0, 0.5, 1, 2, float("inf")))
    emit_json({"pool": pool, "rows": frame.to_dicts()}) if as_json else emit_table(frame)


@cli.command("stability")
@click.option("--pool", required=True)
@click.option("--n-boot", default=200, show_default=True, help="subsamples per cell")
@click.option("--fraction", default=1 / 3, show_default=True, help="subsample size / pool size")
@click.option("--seed", default=0, show_default=True)
@db_option
@json_option
def stability_cmd(pool, n_boot, fraction, seed, db, as_json):
    """Subsampling stability of distinct, D1 and D2 per (judge, format)."""
    from audit import stability
    frame = stability(current(db), pool, n_boot=n_boot, fraction=fraction, seed=seed)
    emit_json({"pool": pool, "rows": frame.to_dicts()}) if as_json else emit_table(frame)


@cli.command("positions")
@click.option("--pool", required=True)
@click.option("--seed", default=0, show_default=True)
@db_option
@json_option
def positions_cmd(pool, seed, db, as_json):
    """Tournament selections of first- / last-listed candidates against 1/k."""
    from audit import position_selection
    frame = position_selection(current(db), pool, seed=seed)
    emit_json({"pool": pool, "cells": frame.to_dicts()}) if as_json else emit_table(frame)


@cli.command("variance")
@click.option("--pool", required=True)
@db_option
@json_option
def variance_cmd(pool, db, as_json):
    """Format / judge / residual shares of each diagnostic, with leave-one-judge-out."""
    from audit import variance
    frame = variance(current(db), pool)
    emit_json({"pool": pool, "rows": frame.to_dicts()}) if as_json else emit_table(frame)


@cli.command("report")
@click.option("--pool", required=True)
@click.option("--out", "out", required=True, type=click.Path(path_type=Path),
              help="FILE.md (Markdown) or FILE.json (the checklist document)")
@click.option("--seed", default=0, show_default=True)
@db_option
@json_option
def report_cmd(pool, out, seed, db, as_json):
    """Export the reporting checklist (Markdown or JSON), from the database alone."""
    from audit import checklist, checklist_markdown
    from ingest import UserError
    if out.suffix.lower() not in (".md", ".json"):
        raise UserError(f"--out {out}: use a .md or .json file name")
    doc = checklist(current(db), pool, seed=seed)
    text = json.dumps(_jsonable(doc), indent=2, allow_nan=False) if out.suffix.lower() == ".json" \
        else checklist_markdown(doc)
    out.write_text(text, encoding="utf-8")
    if as_json:
        emit_json({"out": str(out), "cells": len(doc["cells"])})
    else:
        click.echo(f"wrote {out} ({len(doc['cells'])} judge x format cells)")


@cli.command("app")
@click.option("--port", default=8501, show_default=True)
@click.option("--address", default="localhost", show_default=True,
              help="interface to listen on (localhost keeps the dashboard private; any other "
                   "needs a login: $JUDGEAUDIT_APP_PASSWORD or [auth] in .streamlit/secrets.toml)")
@db_option
def app_cmd(port, address, db):
    """Start the dashboard (seeds an empty database with the bundled demo first)."""
    from app.auth import check_serving
    from ingest import db_path
    from ingest.demo import seed_demo
    mode = check_serving(address)   # beyond localhost only with a login (README: for a team)
    if mode:
        click.echo(f"login required ({mode})", err=True)
    path = db_path(db).resolve()
    seeded = seed_demo(path)
    if seeded:
        click.echo(f"seeded {path} with the bundled demo: {', '.join(seeded)}", err=True)
    env = {**os.environ, "JUDGEAUDIT_DB": str(path)}
    main = Path(__file__).with_name("main.py")
    raise SystemExit(subprocess.call(
        [sys.executable, "-m", "streamlit", "run", str(main), "--server.port", str(port),
         "--server.address", address, "--browser.gatherUsageStats", "false"], env=env))


# Subcommands that live in their own modules (app/cli_<area>.py), one line each.
def _register_commands() -> None:
    from .cli_runs import cancel_cmd, runs_cmd; cli.add_command(runs_cmd); cli.add_command(cancel_cmd)
    from .cli_trust import rank_cmd; cli.add_command(rank_cmd)
    from .cli_trust import calibrate_cmd, import_labels_cmd; cli.add_command(import_labels_cmd); cli.add_command(calibrate_cmd)
    from .cli_trust import drift_cmd; cli.add_command(drift_cmd)
    from .cli_eval import contrasts_cmd, evaluate_cmd; cli.add_command(evaluate_cmd); cli.add_command(contrasts_cmd)
    from .cli_probe import mitigations_cmd, probe_cmd; cli.add_command(probe_cmd); cli.add_command(mitigations_cmd)
    from .cli_train import curate_cmd, train_cmd; cli.add_command(curate_cmd); cli.add_command(train_cmd)


if __name__ != "__main__":      # `python -m app.cli` registers them on the imported module below
    _register_commands()


def main(argv: list[str] | None = None) -> int:
    from audit import AuditError
    from ingest import UserError
    try:
        cli.main(args=argv, prog_name="judgeaudit", standalone_mode=False)
        return 0
    except (UserError, AuditError) as exc:
        click.echo(f"judgeaudit: error: {exc}", err=True)
        return 1
    except click.exceptions.Abort:
        click.echo("judgeaudit: aborted", err=True)
        return 130
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except Exception as exc:  # an unexpected failure: one line, the traceback only on request
        if os.environ.get("JUDGEAUDIT_DEBUG"):
            traceback.print_exc()
        click.echo(f"judgeaudit: internal error: {type(exc).__name__}: {exc} "
                   "(set JUDGEAUDIT_DEBUG=1 for the traceback)", err=True)
        return 3


if __name__ == "__main__":
    from app.cli import main as imported_main   # the module proper, with every subcommand registered
    sys.exit(imported_main())
