"""`judgeaudit jury` and `judges`: a named panel of judges whose vote every cell-wise command reads
as a judge, and the judges' leaderboard (docs/command-line.md#juries-and-the-judges-leaderboard)."""

from __future__ import annotations

import click
import polars as pl

from ._common import CommaList, current, db_option, emit_json, emit_table, json_option, refresh_derived

VOTE_HELP = ("mean or median of the members' parsed values, or majority (the value more than half of the members "
             "that parsed gave; an even split of a comparative key between A and B a tie; else unparsed); a key "
             "needs more than half the members parsed")


def mark_juries(db, pool: str, doc: dict) -> dict:
    """A command's JSON document with its jury cells marked: `aggregate` "jury" and `members` on each
    cell whose judge is a jury of the pool (other cells as they were)."""
    from audit import juries
    found = {r["judge"]: r["members"] for r in juries(db, pool).to_dicts()}
    for cell in doc.get("cells", []) if found else []:
        if cell.get("judge") in found:
            cell.update(aggregate="jury", members=found[cell["judge"]])
    return doc


@click.command("jury")
@click.option("--pool", required=True)
@click.option("--name", required=True, help="the jury's name: every command shows it as a judge")
@click.option("--judges", "members", required=True, type=CommaList(), help="members J1,J2[,...]")
@click.option("--vote", type=click.Choice(["mean", "median", "majority"]), default="mean", show_default=True,
              help=VOTE_HELP)
@db_option
@json_option
def jury_cmd(pool, name, members, vote, db, as_json):
    """Store a named jury of judges already run on the pool, and store its verdicts (its members' votes)."""
    from ingest.store import save_jury
    result = save_jury(db, pool, name, members, vote)
    refresh_derived(db, pool)
    if as_json:
        emit_json(result)
    else:
        click.echo(f"jury '{name}' ({vote} of {', '.join(result['members'])}): {result['n_verdicts']} verdicts, "
                   f"{result['n_parsed']} parsed")


def judges_document(frame: pl.DataFrame, pool: str) -> dict:
    """{"pool", "cells": [{judge, format, decoding, aggregate, members, kind, n_verdicts, parse_rate,
    n_labelled, agreement, kappa: {value, lo, hi} | null, ece, b, length_excess, flip_rate, tokens_in,
    tokens_out, cost_usd, cost_per_1000, latency_ms_p50, latency_ms_p95, effective_labels, on_front,
    reasons}]}: the leaderboard as `judges --json` prints it (b and length_excess with their
    intervals as b_lo/b_hi, length_excess_lo/hi)."""
    cells = []
    for row in frame.to_dicts():
        out = {}
        for key, value in row.items():
            if key == "kappa":
                out["kappa"] = {"value": value, "lo": row["kappa_lo"], "hi": row["kappa_hi"]} if value is not None else None
            elif key == "reasons":
                out["reasons"] = {k: v for k, v in value.items() if v is not None}
            elif key not in ("kappa_lo", "kappa_hi"):
                out[key] = value
        cells.append(out)
    return {"pool": pool, "cells": cells}


def with_sizes(doc: dict, sizes: pl.DataFrame) -> dict:
    """The leaderboard's jury cells with their effective size: effective_members, and its
    effective_members_m (members with verdicts in the cell), effective_members_n (the fewest items a
    correlation rests on), member_correlation (ρ̄) and member_correlation_basis (errors | scores)."""
    found = {(r["judge"], r["format"], r["decoding"]): r for r in sizes.to_dicts()}
    for cell in doc["cells"]:
        r = found.get((cell["judge"], cell["format"], cell["decoding"]))
        if r is not None:
            cell.update(effective_members=r["effective_members"], effective_members_m=r["m"],
                        effective_members_n=r["n"], member_correlation=r["mean_correlation"],
                        member_correlation_basis=r["basis"])
    return doc


@click.command("judges")
@click.option("--pool", required=True)
@click.option("--seed", default=0, show_default=True, help="the seed every source command uses")
@db_option
@json_option
def judges_cmd(pool, seed, db, as_json):
    """The judges' leaderboard: one row per judge × format × decoding, juries included."""
    from audit import judges, jury_sizes
    from ingest.endpoints import prices
    frame = judges(current(db), pool, prices=prices(db), seed=seed)
    if as_json:
        emit_json(with_sizes(judges_document(frame, pool), jury_sizes(db, pool)))
    else:
        emit_table(frame.select("judge", "format", "decoding", "aggregate", "parse_rate", "agreement", "kappa",
                                "ece", "b", "flip_rate", "cost_per_1000", "latency_ms_p50", "on_front"))
