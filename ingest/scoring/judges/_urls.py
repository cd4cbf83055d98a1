"""An endpoint URL as it may be stored, shown or written in a message: without credentials."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit


def public_endpoint(url: str) -> str:
    """The endpoint as stored and shown: no credentials, query string or fragment, no final '/'."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))
