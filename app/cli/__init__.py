"""The `judgeaudit` command line (docs/command-line.md). Thin: parse flags, call ingest, audit
or train, print. Errors go to stderr as one message naming the file, line and field; no tracebacks.

Each area's commands live in a module of their own and are added to the group here; the options
and printing they share live in `_common`, which imports none of them. Importing this package stays
cheap: a command imports the packages that do its work when it runs (docs/layout.md#imports). A
background run's request and its command line are read off the commands' own parameters
(`_request`: request_for, command_line, run_request).
"""

from __future__ import annotations

import sys
import traceback

import click

from ._request import command_line, defaults, legacy_request, request_for, run_request
from .align import align_cmd
from .distil import apply_cmd, distil_cmd
from .audit import audit_cmd, bias_cmd, levels_cmd, positions_cmd, report_cmd, stability_cmd, variance_cmd
from .batch import import_batch_cmd
from .calibration import calibrate_cmd, import_labels_cmd
from .consistency import consistency_cmd
from .dashboard import app_cmd, demo_cmd
from .drift import drift_cmd
from .evaluate import contrasts_cmd, evaluate_cmd
from .pools import import_pool_cmd, import_verdicts_cmd, pools_cmd
from .probes import mitigations_cmd, probe_cmd
from .rankings import rank_cmd
from .runs import cancel_cmd, runs_cmd
from .scoring import score_cmd
from .train import curate_cmd, train_cmd
from .verdicts import export_verdicts_cmd
from .judges import judges_cmd, jury_cmd
from .labels import estimate_cmd, label_queue_cmd
from .verdicts import attach_verdicts_cmd, detach_verdicts_cmd
from .pairs import pairs_cmd
from .derive import derive_cmd
from .decide import alt_test_cmd, plan_cmd
from ingest import UserError, settings       # audit.AuditError is a UserError: importing audit here would load scipy


__all__ = ["cli", "command_line", "defaults", "legacy_request", "main", "request_for", "run_request"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def cli():
    """judgeaudit: audit how an LLM judge's scoring format shapes what it can express."""


for _command in (import_pool_cmd, pools_cmd, import_verdicts_cmd, score_cmd,
                 audit_cmd, bias_cmd, levels_cmd, stability_cmd, positions_cmd, variance_cmd, report_cmd,
                 app_cmd, demo_cmd, runs_cmd, cancel_cmd, rank_cmd, import_labels_cmd, calibrate_cmd, drift_cmd,
                 evaluate_cmd, contrasts_cmd, probe_cmd, mitigations_cmd, curate_cmd, train_cmd, export_verdicts_cmd,
                 consistency_cmd, import_batch_cmd,
                 label_queue_cmd, estimate_cmd, jury_cmd, judges_cmd,
                 attach_verdicts_cmd, detach_verdicts_cmd):
    cli.add_command(_command)
cli.add_command(pairs_cmd)
cli.add_command(derive_cmd)
cli.add_command(alt_test_cmd)
cli.add_command(plan_cmd)
cli.add_command(align_cmd)
cli.add_command(distil_cmd)
cli.add_command(apply_cmd)


def _fresh_line() -> None:
    """A scoring run's terminal progress bar may be mid-line: a message starts below it."""
    if "ingest.scoring" in sys.modules:
        from ingest.scoring import end_open_line
        end_open_line()


def main(argv: list[str] | None = None) -> int:
    """Run the command line on argv (default: sys.argv[1:]); returns the exit status: 0, 1 for a
    user's error, 130 when aborted, click's status for a usage error, 3 for an internal error.
    Every message is a line of its own."""
    try:
        cli.main(args=argv, prog_name="judgeaudit", standalone_mode=False)
        return 0
    except UserError as exc:
        _fresh_line()
        click.echo(f"judgeaudit: error: {exc}", err=True)
        return 1
    except click.exceptions.Abort:
        _fresh_line()
        click.echo("judgeaudit: aborted", err=True)
        return 130
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except Exception as exc:  # an unexpected failure: one line, the traceback only on request
        _fresh_line()
        if settings.debug():
            traceback.print_exc()
        click.echo(f"judgeaudit: internal error: {type(exc).__name__}: {exc} "
                   "(set JUDGEAUDIT_DEBUG=1 for the traceback)", err=True)
        return 3

