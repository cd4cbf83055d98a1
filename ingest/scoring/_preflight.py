"""Before a scoring run: one real call to check a judge (the Score page's Test connection), and the
number of calls a run will make (its time: `_estimate.py`).

check_call() renders one of the pool's own candidates in a format, makes ONE call through the same
provider code a run uses (parse_judge), and parses the answer with the format's parser. Nothing is
stored. An API key is read only from the environment variable the caller names (the Score page
names one only for an endpoint configured on the server).
"""

from __future__ import annotations

import asyncio
import time

from .._errors import UserError
from .._redact import redact
from ..store import Database, reading
from ._plan_size import plan_size
from .formats import BUILTIN, stored_formats
from .judges import CallHints, JudgeError, parse_judge
from .. import settings


def _pool(db, pool: str, names: list[str], texts: bool = True):
    """The pool's candidates with their prompts (texts False: the texts' lengths alone, the store's
    candidate_lengths), and the named formats, read through the store's one door (its lock rule: the
    dashboard's threads take turns with each other and with runs)."""
    path = Database.of(db).path
    if not path.is_file():
        raise UserError(f"no database at {path}")
    with reading(path) as unit:
        pid = unit.pool_id(pool)
        cands = unit.candidates_with_prompts(pid) if texts else unit.candidate_lengths(pid)
        known = {**stored_formats(unit.format_rows()), **BUILTIN}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UserError(f"formats: unknown format(s) {', '.join(unknown)}")
    return cands, [known[n] for n in names]


def count_calls(db, pool: str, formats: list[str], schedule: str = "listing", swap_sample: int | str = 0,
                seed: int = 0) -> dict:
    """How many calls `judgeaudit score` would plan for the pool (the plan of a scoring run), and the
    characters they give the judge (ingest.scoring._estimate.plan_chars): {"total": N, "per_format":
    {format: n}, "chars": {format: characters}}. Already-answered calls are not subtracted. Counted
    from the texts' lengths, the plan never built (_plan_size.plan_size; plan_calls and plan_chars
    give the same numbers)."""
    cands, fmts = _pool(db, pool, formats, texts=False)
    per: dict[str, int] = {}
    chars: dict[str, int] = {}
    for fmt in fmts:          # a format named twice is planned twice (as plan_calls does)
        n, c = plan_size(cands, fmt, schedule, swap_sample, seed)
        per[fmt.name], chars[fmt.name] = per.get(fmt.name, 0) + n, chars.get(fmt.name, 0) + c
    return {"total": sum(per.values()), "per_format": per, "chars": chars}


def check_call(db, pool: str, judge: str, fmt_name: str, api_key_env: str | None = None,
              decoding: str = "greedy", timeout: float = 60.0) -> dict:
    """ONE call of `judge` (a SPEC) in format `fmt_name` on the pool's first candidate (and its
    second, for a comparative format). Returns {judge, model, format, prompt, raw, answer, value,
    status, latency_ms, error}: `error` is set (and raw is None) when the call failed."""
    cands, (fmt,) = _pool(db, pool, [fmt_name])
    if fmt.template is None:
        raise UserError(f"format '{fmt_name}' has no prompt template (imported verdicts only)")
    if cands.height == 0:
        raise UserError(f"pool '{pool}' has no candidates")
    first = cands.row(0, named=True)
    if fmt.kind == "pointwise":
        content = fmt.render(first["prompt"], response=first["response"])
    else:
        same = cands.filter(cands["prompt_idx"] == first["prompt_idx"])
        other = same.row(1, named=True) if same.height > 1 else first
        content = fmt.render(first["prompt"], a=first["response"], b=other["response"])
    spec = parse_judge(judge, {fmt.name: fmt}, api_key_env=api_key_env, timeout=timeout)
    asked = {"mode": decoding, "temperature": 0.0, "max_tokens": 16}
    hints = CallHints(format_name=fmt.name, kind=fmt.kind, key="test-call",
                      reference_a=first["reference"], reference_b=None)
    secrets = tuple(v for v in [settings.api_key(api_key_env)] if v)

    async def one():
        j = spec.factory()
        try:
            return await asyncio.wait_for(j.complete([{"role": "user", "content": content}], asked, hints),
                                          timeout=timeout + 5)
        finally:
            await j.aclose()

    out = {"judge": spec.name, "model": spec.model, "format": fmt.name, "prompt": content, "raw": None,
           "answer": None, "value": None, "status": "failed", "latency_ms": None, "error": None}
    started = time.perf_counter()
    try:
        reply = asyncio.run(one())
    except (JudgeError, asyncio.TimeoutError, OSError) as exc:
        out["error"] = redact(str(exc) or type(exc).__name__, secrets)
        return out
    parsed = fmt.parse(reply.text)
    out.update(raw=reply.text, answer=parsed.answer, value=parsed.value, status=parsed.status,
               model=reply.model or spec.model, latency_ms=round((time.perf_counter() - started) * 1000, 1))
    return out
