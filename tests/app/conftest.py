"""Helpers the dashboard tests share."""

from streamlit.testing.v1 import AppTest

from tests.conftest import REPO


def run_app(db, monkeypatch) -> AppTest:
    """The dashboard (app/main.py) run once on database `db` (named by JUDGEAUDIT_DB)."""
    monkeypatch.setenv("JUDGEAUDIT_DB", str(db))
    return AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=180).run()


def open_page(db, monkeypatch, page: str, address: dict) -> AppTest:
    """The dashboard on database `db` opened on views/PAGE/page.py with `address` (its query
    parameters, the pool's among them), as a user's link opens it."""
    monkeypatch.setenv("JUDGEAUDIT_DB", str(db))
    at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=180)
    at.query_params.update({"pool": address["pool"]})
    at.run()
    at.switch_page(f"views/{page}/page.py")
    at.query_params.update(address)
    return at.run()
