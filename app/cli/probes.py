"""`judgeaudit probe` (the built-in bias probes) and `judgeaudit mitigations` (strategies against
their baseline, with cost): docs/command-line.md#probes-and-mitigations,
docs/metrics.md#probes and docs/metrics.md#mitigations."""

from __future__ import annotations

import click
import polars as pl

from ._common import current, db_option, emit_json, emit_table, json_option, run_command


@click.command("probe")
@click.option("--judge", "judge_spec", required=True, help="openai:MODEL@BASE_URL | local:smollm2 | fake:NAME[?...]")
@click.option("--strategy", default=None,
              help="mitigations, combinable: swap, ensemble:K, cross:SPEC;SPEC, reason, rubric, reference, combined")
@click.option("--sample", type=int, default=None, help="probe N seeded pairs per probe type (default: all 325)")
@click.option("--seed", default=0, show_default=True, help="seed of the sample and the bootstrap")
@click.option("--judge-name", default=None, help="the judge's name in the store (default: NAME+STRATEGY)")
@click.option("--concurrency", default=4, show_default=True, help="calls in flight at once")
@click.option("--timeout", default=60.0, show_default=True, help="seconds per call")
@click.option("--max-retries", default=4, show_default=True)
@click.option("--api-key-env", default=None, help="NAME of the environment variable holding the API key")
@click.option("--n-boot", default=2000, show_default=True, help="bootstrap resamples")
@db_option
@json_option
@run_command
def probe_cmd(judge_spec, strategy, sample, seed, judge_name, concurrency, timeout, max_retries, api_key_env,
              n_boot, db, as_json):
    """Run a judge on the built-in probe pairs in both orders; bias per probe type.

    A background run (kind `probe`): `judgeaudit runs` lists it, `judgeaudit cancel` stops it, and
    running the same command again resumes it."""
    from audit import mitigations, probes
    from ingest.scoring.probes import run_probe
    summary = run_probe(db, judge_spec, strategy=strategy, sample=sample, seed=seed, judge_name=judge_name,
                        concurrency=concurrency, api_key_env=api_key_env, timeout=timeout,
                        max_retries=max_retries, progress=not as_json)
    path = current(db)
    table = probes(path, summary["pool"], judge=summary["judge"], seed=seed, n_boot=n_boot)
    cost = mitigations(path, summary["pool"]).filter(pl.col("judge") == summary["judge"])
    doc = {"pool": summary["pool"], "judge": summary["judge"], "strategy": strategy, "status": summary["status"],
           "probes": table.to_dicts(),
           "cost": cost.select("calls", "calls_per_verdict", "tokens_in", "tokens_out", "agreement")
           .to_dicts()[0] if cost.height else None}
    if as_json:
        emit_json(doc)
    else:
        click.echo(f"{summary['status']}: judge '{summary['judge']}' on pool '{summary['pool']}' "
                   f"({summary['made']} calls made, {summary['already_done']} already done)")
        emit_table(table.drop("treated", "control"))


@click.command("mitigations")
@click.option("--pool", default="probes", show_default=True, help="a probe pool, or any pool with references")
@click.option("--baseline", default=None, help="the judge every strategy is compared with "
                                                "(default: the judge a strategy wraps)")
@db_option
@json_option
def mitigations_cmd(pool, baseline, db, as_json):
    """Strategies against their baseline: agreement with the references (the probes' expected
    verdicts), cost in calls and tokens, McNemar with Holm, the cost-agreement frontier."""
    from audit import mitigations
    frame = mitigations(current(db), pool, baseline=baseline)
    emit_json({"pool": pool, "rows": frame.to_dicts()}) if as_json else emit_table(frame)
