"""The Score page's form, as data: which judge a browser user may pick, and the `judgeaudit score`
request it becomes (ingest.runs.RunRequest; app.cli.request_for). Pure (no Streamlit), so the rules
are unit-tested. The judge alone (a `JudgeChoice`, and its `judge_options`) is shared with the
Evaluate and Probes forms (app/evaluate_form.py, app/views/probes/form.py):

- a configured endpoint (ingest.endpoints, from the server's judgeaudit.toml) is the ONLY way an
  API key is sent: its key variable (`api_key_env`) comes from the server config, never from the browser;
- a free-typed endpoint ("custom") is allowed, and never carries a key;
- the bundled model (local:smollm2) and the simulated judge (fake:NAME) need no key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from app.cli import request_for
from ingest import UserError
from ingest.endpoints import Endpoint
from ingest.runs import RunRequest

PROVIDERS = {"endpoint": "Configured endpoint", "local": "Bundled SmolLM2 (in-process)",
             "fake": "Simulated judge", "custom": "Other endpoint (no API key)"}
_FAKE = re.compile(r"[\w.\-]+(\?[\w.=&\-]*)?")
_SWAP = re.compile(r"\d+|all")


@dataclass
class JudgeChoice:
    """The judge a page's picker chose (app/judge_picker.py)."""
    provider: str                       # endpoint | local | fake | custom
    endpoint: str | None = None         # provider 'endpoint': its configured name
    model: str = ""                     # endpoint/custom: the model; fake: the judge's name
    base_url: str = ""                  # provider 'custom' only


@dataclass
class ScoreForm:
    pool: str
    provider: str                       # endpoint | local | fake | custom
    formats: list[str] = field(default_factory=list)
    endpoint: str | None = None         # provider 'endpoint': its configured name
    model: str = ""                     # endpoint/custom: the model; fake: the judge's name
    base_url: str = ""                  # provider 'custom' only
    schedule: str = "listing"
    concurrency: int = 8
    swap: str = "0"
    decoding: str = "greedy"
    samples: int = 1                    # each call asked N times (sample 0..N-1)
    temperature: float = 0.0            # sent with every call; > 0 makes the free answer `sampled`

    @property
    def judge(self) -> JudgeChoice:
        return JudgeChoice(self.provider, self.endpoint, self.model, self.base_url)


SIM_DEFAULTS = {"noise": 0.15, "slot_bias": 0.5, "latency_ms": 0.0}   # ingest/scoring/judges/fake.py DEFAULTS


def fake_spec(name: str, noise: float, slot_bias: float, latency_ms: float) -> str:
    """The simulated judge's NAME?noise=..&slot_bias=..&latency_ms=.. (the part after `fake:`), every
    setting written out so the run's --judge says what the judge was; UserError for a setting out
    of range."""
    if not 0 <= noise <= 5:
        raise UserError(f"noise {noise:g}: between 0 and 5 (the spread of the judge's error, in score ranges)")
    if not -2 <= slot_bias <= 2:
        raise UserError(f"slot bias {slot_bias:g}: between -2 and +2 (added to a comparative margin for slot A)")
    if not 0 <= latency_ms <= 60_000:
        raise UserError(f"latency {latency_ms:g} ms: between 0 and 60000")
    return f"{name.strip()}?noise={noise:g}&slot_bias={slot_bias:g}&latency_ms={latency_ms:g}"


def providers(endpoints: dict[str, Endpoint]) -> list[str]:
    """The choices the page offers: configured endpoints first when there are any."""
    return (["endpoint"] if endpoints else []) + ["local", "fake", "custom"]


def judge_options(choice: JudgeChoice, endpoints: dict[str, Endpoint]) -> tuple[dict, str]:
    """({"judge_spec": SPEC, "api_key_env": VAR or None}, the judge's name) for the chosen judge;
    UserError if the choice is not acceptable. The key variable comes only from a configured endpoint."""
    model = choice.model.strip()
    if choice.provider == "endpoint":
        ep = endpoints.get(choice.endpoint or "")
        if ep is None:
            raise UserError(f"endpoint {choice.endpoint!r}: not configured on this server "
                            f"(configured: {', '.join(endpoints) or 'none'})")
        return {"judge_spec": ep.judge_spec(model), "api_key_env": ep.api_key_env}, model
    if choice.provider == "custom":
        url = choice.base_url.strip()
        if not url.startswith(("http://", "https://")) or any(c.isspace() for c in url):
            raise UserError(f"base URL {url!r}: an http(s) URL, e.g. http://localhost:8000/v1")
        if not model or any(c.isspace() or not c.isprintable() for c in model):
            raise UserError(f"model {model!r}: a model name without spaces")
        return {"judge_spec": f"openai:{model}@{url}", "api_key_env": None}, model     # no key, by construction
    if choice.provider == "local":
        return {"judge_spec": "local:smollm2", "api_key_env": None}, "smollm2"
    if choice.provider == "fake":
        if not _FAKE.fullmatch(model):
            raise UserError(f"simulated judge {model!r}: a name of letters, digits, '_', '-', '.' "
                            "(optionally ?noise=..&slot_bias=..)")
        return {"judge_spec": f"fake:{model}", "api_key_env": None}, model.split("?")[0]
    raise UserError(f"judge provider {choice.provider!r}: one of {', '.join(PROVIDERS)}")


def score_request(form: ScoreForm, endpoints: dict[str, Endpoint]) -> tuple[RunRequest, str]:
    """(the `judgeaudit score` request, the judge's name) for a submitted form; UserError if the
    form is not acceptable."""
    judge, name = judge_options(form.judge, endpoints)
    if not form.formats:
        raise UserError("formats: choose at least one")
    swap = form.swap.strip() or "0"
    if not _SWAP.fullmatch(swap):
        raise UserError(f"swap sample {swap!r}: a number or 'all'")
    check_repeats(form)
    extra = {"samples": int(form.samples), "temperature": float(form.temperature)} \
        if form.samples != 1 or form.temperature else {}
    return request_for("score", pool=form.pool, **judge, formats=list(form.formats), schedule=form.schedule,
                       concurrency=int(form.concurrency), swap_sample=swap, decoding=form.decoding,
                       as_json=True, **extra), name


def check_repeats(form: ScoreForm) -> None:
    """The CLI's rules for --samples and --temperature (ingest.scoring.check_samples), in the form's
    words: N > 1 at temperature 0 is refused (N copies of one answer measure nothing), and the
    bundled model takes temperature 0 only."""
    if int(form.samples) != form.samples or form.samples < 1:
        raise UserError(f"samples {form.samples!r}: a whole number of at least 1")
    if not 0 <= form.temperature <= 2:
        raise UserError(f"temperature {form.temperature:g}: between 0 and 2")
    if form.samples > 1 and form.temperature == 0:
        raise UserError(f"{form.samples} samples at temperature 0 would ask for {form.samples} copies of one answer, "
                        "which measure nothing: set a temperature above 0 (e.g. 0.7), or 1 sample")
    if form.provider == "local" and form.temperature > 0:
        raise UserError("the bundled local judge (SmolLM2) decodes greedily or constrained to the labels only: "
                        "temperature 0 and one sample; for repeated samples use an endpoint")
