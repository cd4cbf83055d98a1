"""`judgeaudit score`: score a pool with a judge under several formats; re-running resumes
(docs/command-line.md#judgeaudit-score)."""

from __future__ import annotations

from pathlib import Path

import click

from ._common import CommaList, db_option, emit_json, json_option, run_command, refresh_derived
from .batch import print_export
from ingest import UserError


@click.command("score")
@click.option("--pool", required=True)
@click.option("--judge", "judge_spec", required=True,
              help="openai:MODEL@BASE_URL | local:smollm2 | fake:NAME[?noise=..&slot_bias=..&unparsed=..]")
@click.option("--formats", required=True, type=CommaList(), help="comma-separated, e.g. binary,likert5,numeric100,anchored,tournament")
@click.option("--concurrency", default=8, show_default=True, help="calls in flight at once (per endpoint)")
@click.option("--drain-after", default=3, show_default=True, type=click.IntRange(min=1),
              help="several endpoints: failed attempts in a row that drain one (its calls go to the others)")
@click.option("--cooldown", default=30.0, show_default=True, type=click.FloatRange(min=0),
              help="several endpoints: seconds a drained endpoint rests before it is tried again")
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
@click.option("--decoding", type=click.Choice(["greedy", "sampled", "constrained"]), default="greedy", show_default=True,
              help="greedy: generate, then parse (the paper's protocol; stored as sampled at --temperature above 0); "
                   "sampled: the same at a temperature above 0; constrained: restricted to the labels")
@click.option("--constraint", default=None,
              type=click.Choice(["structured_outputs", "guided_choice", "grammar", "json_schema", "response_format"]),
              help="openai: judges under --decoding constrained: the server's mechanism (vLLM structured_outputs "
                   "or guided_choice, llama.cpp grammar or json_schema, OpenAI response_format; default "
                   "response_format); checked with one call before the run")
@click.option("--strategy", default=None, help="mitigation wrappers, combinable: swap, ensemble:K, "
              "cross:SPEC;SPEC, reason, rubric, reference, combined (the judge is stored as NAME+STRATEGY)")
@click.option("--samples", default=1, show_default=True, type=int,
              help="ask each call N times (sample 0..N-1); N > 1 needs --temperature above 0")
@click.option("--temperature", default=0.0, show_default=True, type=float,
              help="sent with every call; part of the judge's identity (another temperature: another --judge-name)")
@click.option("--batch-out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="make no call: write the calls still to make as OpenAI Batch request files in DIR "
                   "(then: judgeaudit import-batch RESULTS...)")
@db_option
@json_option
@run_command
def score_cmd(pool, judge_spec, formats, concurrency, drain_after, cooldown, swap_sample, schedule, seed, timeout,
              max_retries, api_key_env, judge_name, format_specs, logprobs, decoding, constraint, strategy, samples,
              temperature, batch_out, db, as_json):
    """Score a pool with a judge under several formats. Re-running the same command resumes."""
    from ingest.scoring import score, ScoreRequest
    if swap_sample != "all":
        try:
            swap_sample = int(swap_sample)
        except ValueError:
            raise UserError(f"--swap-sample: a number or 'all', not {swap_sample!r}") from None
    request = ScoreRequest(
        pool=pool, judge=judge_spec, formats=list(formats), db=db,
        concurrency=concurrency, drain_after=drain_after, cooldown_s=cooldown, swap_sample=swap_sample,
        schedule=schedule, seed=seed, timeout=timeout, max_retries=max_retries, api_key_env=api_key_env,
        judge_name=judge_name, logprobs=logprobs,
        decoding=decoding, constraint=constraint, format_specs=list(format_specs), strategy=strategy,
        samples=samples, temperature=temperature)
    if batch_out is not None:
        return print_export(request, batch_out, as_json)
    result = score(request)
    if as_json:
        emit_json(result)
    else:
        click.echo(f"{result['status']}: {result['made']} calls made ({result['already_done']} already done, "
                   f"{result['recovered_from_journal']} recovered), {result['failed']} failed, "
                   f"{result['unparsed']} unparsed")
        for note in result["notes"]:
            click.echo(f"note: {note}")
    refresh_derived(db, pool)         # after the summary: at 10M the pages' results take minutes to store
