"""Helpers the dashboard tests share."""

from streamlit.testing.v1 import AppTest

from tests.conftest import REPO


def run_app(db, monkeypatch) -> AppTest:
    """The dashboard (app/main.py) run once on database `db` (named by JUDGEAUDIT_DB)."""
    monkeypatch.setenv("JUDGEAUDIT_DB", str(db))
    return AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=180).run()
