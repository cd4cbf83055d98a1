"""Batch files (docs/scale.md#past-one-machine-batch-files): `judgeaudit score ... --batch-out DIR` writes the
calls still to make as OpenAI Batch request files (printed by `print_export`), and
`judgeaudit import-batch PATH...` stores the answers that come back."""

from __future__ import annotations

from pathlib import Path

import click

from ._common import db_option, emit_json, json_option, refresh_derived


def print_export(request, folder: Path, as_json: bool) -> None:
    """Run `score --batch-out DIR` and print what it wrote."""
    from ingest.scoring import export_batch
    result = export_batch(request, folder)
    if as_json:
        emit_json(result)
        return
    click.echo(f"{result['exported']} call(s) written as batch requests in {len(result['files'])} file(s) "
               f"under {result['folder']} ({result['already_done']} of {result['planned']} already answered); "
               f"manifest: {result['manifest']}")
    for f in result["files"]:
        click.echo(f"  {f['name']}: {f['lines']} lines, {f['bytes']} bytes")
    for note in result["notes"]:
        click.echo(f"note: {note}")
    if result["exported"]:
        click.echo("next: run them (e.g. vllm run-batch -i FILE -o RESULTS --model MODEL), then "
                   "judgeaudit import-batch RESULTS...")


@click.command("import-batch")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@db_option
@json_option
def import_batch_cmd(paths, db, as_json):
    """Store the answers of batch result files (OpenAI's or vLLM's shape; a folder: its *.jsonl)."""
    from ingest.scoring import import_batch
    result = import_batch(list(paths), db=db)
    refresh_derived(db, None)          # a batch file names its pools
    if as_json:
        emit_json(result)
        return
    click.echo(", ".join(f"{k} {result[k]}" for k in ("lines", "matched", "stored", "parsed", "failed", "unknown",
                                                       "duplicate", "malformed")))
    if result["unknown"]:
        click.echo(f"unknown custom_id(s) (no call of this database; not stored): {', '.join(result['unknown_ids'])}"
                   + (" ..." if result["unknown"] > len(result["unknown_ids"]) else ""))
    for line in result["malformed_lines"]:
        click.echo(f"malformed: {line}")
