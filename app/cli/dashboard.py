"""`judgeaudit app`: the Streamlit dashboard (`streamlit run app/main.py`), on an empty database
seeded with the bundled demo first; beyond localhost only with a login."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click

from ._common import db_option


@click.command("app")
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
    main = Path(__file__).parents[1] / "main.py"    # app/main.py
    raise SystemExit(subprocess.call(
        [sys.executable, "-m", "streamlit", "run", str(main), "--server.port", str(port),
         "--server.address", address, "--browser.gatherUsageStats", "false"], env=env))
