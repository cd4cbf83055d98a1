"""Mitigations as combinable judge wrappers: `--strategy swap,ensemble:3`
(docs/scoring.md#mitigation-strategies).

Every wrapper is itself a Judge (async complete(messages, settings, hints)) and answers with one
of the format's labels, so the runner parses, stores and resumes it like any judge. The runner's
only hook: `with_strategy(spec, ...)` where judges are built, and `hints.texts` (the call's prompt
and responses) from which a wrapper re-renders the call (swapped, with a rubric, ...).

    swap              both orders; consensus, or TIE when the orders disagree      (x2 calls)
    ensemble:K        the same judge at K temperatures 0..1; median verdict        (xK)
    cross:SPEC;SPEC   majority (median) of this judge and the other judges        (x judges)
    reason            reasoning first, verdict parsed from a last 'Verdict: X' line
    rubric            a calibrated rubric prepended (what each label means; ignore
                      length, formatting and order)
    reference         the judge first answers the instruction itself; its answer is
                      the reference the responses are judged against               (x2)
    combined          = swap,reason,rubric

Nesting is fixed whatever the order written: swap(cross(ensemble(prompt changes(judge)))), so
calls per verdict = 2^swap x judges x K x (2 with reference). A reply's tokens are the sums over
its inner calls; `calls_per_verdict` is stored with the judge's settings.
"""

from __future__ import annotations

import asyncio
import re
import statistics
from dataclasses import dataclass, replace

from ..._errors import UserError
from ._spec import JudgeSpec, parse_judge
from .base import CallHints, JudgeError, JudgeReply

ORDER = ("swap", "cross", "ensemble", "reason", "rubric", "reference")
ALIASES = {"combined": ("swap", "reason", "rubric")}
REASON_TOKENS = 256
ANSWER_TOKENS = 256

RUBRIC = ("Use this rubric. Judge only the content: whether it is correct, complete, helpful and "
          "follows the instruction. Do not reward length, formatting (markdown, lists, headings) "
          "or the order in which the responses are shown, and do not guess which model wrote a "
          "response. Give the strongest verdict only for a clear difference in correctness or "
          "completeness, the slight verdict for a small but real difference, and TIE when the "
          "responses are equally good or differ only in length, style or order.")
REASON = ("First explain your reasoning in a few sentences. Then end with a last line of exactly "
          "this form:\nVerdict: <one of {labels}>")
REFERENCE = ("A reference answer to the instruction (treat it as a guide, not as ground truth):\n"
             "{answer}\n\nJudge the responses against this reference.")
VERDICT_LINE = re.compile(r"verdict\s*[:=\-]\s*(.+)$", re.IGNORECASE)


@dataclass(frozen=True)
class Strategy:
    swap: bool = False
    cross: tuple[str, ...] = ()          # other judges' SPECs
    ensemble: int = 1
    reason: bool = False
    rubric: bool = False
    reference: bool = False

    @property
    def calls_per_verdict(self) -> int:
        """Comparative calls; a pointwise verdict makes no swap."""
        return (2 if self.swap else 1) * (1 + len(self.cross)) * self.ensemble * (2 if self.reference else 1)

    @property
    def canonical(self) -> str:
        parts = []
        for name in ORDER:
            value = getattr(self, name)
            if name == "cross" and value:
                parts.append("cross:" + ";".join(value))
            elif name == "ensemble" and value > 1:
                parts.append(f"ensemble:{value}")
            elif value is True:
                parts.append(name)
        return ",".join(parts)


def parse_strategy(text: str | None) -> Strategy | None:
    """'swap,ensemble:3' -> Strategy; None or '' or 'none' -> None. Errors name the part at fault."""
    if not text or text.strip().lower() in ("", "none", "baseline"):
        return None
    fields: dict = {}
    for raw in text.split(","):
        part = raw.strip()
        name, _, arg = part.partition(":")
        name = name.lower()
        if name in ALIASES and not arg:
            fields.update({n: True for n in ALIASES[name]})
        elif name == "ensemble":
            try:
                k = int(arg or 3)
            except ValueError:
                raise UserError(f"--strategy {text!r}: ensemble:K needs a whole number K, not {arg!r}") from None
            if not 2 <= k <= 16:
                raise UserError(f"--strategy {text!r}: ensemble:K needs 2 <= K <= 16")
            fields["ensemble"] = k
        elif name == "cross":
            specs = tuple(s.strip() for s in arg.split(";") if s.strip())
            if not specs:
                raise UserError(f"--strategy {text!r}: cross:SPEC;SPEC names the other judges")
            fields["cross"] = specs
        elif name in ("swap", "reason", "rubric", "reference") and not arg:
            fields[name] = True
        else:
            raise UserError(f"--strategy {text!r}: unknown part {part!r} (known: swap, ensemble:K, "
                            "cross:SPEC;SPEC, reason, rubric, reference, combined)")
    return Strategy(**fields)


def nearest_label(fmt, value: float) -> str:
    """The label whose value is nearest; on a tie the one nearer to 0 (the weaker verdict)."""
    options = fmt.answer_values()
    return min(options, key=lambda k: (abs(options[k] - value), abs(options[k]), -options[k]))


def _sum(values) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _merge(text: str, replies: list[JudgeReply], calls: int) -> JudgeReply:
    model = next((r.model for r in replies if r.model), None)
    lat = [r.latency_ms for r in replies if r.latency_ms is not None]
    return JudgeReply(text=text, model=model, tokens_in=_sum(r.tokens_in for r in replies),
                      tokens_out=_sum(r.tokens_out for r in replies), latency_ms=sum(lat) if lat else None,
                      raw={"calls": calls, "parts": [r.text for r in replies]})


def _calls(reply: JudgeReply) -> int:
    return (reply.raw or {}).get("calls", 1) if isinstance(reply.raw, dict) else 1


def _texts(hints: CallHints) -> dict:
    if not hints.texts:
        raise UserError("a strategy needs the call's texts (CallHints.texts); this runner does not pass them")
    return hints.texts


class PromptJudge:
    """reason / rubric / reference: re-render the call with extra instructions, parse the tail."""

    def __init__(self, inner, formats: dict, strategy: Strategy):
        self.inner, self.formats, self.s = inner, formats, strategy

    async def complete(self, messages: list[dict], settings: dict, hints: CallHints) -> JudgeReply:
        fmt = self.formats[hints.format_name]
        t = _texts(hints)
        content = fmt.render(t["prompt"], response=t.get("a")) if fmt.kind == "pointwise" \
            else fmt.render(t["prompt"], a=t.get("a"), b=t.get("b"))
        pre, replies = [], []
        if self.s.reference:
            answer = await self.inner.complete([{"role": "user", "content": t["prompt"]}],
                                               {**settings, "max_tokens": ANSWER_TOKENS, "logprobs": False},
                                               replace(hints, key=hints.key + "|reference"))
            replies.append(answer)
            pre.append(REFERENCE.format(answer=answer.text.strip()))
        if self.s.rubric:
            pre.append(RUBRIC)
        body = "\n\n".join(pre + [content])
        call_settings = dict(settings)
        if self.s.reason:
            body += "\n\n" + REASON.format(labels=", ".join(fmt.answer_values()))
            call_settings.update(max_tokens=max(REASON_TOKENS, settings.get("max_tokens") or 0), logprobs=False)
        reply = await self.inner.complete([{"role": "user", "content": body}], call_settings, hints)
        replies.append(reply)
        text = reply.text
        if self.s.reason:
            text = self.verdict_tail(fmt, reply.text)
        return _merge(text, replies, sum(_calls(r) for r in replies))

    @staticmethod
    def verdict_tail(fmt, text: str) -> str:
        """The label on the last 'Verdict: X' line; the whole text (unparsed) when there is none."""
        for line in reversed([ln.strip() for ln in (text or "").splitlines() if ln.strip()]):
            m = VERDICT_LINE.search(line)
            if m:
                parsed = fmt.parse(m.group(1))
                return parsed.answer if parsed.answer is not None else text
        return text

    async def aclose(self) -> None:
        await self.inner.aclose()


class MedianJudge:
    """ensemble:K (one judge, K temperatures) and cross (several judges): the median of the parsed
    values, as the nearest label (for an odd count of signs, the majority verdict). Unparsed
    members are left out; none parsed -> the first member's text."""

    def __init__(self, members: list, formats: dict, temperatures: list[float] | None = None):
        self.members, self.formats, self.temperatures = members, formats, temperatures

    async def complete(self, messages: list[dict], settings: dict, hints: CallHints) -> JudgeReply:
        fmt = self.formats[hints.format_name]
        if self.temperatures is not None:
            judge = self.members[0]
            calls = [judge.complete(messages, {**settings, "temperature": t, "logprobs": False},
                                    replace(hints, key=f"{hints.key}|t{t:.3f}")) for t in self.temperatures]
        else:
            calls = [j.complete(messages, settings, hints) for j in self.members]
        replies = await asyncio.gather(*calls)
        values = [p.value for p in (fmt.parse(r.text) for r in replies) if p.value is not None]
        text = nearest_label(fmt, statistics.median(values)) if values else replies[0].text
        return _merge(text, replies, sum(_calls(r) for r in replies))

    async def aclose(self) -> None:
        for j in self.members:
            await j.aclose()


class SwapJudge:
    """Ask in both orders; the verdict is their consensus (the mean margin as a label) when both
    prefer the same response or both say TIE, else TIE. Unparsed in either order -> that raw text
    (the verdict is unparsed). Pointwise calls pass through."""

    def __init__(self, inner, formats: dict):
        self.inner, self.formats = inner, formats

    async def complete(self, messages: list[dict], settings: dict, hints: CallHints) -> JudgeReply:
        fmt = self.formats[hints.format_name]
        if fmt.kind == "pointwise":
            return await self.inner.complete(messages, settings, hints)
        t = _texts(hints)
        rev_texts = {**t, "a": t.get("b"), "b": t.get("a")}
        rev_hints = replace(hints, reference_a=hints.reference_b, reference_b=hints.reference_a,
                            key=hints.key + "|swap", texts=rev_texts)
        rev_messages = [{"role": "user", "content": fmt.render(t["prompt"], a=rev_texts["a"], b=rev_texts["b"])}]
        fwd, rev = await asyncio.gather(self.inner.complete(messages, settings, hints),
                                        self.inner.complete(rev_messages, settings, rev_hints))
        p_fwd, p_rev = fmt.parse(fwd.text), fmt.parse(rev.text)
        if p_fwd.value is None or p_rev.value is None:
            text = fwd.text if p_fwd.value is None else rev.text
        else:
            v_fwd, v_back = p_fwd.value, -p_rev.value        # both in favour of the original slot A
            same = (v_fwd > 0 and v_back > 0) or (v_fwd < 0 and v_back < 0) or (v_fwd == 0 and v_back == 0)
            text = nearest_label(fmt, (v_fwd + v_back) / 2) if same else nearest_label(fmt, 0.0)
        return _merge(text, [fwd, rev], _calls(fwd) + _calls(rev))

    async def aclose(self) -> None:
        await self.inner.aclose()


def wrap(base_factories: list, formats: dict, strategy: Strategy):
    """A factory of the composed judge: base_factories[0] is this judge, the rest the cross judges."""
    def make():
        def prompt_level(factory):
            judge = factory()
            if strategy.reason or strategy.rubric or strategy.reference:
                judge = PromptJudge(judge, formats, strategy)
            if strategy.ensemble > 1:
                k = strategy.ensemble
                judge = MedianJudge([judge], formats, [i / (k - 1) for i in range(k)])
            return judge
        base = base_factories[0]()
        judge = prompt_level(lambda: base)
        if len(base_factories) > 1:
            judge = MedianJudge([judge] + [prompt_level(f) for f in base_factories[1:]], formats)
        if strategy.swap:
            judge = SwapJudge(judge, formats)
        return _Composed(judge, base, strategy)
    return make


class _Composed:
    """The composed judge under the base judge's identity, with the base's pointwise fast path
    (the local model's score_pointwise: swap leaves pointwise calls alone)."""

    def __init__(self, judge, base, strategy: Strategy):
        self.judge, self.base, self.strategy = judge, base, strategy
        self.name, self.provider = base.name, base.provider
        self.model, self.endpoint = base.model, base.endpoint
        self._pointwise_ok = not (strategy.reason or strategy.rubric or strategy.reference
                                  or strategy.ensemble > 1 or strategy.cross)

    def score_pointwise(self, prompt: str, response: str, fmts: list) -> list[JudgeReply]:
        """The local model's label-constrained pointwise reading: unchanged by a swap, and no
        place for the other strategies (they need generation: --decoding greedy)."""
        if not self._pointwise_ok:
            raise JudgeError(f"strategy {self.strategy.canonical}: not with label-constrained pointwise "
                             "decoding; score pointwise formats with --decoding greedy", retryable=False)
        return self.base.score_pointwise(prompt, response, fmts)

    async def complete(self, messages: list[dict], settings: dict, hints: CallHints) -> JudgeReply:
        return await self.judge.complete(messages, settings, hints)

    async def aclose(self) -> None:
        await self.judge.aclose()


def with_strategy(spec, strategy: str | Strategy | None, formats: dict, name: str | None = None,
                  api_key_env: str | None = None, timeout: float = 60.0):
    """The JudgeSpec of `spec` under a strategy: name '<judge>+<strategy>' unless `name` is given,
    settings recording the strategy and its calls per verdict. None -> spec unchanged."""
    s = parse_strategy(strategy) if isinstance(strategy, str) or strategy is None else strategy
    if s is None:
        return spec
    if s.ensemble > 1 and spec.provider == "local":
        raise UserError(f"--strategy {s.canonical}: the bundled model decodes greedily (temperature is not "
                        "used), so an ensemble over temperatures would repeat one answer; use another judge")
    others = [parse_judge(c, formats, api_key_env=api_key_env, timeout=timeout) for c in s.cross]
    settings = {**spec.settings, "strategy": s.canonical, "calls_per_verdict": s.calls_per_verdict,
                "base_judge": spec.name}
    factory = wrap([spec.factory] + [o.factory for o in others], formats, s)
    return JudgeSpec(name or f"{spec.name}+{s.canonical}", spec.provider, spec.model, spec.endpoint,
                     settings, factory, shared=spec.shared)
