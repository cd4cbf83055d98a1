"""A scoring request and what binds a judge's name: the decoding settings a run records, the part
of them that is the judge's identity, and the formats a request names."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from .._errors import UserError
from ..store import judge_identity, writing
from .formats import BUILTIN, Format, load_format_spec, stored_formats
from .judges import JudgeSpec, constraint_settings

DECODINGS = ("greedy", "sampled", "constrained")


@dataclass
class ScoreRequest:
    pool: str
    judge: str                                # SPEC: openai:MODEL@URL | local:smollm2 | fake:NAME
    formats: list[str]
    db: str | os.PathLike | None = None
    concurrency: int = 8
    swap_sample: int | str = 0
    schedule: str = "listing"
    seed: int = 0
    timeout: float = 60.0
    max_retries: int = 4
    api_key_env: str | None = None
    judge_name: str | None = None
    logprobs: bool = True
    decoding: str = "greedy"                  # greedy (the paper's protocol; sampled at T > 0) | constrained
    constraint: str | None = None             # openai: the server's mechanism (judges/_constraint.py)
    format_specs: list[str | os.PathLike] = field(default_factory=list)
    retry_base_s: float = 0.5                 # first backoff; doubles per attempt, with jitter
    retry_cap_s: float = 30.0
    flush_interval_s: float = 0.5
    progress: bool = True
    strategy: str | None = None               # mitigation wrappers, e.g. "swap,ensemble:3" (judges/strategies.py)
    run_kind: str = "score"                   # the background run's kind ("probe" for judgeaudit probe)
    samples: int = 1                          # each call asked this many times (sample 0..N-1)
    temperature: float = 0.0                  # sent with every call; part of the judge's identity
    drain_after: int = 3                      # several endpoints: failed attempts in a row that drain one
    cooldown_s: float = 30.0                  # ... and how long a drained endpoint rests before a probe


def check_samples(req: ScoreRequest, spec: JudgeSpec) -> None:
    """Refuse repeats that measure nothing, before anything is recorded: N > 1 samples need a
    temperature above 0 (at 0 every sample is the same answer). The bundled local model decodes
    greedily or constrained to the labels only, so it refuses a temperature above 0."""
    if not isinstance(req.samples, int) or req.samples < 1:
        raise UserError(f"--samples: a whole number of at least 1, not {req.samples!r}")
    if not 0 <= req.temperature <= 2:
        raise UserError(f"--temperature: between 0 and 2, not {req.temperature!r}")
    if req.samples > 1 and req.temperature == 0:
        raise UserError(f"--samples {req.samples} at temperature 0 would ask for {req.samples} copies of one "
                        "answer, which measure nothing: give --temperature above 0 (e.g. 0.7), or --samples 1")
    if spec.provider == "local" and req.temperature > 0:
        raise UserError("--temperature: the bundled local judge (local:smollm2) decodes greedily or constrained "
                        "to the labels only, so it takes temperature 0 and one sample; for repeated samples "
                        "serve a model over HTTP (llama.cpp, vLLM) and use an openai: judge")


def decoding_mode(req: ScoreRequest) -> str:
    """The decoding a run stores (docs/glossary.md#how-a-judge-is-asked): the free answer is `greedy` at
    temperature 0 and `sampled` above it (asking for greedy at T > 0 gets sampled, the name of what
    is done); `constrained` stays constrained at any temperature. `sampled` at temperature 0 is
    refused: that is greedy."""
    if req.decoding not in DECODINGS:
        raise UserError(f"--decoding: one of {', '.join(DECODINGS)}, not {req.decoding!r}")
    if req.decoding == "sampled" and not req.temperature > 0:
        raise UserError("--decoding sampled: the free answer at a temperature above 0; give --temperature "
                        "(e.g. 0.7), or --decoding greedy for temperature 0")
    if req.decoding == "greedy" and req.temperature > 0:
        return "sampled"
    return req.decoding


def decoding_settings(req: ScoreRequest, spec: JudgeSpec) -> dict:
    """The paper's decoding: greedy, a 16-token verdict budget, no reasoning; `mode` says whether
    the verdict is generated then parsed (greedy) or restricted to the format's labels. A
    temperature above 0 (for --samples) is sent with every call and binds the judge's name like the
    rest; each sample then sends the seed + its sample index, so every sample is reproducible."""
    if spec.provider == "local":
        if req.decoding == "constrained":
            pointwise = "label-constrained: one forward pass per format over a shared prefix, the most probable label"
            comparative = "label-constrained: the most probable label over the labels' token trie"
        else:
            pointwise = "greedy generate, then parse; the label distribution kept for the expected score"
            comparative = "greedy generate, then parse"
        return {"mode": req.decoding, "temperature": 0.0, "max_tokens": 16, "reasoning": "none",
                "pointwise": pointwise, "comparative": comparative}
    out = {"mode": decoding_mode(req), "temperature": float(req.temperature), "max_tokens": 16, "reasoning": "none",
           "logprobs": req.logprobs, "top_logprobs": 20 if req.logprobs else None, "seed": req.seed}
    if req.decoding == "constrained" and spec.provider == "openai":
        out["constraint"] = constraint_settings(req.constraint)   # the server's mechanism, recorded
    return out


def identity_decoding(settings: dict) -> dict:
    """The decoding settings that bind a judge name (docs/glossary.md#who-judges). The mode is not
    among them: the same judge read greedily and constrained gives two cells of one judge."""
    return {k: settings.get(k) for k in ("temperature", "max_tokens", "reasoning")}


def resolve_formats(req: ScoreRequest, unit) -> dict[str, Format]:
    """The formats the request names, from those stored (read in `unit`, the caller's store.writing
    or store.reading), the built-in ones and the request's --format-spec files."""
    known = {**stored_formats(unit.format_rows()), **BUILTIN}
    for path in req.format_specs:
        fmt = load_format_spec(path)
        known[fmt.name] = fmt
    unknown = [f for f in req.formats if f not in known]
    if unknown:
        raise UserError(f"--formats: unknown format(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    missing_template = [f for f in req.formats if known[f].template is None]
    if missing_template and req.judge.startswith("distilled:"):
        # a distilled student reads the prompt and response, not a prompt: a format of imported
        # verdicts is asked of it as it is (_calls.messages gives it the two texts)
        return {f: known[f] for f in req.formats}
    if missing_template:
        raise UserError(f"--formats: {', '.join(missing_template)} has no prompt template (imported "
                        "verdicts only); give one in a --format-spec")
    return {f: known[f] for f in req.formats}


def ensure_spec_judge(db, spec: JudgeSpec, settings: dict) -> int:
    """The judge's id in `judges`, bound to its identity (provider, model, endpoint, a simulated
    judge's parameters, identity_decoding(settings)); a name already standing for another judge is
    refused, saying what differs. A judge with several endpoints has their sorted set as its
    endpoint (joined by ','), so one more or one fewer endpoint is another judge; one endpoint is
    stored as it always was."""
    identity = judge_identity(spec.provider, spec.model, spec.endpoint,
                              params=spec.settings if spec.provider == "fake" else None,
                              decoding_settings=identity_decoding(settings))
    with writing(db) as unit:
        return unit.ensure_judge(spec.name, spec.provider, spec.model, spec.endpoint, spec.settings, identity)
