"""`judgeaudit app`: the Streamlit dashboard (`streamlit run app/main.py`), on an empty database
seeded with the bundled demo first; beyond localhost only with a login. `judgeaudit demo`: the
same seeding alone, for a newcomer who starts on the command line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click

from ._common import db_option, emit_json, json_option
from app.auth import check_serving
from ingest import settings


@click.command("app")
@click.option("--port", default=8501, show_default=True)
@click.option("--address", default="localhost", show_default=True,
              help="interface to listen on (localhost keeps the dashboard private; any other "
                   "needs a login: $JUDGEAUDIT_APP_PASSWORD or [auth] in .streamlit/secrets.toml)")
@db_option
def app_cmd(port, address, db):
    """Start the dashboard (seeds an empty database with the bundled demo first)."""
    from ingest.demo import seed_demo
    mode = check_serving(address)   # beyond localhost only with a login (README: for a team)
    if mode:
        click.echo(f"login required ({mode})", err=True)
    path = db.path
    seeded = seed_demo(path)
    if seeded:
        click.echo(f"seeded {path} with the bundled demo: {', '.join(seeded)}", err=True)
    env = settings.child_environment(**{settings.DB: str(path)})
    main = Path(__file__).parents[1] / "main.py"    # app/main.py
    # a served dashboard, not an editor's preview: no watching of its source files, and no full garbage
    # collection after every run of a page or fragment (Streamlit's default, measured at 0.1 to 0.25 s of a
    # core a run with the Align or Curate page open: an idle page's look for new runs every 15 s cost 1 to 2%
    # of a core that way, 0.1% without); Python's own collector still runs as objects pile up
    raise SystemExit(subprocess.call(
        [sys.executable, "-m", "streamlit", "run", str(main), "--server.port", str(port),
         "--server.address", address, "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
         "--runner.postScriptGC", "false"], env=env))


@click.command("demo")
@db_option
@json_option
def demo_cmd(db, as_json):
    """Seed the database with the bundled demo pools, as the dashboard's first launch does (a
    database that holds pools of its own is left as it is)."""
    from ingest.demo import DEMO_POOLS, seed_demo
    from audit import pools
    path = db.path
    seeded = seed_demo(path)
    present = pools(path)["name"].to_list()
    demo = [name for name, *_ in DEMO_POOLS]
    if as_json:
        emit_json({"db": str(path), "seeded": seeded, "pools": present})
    elif seeded:
        click.echo(f"seeded {path} with the bundled demo: {', '.join(seeded)}")
    elif set(demo) <= set(present):
        click.echo(f"{path} already holds the bundled demo: {', '.join(demo)}")
    else:
        click.echo(f"{path} holds pools of its own ({', '.join(present)}): the demo is seeded only into a "
                   "database without other pools; pass --db for a new file")
