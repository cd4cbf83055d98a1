"""Mitigation wrappers (ingest/scoring/judges/strategies.py). The statistics that compare them:
tests/audit/test_stats.py (McNemar, Holm) and tests/audit/test_probes.py (the cost-agreement
frontier)."""

import asyncio

import polars as pl
import pytest

from audit._probes import mitigations
from ingest import UserError
from ingest.store import import_pool
from ingest.scoring.formats import BUILTIN
from ingest.scoring.judges import CallHints, JudgeReply, JudgeSpec, parse_judge
from ingest.scoring.judges.strategies import RUBRIC, parse_strategy, with_strategy
from ingest.scoring import score, ScoreRequest
from tests.openai_server import OpenAIServer

TOURN = BUILTIN["tournament"]
FORMATS = {"tournament": TOURN, "likert5": BUILTIN["likert5"]}
TEXTS = {"prompt": "Name a prime.", "a": "two", "b": "nine"}


class Scripted:
    """A judge whose answer is a rule of (content, settings); records every call."""
    name, provider, model, endpoint = "s", "fake", "scripted", None

    def __init__(self, rule):
        self.rule, self.calls = rule, []

    async def complete(self, messages, settings, hints):
        self.calls.append((messages[-1]["content"], dict(settings), hints))
        return JudgeReply(text=self.rule(messages[-1]["content"], settings), model="scripted",
                          tokens_in=10, tokens_out=2)

    async def aclose(self):
        return None


def judge_with(strategy: str, rule):
    made = []

    def factory():
        made.append(Scripted(rule))
        return made[-1]
    spec = with_strategy(JudgeSpec("s", "fake", "scripted", None, {}, factory), strategy, FORMATS)
    return spec, spec.factory(), made


def ask(judge, fmt="tournament", texts=TEXTS):
    f = FORMATS[fmt]
    content = f.render(texts["prompt"], a=texts["a"], b=texts["b"]) if f.kind == "comparative" \
        else f.render(texts["prompt"], response=texts["a"])
    hints = CallHints(format_name=fmt, kind=f.kind, key="k", texts=texts)
    return asyncio.run(judge.complete([{"role": "user", "content": content}], {"temperature": 0.0, "max_tokens": 16},
                                      hints))


def order_rule(fwd: str, rev: str):
    """Answer `fwd` when 'two' is in slot A, `rev` when the responses are swapped."""
    return lambda content, settings: fwd if "Response A: two" in content else rev


# -- parsing a strategy ------------------------------------------------------------------------
def test_strategy_canonical_order_and_calls():
    s = parse_strategy("ensemble:3, reference,swap")
    assert s.canonical == "swap,ensemble:3,reference" and s.calls_per_verdict == 2 * 3 * 2
    assert parse_strategy("combined").canonical == "swap,reason,rubric"
    assert parse_strategy("cross:fake:x;fake:y").calls_per_verdict == 3
    assert parse_strategy(None) is None and parse_strategy("none") is None
    with pytest.raises(UserError, match="decodes greedily"):
        with_strategy(parse_judge("local:smollm2", FORMATS), "ensemble:3", FORMATS)    # nothing is loaded
    for bad, word in (("ensemble:x", "whole number"), ("swapp", "unknown part"), ("cross:", "other judges"),
                      ("ensemble:1", "2 <= K")):
        with pytest.raises(UserError, match=word):
            parse_strategy(bad)


# -- the wrappers --------------------------------------------------------------------------------
@pytest.mark.parametrize("fwd,rev,want", [
    ("A+", "A+", "TIE"),      # each order prefers its slot A: the orders disagree
    ("A++", "B+", "A+"),      # both prefer 'two': margins 2 and 1, mean 1.5 -> the weaker of A++/A+
    ("B++", "A++", "B++"),    # both prefer 'nine' strongly
    ("TIE", "TIE", "TIE"),
    ("B+", "TIE", "TIE"),     # a tie in one order only is a disagreement
])
def test_swap_consensus_or_tie(fwd, rev, want):
    _, judge, made = judge_with("swap", order_rule(fwd, rev))
    reply = ask(judge)
    assert reply.text == want
    seen = [c for c, _, _ in made[0].calls]
    assert len(seen) == 2 and "Response A: nine" in seen[1] and "Response B: two" in seen[1]
    assert (reply.tokens_in, reply.tokens_out, reply.raw["calls"]) == (20, 4, 2)


def test_swap_leaves_pointwise_calls_alone():
    _, judge, made = judge_with("swap", lambda c, s: "4")
    assert ask(judge, "likert5").text == "4" and len(made[0].calls) == 1


def test_swap_over_a_judge_that_always_answers_a_plus_gives_ties_over_http(tmp_path, db):
    """The loopback server answers A+ to every comparative prompt: swapped, that is always a TIE."""
    rows = [{"prompt_id": f"p{i}", "prompt": f"question {i}", "candidate_id": c, "response": f"answer {c} {i}",
             "reference": r} for i in range(3) for c, r in (("x", 1.0), ("y", 2.0), ("z", 3.0))]
    pool = tmp_path / "pool.jsonl"
    pool.write_text("\n".join(__import__("json").dumps(r) for r in rows) + "\n")
    import_pool(db, pool, "p")
    with OpenAIServer() as srv:
        out = score(ScoreRequest(pool="p", judge=f"openai:m@{srv.url}", formats=["tournament"], db=db,
                                 strategy="swap", progress=False, logprobs=False, concurrency=2))
        requests = srv.requests
    assert out["judge"] == "m+swap" and out["made"] == 9          # 3 prompts x 3 pairs
    assert requests == 18                                         # two orders each
    from tests.conftest import query_rows
    assert query_rows(db, "SELECT DISTINCT answer FROM verdicts") == [("TIE",)]


def test_cost_accounting_counts_calls_and_tokens_exactly(tmp_path, db):
    """swap,ensemble:3 = 6 requests per verdict; the stored tokens are the server's usage summed."""
    rows = [{"prompt_id": f"p{i}", "prompt": f"question number {i}", "candidate_id": c,
             "response": f"answer {c} " * (i + 1), "reference": r}
            for i in range(2) for c, r in (("x", 1.0), ("y", 2.0))]
    pool = tmp_path / "pool.jsonl"
    pool.write_text("\n".join(__import__("json").dumps(r) for r in rows) + "\n")
    import_pool(db, pool, "p")
    with OpenAIServer() as srv:
        for strategy in (None, "swap,ensemble:3"):
            before = srv.requests
            score(ScoreRequest(pool="p", judge=f"openai:m@{srv.url}", formats=["tournament"], db=db,
                               strategy=strategy, schedule="both", progress=False, logprobs=False))
            made = srv.requests - before
            if strategy:
                requests = made
        # the server's usage: prompt tokens = words of the prompt, 1 completion token, per request
        words = sum(n * len(prompt.split()) for prompt, n in srv.attempts.items())
    m = mitigations(db, "p").sort("calls_per_verdict")
    base, wrapped = m.row(0, named=True), m.row(1, named=True)
    assert (base["n_calls"], base["calls"]) == (4, 4)           # 2 prompts x 1 pair x 2 orders
    assert (wrapped["n_calls"], wrapped["calls_per_verdict"], wrapped["calls"]) == (4, 6, 24)
    assert requests == 24
    assert base["tokens_in"] + wrapped["tokens_in"] == words
    assert (base["tokens_out"], wrapped["tokens_out"]) == (4, 24)
    assert wrapped["baseline"] == "m" and wrapped["strategy"] == "swap,ensemble:3"


def test_ensemble_takes_the_median_over_temperatures():
    by_temp = {0.0: "A++", 0.5: "B+", 1.0: "A+"}          # values 2, -1, 1 -> median 1 -> A+
    spec, judge, made = judge_with("ensemble:3", lambda c, s: by_temp[s["temperature"]])
    reply = ask(judge)
    assert reply.text == "A+" and spec.settings["calls_per_verdict"] == 3
    assert sorted(s["temperature"] for _, s, _ in made[0].calls) == [0.0, 0.5, 1.0]
    assert (reply.tokens_in, reply.tokens_out) == (30, 6)
    # an unparsed member is left out: median(-2, 1) = -0.5, half-way between B+ and TIE -> TIE
    by_temp = {0.0: "no idea", 0.5: "B++", 1.0: "A+"}
    assert ask(judge_with("ensemble:3", lambda c, s: by_temp[s["temperature"]])[1]).text == "TIE"


def test_cross_judge_majority_over_http():
    """This judge (A+ from the server) and two fakes that can only say B: the majority says B."""
    with OpenAIServer() as srv:
        fakes = "fake:b1?slot_bias=-4&noise=0;fake:b2?slot_bias=-4&noise=0"
        spec = with_strategy(parse_judge(f"openai:m@{srv.url}", FORMATS), f"cross:{fakes}", FORMATS)
        judge = spec.factory()

        async def go():
            try:
                f = TOURN
                hints = CallHints(format_name="tournament", kind="comparative", reference_a=0.5, reference_b=0.5,
                                  key="k", texts=TEXTS)
                return await judge.complete([{"role": "user", "content": f.render("q", a="x", b="y")}],
                                            {"temperature": 0.0, "max_tokens": 16}, hints)
            finally:
                await judge.aclose()
        reply = asyncio.run(go())
        assert srv.requests == 1
    assert reply.raw["parts"] == ["A+", "B++", "B++"] and reply.text == "B++"
    assert spec.settings["calls_per_verdict"] == 3


def test_reasoning_verdict_is_parsed_from_the_structured_tail():
    spec, judge, made = judge_with("reason", lambda c, s: "A is terse. B is wrong.\n\nVerdict: **A+**")
    assert ask(judge).text == "A+"
    content, settings, _ = made[0].calls[0]
    assert content.rstrip().endswith("Verdict: <one of A++, A+, TIE, B+, B++>")
    assert settings["max_tokens"] >= 256
    # no verdict line: the whole text stays, and the format's parser finds it ambiguous
    text = "A+ or B+, hard to say"
    reply = ask(judge_with("reason", lambda c, s: text)[1])
    assert reply.text == text and TOURN.parse(reply.text).status == "ambiguous"


def test_rubric_and_reference_rerender_the_call():
    _, judge, made = judge_with("rubric,reference",
                                lambda c, s: "Two is the smallest prime." if "Response A" not in c else "A++")
    reply = ask(judge)
    (answer_prompt, _, _), (judged, _, _) = made[0].calls
    assert answer_prompt == TEXTS["prompt"]                      # the judge answers first
    assert "Two is the smallest prime." in judged and RUBRIC in judged and "Response A: two" in judged
    assert reply.text == "A++" and reply.raw["calls"] == 2 and reply.tokens_in == 20
