"""Judges come from a registry (ingest.scoring.judges.PROVIDERS): one lazy factory per SPEC prefix,
as inspect_ai's providers do. An unknown prefix names the known ones; a spec is parsed without
importing its client's module (httpx for openai:, torch for local:)."""

import subprocess
import sys

import pytest

from ingest import UserError
from ingest.scoring.judges import PROVIDERS, parse_judge


def test_one_factory_per_prefix():
    assert sorted(PROVIDERS) == ["distilled", "fake", "local", "openai"]


def test_an_unknown_prefix_names_the_known_ones():
    with pytest.raises(UserError) as err:
        parse_judge("anthropic:claude", {})
    assert str(err.value) == "--judge 'anthropic:claude': unknown provider 'anthropic' (known: distilled, fake, local, openai)"


def test_a_spec_without_a_prefix_says_what_one_looks_like():
    with pytest.raises(UserError, match=r"expected PROVIDER:\.\.\., one of openai:MODEL@BASE_URL, local:smollm2, fake:NAME, distilled:DIR"):
        parse_judge("smollm2", {})


@pytest.mark.parametrize("spec, provider, name, model, endpoint", [
    ("openai:m@http://127.0.0.1:9/v1", "openai", "m", "m", "http://127.0.0.1:9/v1"),
    ("openai:m@http://b:9/v1,http://a:9/v1", "openai", "m", "m", "http://a:9/v1,http://b:9/v1"),   # sorted set
    ("local:smollm2", "local", "smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", None),
    ("fake:sim?noise=0.1", "fake", "sim", "fake-sim", None),
])
def test_each_factory_stores_what_the_spec_says(spec, provider, name, model, endpoint):
    got = parse_judge(spec, {})
    assert (got.provider, got.name, got.model, got.endpoint) == (provider, name, model, endpoint)
    assert parse_judge(spec, {}, name="mine").name == "mine"


def test_parsing_a_spec_imports_no_client_module():
    # the factories import their client module only when a client is made: parsing an openai: or a
    # local: spec loads neither httpx's client module nor torch
    code = ("import sys; from ingest.scoring.judges import parse_judge; "
            "parse_judge('openai:m@http://127.0.0.1:9/v1', {}); parse_judge('local:smollm2', {}); "
            "print(sorted(m for m in ('torch', 'transformers', 'ingest.scoring.judges.openai_compat', "
            "'ingest.scoring.judges.local') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "[]"
