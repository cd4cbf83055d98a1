"""Who may open the dashboard. On localhost anyone on the machine may; anywhere else a login is
required, in one of two ways (README, "Running the dashboard for a team"):

- password: the environment variable JUDGEAUDIT_APP_PASSWORD of the dashboard's process holds
  it; a typed password is compared in constant time (hmac.compare_digest), and every failure
  makes the next attempt from the same client wait longer (0.5 s, 1 s, 2 s, ... up to 30 s);
- OIDC: Streamlit's own `st.login`, when `.streamlit/secrets.toml` (in the folder the app is
  started from, or in ~/.streamlit) has an [auth] section (redirect_uri, cookie_secret,
  client_id, client_secret, server_metadata_url; needs the Authlib package).

The password wins when both are configured. `gate()` runs in app/main.py before any page;
`judgeaudit app --address` refuses a non-loopback address while `auth_mode()` is None.
"""

from __future__ import annotations

import hashlib
import hmac
import importlib.util
import ipaddress
import threading
import time
import tomllib
from pathlib import Path
from ingest import UserError, settings

PASSWORD_ENV = settings.APP_PASSWORD
_OK = "_judgeaudit_auth_ok"


def is_loopback(address: str | None) -> bool:
    """True for localhost, 127.0.0.0/8 and ::1; False for 0.0.0.0, '' (all interfaces) and names."""
    host = (address or "").strip().strip("[]")
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def secrets_files() -> list[Path]:
    """Where Streamlit reads secrets.toml: ~/.streamlit and ./.streamlit."""
    return [Path.home() / ".streamlit" / "secrets.toml", Path.cwd() / ".streamlit" / "secrets.toml"]


def oidc_configured() -> bool:
    for path in secrets_files():
        try:
            doc = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
            continue
        if isinstance(doc.get("auth"), dict) and doc["auth"]:
            return True
    return False


def auth_mode() -> str | None:
    """'password', 'oidc' or None (no login configured)."""
    if settings.app_password():
        return "password"
    return "oidc" if oidc_configured() else None


def check_serving(address: str | None) -> str | None:
    """The login mode for serving on `address`; a UserError when the dashboard would be reachable
    beyond localhost without a login, or when the configured login cannot work."""
    mode = auth_mode()
    if mode is None and not is_loopback(address):
        raise UserError(f"--address {address}: refusing to serve the dashboard beyond localhost without a "
                        f"login; set {PASSWORD_ENV}, or configure Streamlit's OIDC login ([auth] in "
                        ".streamlit/secrets.toml). See README, 'Running the dashboard for a team'.")
    if mode == "oidc" and importlib.util.find_spec("authlib") is None:
        raise UserError("[auth] in .streamlit/secrets.toml: Streamlit's login needs the Authlib package "
                        "(pip install 'Authlib>=1.3.2'), or set " + PASSWORD_ENV + " instead")
    return mode


def check_password(given: str, expected: str) -> bool:
    """Constant time, and the digests have one length, so not even the password's length leaks."""
    digest = lambda text: hashlib.sha256(text.encode("utf-8")).digest()   # noqa: E731
    return hmac.compare_digest(digest(given), digest(expected))


class Throttle:
    """Failed attempts per client: after n failures the next attempt waits delay(n) seconds."""

    def __init__(self, base_s: float = 0.5, cap_s: float = 30.0):
        self.base_s, self.cap_s = base_s, cap_s
        self._lock = threading.Lock()
        self._failures: dict[str, int] = {}
        self._not_before: dict[str, float] = {}

    def delay(self, failures: int) -> float:
        return 0.0 if failures <= 0 else min(self.cap_s, self.base_s * 2 ** (failures - 1))

    def wait_s(self, key: str) -> float:
        with self._lock:
            return max(0.0, self._not_before.get(key, 0.0) - time.monotonic())

    def failed(self, key: str) -> float:
        with self._lock:
            n = self._failures[key] = self._failures.get(key, 0) + 1
            delay = self.delay(n)
            self._not_before[key] = time.monotonic() + delay
            return delay

    def succeeded(self, key: str) -> None:
        with self._lock:
            self._failures.pop(key, None)
            self._not_before.pop(key, None)


THROTTLE = Throttle()     # one per server process: new browser sessions do not reset it


def _client(st) -> str:
    context = getattr(st, "context", None)
    return str(getattr(context, "ip_address", None) or "*")


def _password_gate(st, expected: str) -> None:
    if st.session_state.get(_OK):
        with st.sidebar:
            if st.button("Log out"):
                st.session_state.pop(_OK, None)
                st.rerun()
        return
    st.header("judgeaudit")
    with st.form("login"):
        given = st.text_input("Password", type="password")
        submitted = st.form_submit_button("Log in")
    if submitted:
        key = _client(st)
        wait = THROTTLE.wait_s(key)
        if wait > 0:
            st.error(f"Too many failed attempts: try again in {wait:.0f} s.")
        elif check_password(given, expected):
            THROTTLE.succeeded(key)
            st.session_state[_OK] = True
            st.rerun()
        else:
            time.sleep(THROTTLE.failed(key))
            st.error("Wrong password.")
    st.stop()


def _oidc_gate(st) -> None:
    if st.user.get("is_logged_in") is not True:      # fail closed when Streamlit reports nothing
        st.header("judgeaudit")
        st.button("Log in", on_click=st.login)
        st.stop()
    with st.sidebar:
        st.caption(f"Signed in as {st.user.get('email') or st.user.get('name') or 'you'}")
        st.button("Log out", on_click=st.logout)


def gate() -> None:
    """Stop the script unless this browser session may see the app (call before any page)."""
    import streamlit as st
    mode = auth_mode()
    if mode == "password":
        _password_gate(st, settings.app_password())
    elif mode == "oidc":
        _oidc_gate(st)
    elif not is_loopback(st.get_option("server.address")):
        st.error("This dashboard listens beyond localhost without a login. Set JUDGEAUDIT_APP_PASSWORD "
                 "or configure [auth] in .streamlit/secrets.toml, then restart it.")
        st.stop()
