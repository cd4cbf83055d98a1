"""Judges and formats: a name stands for one identity, a format name for one definition."""

from __future__ import annotations

import json

from .._errors import UserError
from . import _sql
from ._database import next_id


def judge_identity(provider: str, model: str | None = None, endpoint: str | None = None,
                   params: dict | None = None, decoding_settings: dict | None = None) -> dict:
    """What a judge name stands for (docs/glossary.md#who-judges): provider, model, endpoint (without
    credentials or query string), the simulated judge's parameters and the decoding settings."""
    return {"provider": provider, "model": model, "endpoint": endpoint, "params": params or {},
            "decoding_settings": decoding_settings or {}}


def _identity_differences(stored: dict, wanted: dict) -> list[str]:
    out = []
    for key in ("provider", "model", "endpoint", "params", "decoding_settings"):
        if key in stored and stored[key] != wanted.get(key):
            out.append(f"{key} {json.dumps(stored[key])} is stored, this run has {json.dumps(wanted.get(key))}")
    return out


def ensure_judge(con, name: str, provider: str, model: str | None = None,
                 endpoint: str | None = None, settings: dict | None = None,
                 identity: dict | None = None) -> int:
    """The judge's id, creating it on first use. A known name with another identity is refused,
    saying what differs. Settings never include secrets."""
    identity = identity or judge_identity(provider, model, endpoint)
    row = _sql.first(con, "stored_judge", name=name)
    if row:
        jid, s_provider, s_model, s_endpoint, s_identity = row
        # Judges stored before identities were recorded are known by provider, model and endpoint.
        stored = json.loads(s_identity) if s_identity else {"provider": s_provider, "model": s_model,
                                                              "endpoint": s_endpoint}
        if "decoding" in stored:      # an identity stored before version 12 named its settings `decoding`
            stored["decoding_settings"] = stored.pop("decoding")
        differences = _identity_differences(stored, identity)
        if differences:
            raise UserError(f"judge name '{name}' already stands for another judge: "
                            + "; ".join(differences) + ". Score this one under its own name with "
                            "--judge-name (e.g. --judge-name '" + f"{name}-2'" + ")")
        if not s_identity:
            _sql.execute(con, "record_judge_identity", identity=json.dumps(identity), judge_id=jid)
        return jid
    jid = next_id(con, "judges", marked=False)     # judges are never deleted
    _sql.execute(con, "insert_judge", judge_id=jid, name=name, provider=provider, model=model, endpoint=endpoint,
                 settings=json.dumps(settings or {}), identity=json.dumps(identity))
    return jid


def ensure_format(con, fmt) -> int:
    """The format's id, registering it on first use; a different definition under a known name
    is refused."""
    row = _sql.first(con, "stored_format", name=fmt.name)
    if row:
        if row[1] != fmt.spec_hash:
            raise UserError(f"format '{fmt.name}' is already stored with a different definition; "
                            "give the new one another name")
        return row[0]
    fid = next_id(con, "formats", marked=False)   # nor are formats
    _sql.execute(con, "insert_format", format_id=fid, name=fmt.name, kind=fmt.kind, pairing=fmt.pairing,
                 spec=json.dumps(fmt.spec()), value_lo=fmt.value_lo, value_hi=fmt.value_hi, template=fmt.template,
                 spec_hash=fmt.spec_hash)
    return fid
