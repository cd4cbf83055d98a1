"""A deterministic simulated judge, for tests and demos: `fake:NAME[?noise=0.15&slot_bias=0.5&
unparsed=0.05&round=5&seed=0&latency_ms=0]`.

Its latent quality for a candidate is the pool reference (min-max normalised by the runner) or, without
one, a hash of the call; it adds seeded noise, rounds 0-100 scores to multiples of `round`, shifts
comparative margins towards slot A by `slot_bias` (and by `length_bias` x the length feature (chars_A -
chars_B) / (chars_A + chars_B), docs/scoring.md#judges), and answers prose instead of a verdict at rate
`unparsed` (under greedy decoding only: constrained decoding, `settings["mode"]`, always answers a label,
the same one greedy gives where greedy parsed). `taught` (0 to 1) plants a judge that learns from
demonstrations: its noise shrinks by taught x the share of the demonstrations it is shown that carry
GOLD (a marker a test writes into some responses), docs/scoring.md#aligned-judges. Same name, settings
and call -> same answer. Repeated
samples (`--samples`) share the call's latent qualities and draw their own noise, seeded by the call key
and the sample index; temperature is ignored.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import random
from urllib.parse import parse_qsl

from ..._errors import UserError
from ..formats import shown_demonstrations
from .base import CallHints, JudgeReply

DEFAULTS = {"noise": 0.15, "slot_bias": 0.5, "length_bias": 0.0, "unparsed": 0.0, "round": 5, "seed": 0, "latency_ms": 0.0,
            "taught": 0.0}
GOLD = "[exemplary]"       # a demonstration carrying it teaches a judge with `taught` > 0
PROSE = "I think this response is reasonable overall, though it could be more detailed."


def parse_fake_spec(rest: str) -> tuple[str, dict]:
    name, _, query = rest.partition("?")
    if not name:
        raise UserError("--judge fake:NAME: a name is required")
    params = dict(DEFAULTS)
    for key, value in parse_qsl(query, strict_parsing=False):
        if key not in DEFAULTS:
            raise UserError(f"--judge fake:{name}: unknown setting '{key}' (known: {', '.join(DEFAULTS)})")
        try:
            params[key] = type(DEFAULTS[key])(float(value)) if isinstance(DEFAULTS[key], int) else float(value)
        except ValueError:
            raise UserError(f"--judge fake:{name}: '{key}' must be a number, not {value!r}") from None
    for later in ("length_bias", "taught"):
        if not params[later]:
            del params[later]          # unset, a judge keeps the identity stored before the setting existed
    return name, params


class FakeJudge:
    provider = "fake"
    endpoint = None

    def __init__(self, name: str, params: dict, formats: dict):
        self.name = name
        self.model = f"fake-{name}"
        self.params = params
        self._formats = formats  # format name -> Format, to answer in its labels

    def _rng(self, hints: CallHints, sample: int = 0) -> random.Random:
        extra = f"|sample {sample}" if sample else ""   # sample 0 keeps the seed it had before repeats
        digest = hashlib.blake2b(f"{self.name}|{self.params['seed']}|{hints.key}{extra}".encode(), digest_size=8)
        return random.Random(int.from_bytes(digest.digest(), "big"))

    @staticmethod
    def _quality(ref: float | None, rng: random.Random) -> float:
        return ref if ref is not None else rng.random()

    async def complete(self, messages: list[dict], settings: dict, hints: CallHints) -> JudgeReply:
        if self.params["latency_ms"]:
            await asyncio.sleep(self.params["latency_ms"] / 1000)
        # The latent qualities are the call's (every sample draws them alike); the noise and the
        # prose draw are the sample's own, seeded by the call key and the sample index. Temperature
        # is ignored: noise=0 answers the same on every sample.
        latent = self._rng(hints)
        rng = self._rng(hints, hints.sample) if hints.sample else latent
        fmt = self._formats[hints.format_name]
        noise = self.params["noise"]
        if self.params.get("taught"):             # a planted judge that learns from good demonstrations
            shown = shown_demonstrations(messages[-1]["content"])
            if shown:
                noise *= 1.0 - self.params["taught"] * sum(GOLD in d for d in shown) / len(shown)
        lo, hi = fmt.value_lo, fmt.value_hi
        if fmt.kind == "pointwise":
            target = lo + (hi - lo) * (self._quality(hints.reference_a, latent) + rng.gauss(0, noise))
        else:
            qa = self._quality(hints.reference_a, latent)
            qb = self._quality(hints.reference_b, latent)
            target = (qa - qb) * (hi - lo) + self.params["slot_bias"] + rng.gauss(0, noise * (hi - lo) / 2)
            if self.params.get("length_bias") and hints.texts:     # the length feature: docs/scoring.md#judges
                chars_a, chars_b = len(hints.texts["a"] or ""), len(hints.texts["b"] or "")
                target += self.params["length_bias"] * (chars_a - chars_b) / max(chars_a + chars_b, 1)
        target = min(max(target, lo), hi)
        options = fmt.answer_values()
        if fmt.range is not None:
            step = self.params["round"] if fmt.range == (0, 100) and self.params["round"] > 1 else 1
            label = str(min(max(int(round(target / step) * step), fmt.range[0]), fmt.range[1]))
        else:
            label = min(options, key=lambda k: (abs(options[k] - target), -options[k]))
        # the draw is made under both modes, so the two modes give the same verdicts wherever the
        # greedy one parsed; constrained decoding cannot leave the labels, so it never answers prose
        prose = rng.random() < self.params["unparsed"]
        text = PROSE if prose and settings.get("mode", "greedy") != "constrained" else label
        probs = None
        if settings.get("logprobs") and text != PROSE:
            width = max((hi - lo) / 8, 1e-9)
            weights = {k: math.exp(-((v - target) / width) ** 2) for k, v in options.items()}
            total = sum(weights.values())
            probs = {k: w / total for k, w in weights.items() if w / total > 1e-4}
        prompt_tokens = sum(len(m["content"].split()) for m in messages)
        return JudgeReply(text=text, model=self.model, tokens_in=prompt_tokens, tokens_out=1,
                          latency_ms=self.params["latency_ms"], answer_probs=probs)

    async def aclose(self) -> None:
        return None
