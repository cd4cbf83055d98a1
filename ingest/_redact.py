"""Redact key-like strings from text that is stored or shown (a judge server's error body).

    redact(text, secrets=())  -> text with bearer tokens, `sk-...`-style keys, `api_key=...`
                                 style assignments, URL credentials and long token-like strings
                                 replaced by [redacted]; every string in `secrets` (the key a
                                 client actually sent) is replaced wherever it appears.
"""

from __future__ import annotations

import re

MARK = "[redacted]"

_PATTERNS = [
    # Authorization: Bearer xyz / Basic xyz
    (re.compile(r"\b(Bearer|Basic|Token)\s+[^\s\"',;]+", re.I), rf"\1 {MARK}"),
    # api_key=..., "apiKey": "...", password: '...', token=..., client_secret=... (not max_tokens)
    (re.compile(r"""(?ix)
        (["']?\b(?:[\w-]*(?:api[_-]?key|apikey|secret|password|passwd|credential)s?
                  |(?:access|auth|refresh|id|session)[_-]?token|token|authorization)\b["']?)
        (\s*[:=]\s*)
        (?!\[redacted\])(?:(?:Bearer|Basic)\s+)?
        (?:"[^"]*"|'[^']*'|[^\s"',;&})\]]+)"""), rf"\1\2{MARK}"),
    # well-known key shapes: OpenAI sk-..., Hugging Face hf_..., GitHub ghp_..., Slack xox?-, AWS AKIA...
    (re.compile(r"\bsk-[A-Za-z0-9_\-]{6,}"), f"sk-{MARK}"),
    (re.compile(r"\b(?:hf|ghp|gho|ghs|github_pat|glpat|xox[abprs])[_-][A-Za-z0-9_\-]{10,}"), MARK),
    (re.compile(r"\bAKIA[0-9A-Z]{16}\b"), MARK),
    # user:password@ in a URL
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@:]+:[^/\s@]+@"), rf"\1{MARK}@"),
    # JWTs and other long opaque tokens (letters and digits mixed, 32+ characters)
    (re.compile(r"\beyJ[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+"), MARK),
    (re.compile(r"\b(?=[A-Za-z0-9_\-]*\d)(?=[A-Za-z0-9_\-]*[A-Za-z])[A-Za-z0-9_\-]{32,}\b"), MARK),
]


def redact(text: str | None, secrets: tuple[str, ...] | list[str] = ()) -> str | None:
    """`text` with secrets and key-like strings replaced by [redacted]; None stays None."""
    if text is None:
        return None
    out = str(text)
    for secret in secrets:
        if secret and len(secret) >= 4:
            out = out.replace(secret, MARK)
    for pattern, repl in _PATTERNS:
        out = pattern.sub(repl, out)
    return out
