"""The run that brings verdicts refreshes the derived results (issue 29; DESIGN.md 'Ten million
candidates on every page'): after `import-pool` (the Pool page's summary), `score`, `import-verdicts`, `import-batch`, `attach-verdicts`,
`detach-verdicts`, `jury` or `import-labels` (the results computed from labels) succeeds, the pool's stale derived results are computed and stored, as
`judgeaudit derive` does, so a page's first view reads them; one line says what was stored and how
long it took (on stderr, so stdout stays what the command prints). JUDGEAUDIT_NO_DERIVE=1 in the
environment (the test suite's default) skips it (`judgeaudit derive --pool P` does it later): an
environment variable rather than an option, so no command's options, documentation or background
request change. Applied once, to the commands as the group holds them (app/cli/__init__.py), so no
command's body changes either."""

from __future__ import annotations

import functools
import os
import time

import click

BRING_VERDICTS = ("import-pool", "score", "import-verdicts", "import-batch", "attach-verdicts", "detach-verdicts", "jury",
                  "import-labels")


def refreshed_line(result: dict, seconds: float) -> str:
    """The line a command prints after refreshing a pool's derived results (app.derived.refresh)."""
    done = [r["name"] for r in result["results"] if r["status"] == "computed"]
    lost = [r["name"] for r in result["results"] if r["status"] == "not stored"]
    what = f"stored {len(done)} ({', '.join(done)})" if done else "all current, none computed"
    tail = f"; not stored (the pool changed meanwhile, or the database is read-only): {', '.join(lost)}" if lost else ""
    return (f"derived results of pool '{result['pool']}' ({result['n_verdicts']:,} verdicts): {what} "
            f"in {seconds:.1f} s{tail}")


def refresh_after(db, pool: str | None) -> None:
    """Refresh the pool's derived results (every pool's, when the command names none: import-batch's
    file names its pools), printing a line per pool."""
    import audit
    from app.derived import refresh
    from ingest import db_path
    from ingest.store import ensure_current
    ensure_current(db)
    path = str(db_path(db))
    for name in [pool] if pool else audit.pools(path)["name"].to_list():
        t0 = time.monotonic()
        try:
            result = refresh(path, name)
        except Exception as exc:     # the verdicts are stored all the same: the first page view computes them
            click.echo(f"derived results of pool '{name}' not stored: {type(exc).__name__}: {exc} "
                       f"(`judgeaudit derive --pool {name}` tries again)", err=True)
            continue
        click.echo(refreshed_line(result, time.monotonic() - t0), err=True)


def _refreshing(cmd: click.Command) -> None:
    inner = cmd.callback

    @functools.wraps(inner)
    def callback(*args, **kwargs):
        out = inner(*args, **kwargs)
        skip = os.environ.get("JUDGEAUDIT_NO_DERIVE", "") not in ("", "0")
        if not skip and not kwargs.get("batch_out"):     # score --batch-out exports, brings nothing
            refresh_after(kwargs.get("db"), kwargs.get("pool"))
        return out
    cmd.callback = callback
    cmd.refreshes_derived = True


def derive_after(group: click.Group) -> None:
    """Make each of the group's BRING_VERDICTS commands refresh its pool's derived results when it succeeds."""
    for name in BRING_VERDICTS:
        if name in group.commands and not getattr(group.commands[name], "refreshes_derived", False):
            _refreshing(group.commands[name])
