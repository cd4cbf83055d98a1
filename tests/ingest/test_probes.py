"""The built-in probe set and `judgeaudit probe`: judges whose biases are known by construction
must show them, with the expected sign and size worked out from the data independently. (audit/_probes.py
on hand-made pools: tests/audit/test_probes.py; Holm and McNemar: tests/audit/test_stats.py.)"""

import hashlib
import json
import re
from collections import Counter
from importlib import resources

import polars as pl
import pytest
from scipy import stats

from audit import mitigations, probes
from ingest.scoring.probes import probe_rows, run_probe
from tests.audit.conftest import C, T
from tests.conftest import SHARED_DATA
from tests.openai_server import OpenAIServer

PAIRS = [json.loads(line) for line in
         (resources.files("ingest.scoring.probes") / "controlled_pairs.jsonl").read_text("utf-8").splitlines()]
SOURCE_SHA = "5d6049ce21cfa38a873da959b73beab8fc828d18735a272910229c446f3d215a"


def by_type(frame) -> dict:
    return {r["type"]: r for r in frame.iter_rows(named=True)}


def sign(x: float) -> int:
    return (x > 0) - (x < 0)


class LengthServer(OpenAIServer):
    """A judge that prefers the longer of the two responses (TIE when equally long)."""
    LAYOUT = re.compile(r"\n\nResponse A: (.*)\n\nResponse B: (.*)\n\nWhich response is better\?", re.S)

    async def _respond(self, request):
        self.requests += 1
        prompt = request["messages"][-1]["content"]
        a, b = self.LAYOUT.search(prompt).groups()
        text = {1: "A+", -1: "B+", 0: "TIE"}[sign(len(a) - len(b))]
        return 200, {"model": "length-judge", "choices": [{"index": 0, "message": {"content": text}}],
                     "usage": {"prompt_tokens": len(prompt.split()), "completion_tokens": 1}}, []


def test_the_bundled_file_is_the_source_verbatim_with_its_credit():
    raw = (resources.files("ingest.scoring.probes") / "controlled_pairs.jsonl").read_bytes()
    assert hashlib.sha256(raw).hexdigest() == SOURCE_SHA
    shared = SHARED_DATA / "judging_the_judges_controlled" / "controlled_pairs.jsonl"
    if shared.exists():
        assert shared.read_bytes() == raw
    readme = (resources.files("ingest.scoring.probes") / "README.md").read_text("utf-8")
    assert "MIT" in readme and "sksoumik/judging-the-judges" in readme and SOURCE_SHA in readme
    assert len(PAIRS) == 375


def test_probe_pool_rows():
    rows = probe_rows()
    assert len(rows) == 2 * 325                              # style_ba mirrors style: left out
    pairs = Counter(r["prompt_id"].rsplit("_", 1)[0].split("_rr")[0] for r in rows[::2])
    assert pairs == {"position": 50, "length": 50, "length_truncated": 25, "style": 50, "model_origin": 150}
    assert [r["candidate_id"] for r in rows[:4]] == ["treated", "control", "treated", "control"]
    src = {p["id"]: p for p in PAIRS}
    trunc = [r for r in rows if r["prompt_id"].startswith("length_truncated")]
    for treated, control in zip(trunc[::2], trunc[1::2]):    # treated = the truncation, reference 0
        assert treated["response"] == src[treated["prompt_id"]]["response_b"] and treated["reference"] == 0.0
        assert control["response"] == src[control["prompt_id"]]["response_a"] and control["reference"] == 1.0
    assert {r["reference"] for r in rows if not r["prompt_id"].startswith("length_truncated")} == {0.5}
    sample = probe_rows(sample=3, seed=7)
    assert len(sample) == 2 * 15 and sample == probe_rows(sample=3, seed=7) != probe_rows(sample=3, seed=8)


def test_the_docs_and_the_page_agree_on_the_probe_set():
    # 375 pairs in the source file, 50 of them style_ba (style with the slots reversed: left out), so a probe
    # run judges 325 (probe_rows above); the command's docs and the Probes page say the same figure
    from ingest.scoring.probes import probe_set
    numbers = probe_set()
    assert numbers == {"source": len(PAIRS), "probed": len(probe_rows()) // 2,
                       "mirrored": sum(p["bias_type"] == "style_ba" for p in PAIRS)} == \
        {"source": 375, "probed": 325, "mirrored": 50}
    from tests.conftest import REPO
    docs = (REPO / "docs" / "command-line.md").read_text()
    assert "Judges the built-in probe set (325 controlled pairs: the 375 of Soumik" in docs
    assert "all 325 without --sample" in docs and "(the 375 controlled pairs" not in docs
    page = (REPO / "app" / "views" / "probes" / "page.py").read_text()
    assert "325" not in page and "375" not in page          # the page writes the figures of probe_set()


def test_a_slot_biased_fake_judge(db):
    """fake: with equal references its margin is slot_bias + N(0, noise * (2 - -2) / 2), read as the
    nearest label: slot A preferred when it is > 0.5, slot B when < -0.5. slot_bias 0.5, noise 0.15:
    P(A) - P(B) = Phi((0.5 - 0.5) / 0.3) - Phi((-0.5 - 0.5) / 0.3) = 0.5 - 0.0004 = 0.4996 for position;
    for length and markdown the treated response sits in A and in B once each, so the slot pull
    cancels: 0. A truncated response (reference 0 vs 1) loses by 4 margin points: bias -1."""
    run_probe(db, "fake:sim?slot_bias=0.5&noise=0.15")
    rows = by_type(probes(db, "probes"))
    expected = stats.norm.cdf(0) - stats.norm.cdf(-1 / 0.3)
    pos = rows["position"]
    assert pos["n"] == 50 and pos["n_calls"] == 100
    assert abs(pos["bias"] - expected) < 0.15 and pos["lo"] <= expected <= pos["hi"]
    for t in ("length", "markdown"):
        assert abs(rows[t]["bias"]) < 0.15 and rows[t]["lo"] <= 0 <= rows[t]["hi"]
    assert rows["truncation"]["bias"] == -1.0 and rows["truncation"]["accuracy"] == 1.0
    assert rows["origin"]["n"] == 0 and rows["origin"]["bias"] is None     # not a source model family
    assert {t for t in rows if t.startswith("origin:")} == {"origin:claude-sonnet-4", "origin:gemini-2.5-pro",
                                                            "origin:gpt-4o", "origin:llama-3.3-70b"}


def test_a_judge_that_prefers_the_longer_response(db):
    """Expected from the source file alone: the mean over a type's pairs of sign(len(treated) -
    len(control)) (the judge does not care about order, so both orders agree)."""
    def expected(kind, treated="response_a", control="response_b"):
        pairs = [p for p in PAIRS if p["bias_type"] == kind]
        return sum(sign(len(p[treated]) - len(p[control])) for p in pairs) / len(pairs)
    with LengthServer() as srv:
        run_probe(db, f"openai:length-judge@{srv.url}")
        assert srv.requests == 650
    rows = by_type(probes(db, "probes"))
    assert rows["position"]["bias"] == 0.0 and rows["position"]["lo"] == rows["position"]["hi"] == 0.0
    # the treated response of a length pair is the longer one by measured length (the source's
    # '~2x longer' rewrite is shorter in 10 of its 50 pairs): a judge preferring length scores +1
    assert sum(len(p["response_a"]) < len(p["response_b"]) for p in PAIRS if p["bias_type"] == "length") == 10
    assert rows["length"]["bias"] == 1.0
    assert rows["markdown"]["bias"] == pytest.approx(expected("style"))
    assert rows["truncation"]["bias"] == pytest.approx(expected("length_truncated", "response_b", "response_a"))
    assert rows["truncation"]["accuracy"] == pytest.approx((1 - expected("length_truncated", "response_b",
                                                                          "response_a")) / 2)


def test_swap_removes_a_pure_slot_bias_and_mcnemar_says_so(db):
    """The loopback server always answers A+. Baseline: position bias +1, and it agrees with the
    expected verdicts only where the complete response of a truncation pair sits in slot A (one
    call per truncation pair). Swapped, every verdict is a TIE: right on all the other pairs' calls,
    wrong on the truncation calls. So b = truncation pairs, c = 2 x the other pairs."""
    with OpenAIServer() as srv:
        run_probe(db, f"openai:m@{srv.url}", sample=4)
        before = srv.requests
        run_probe(db, f"openai:m@{srv.url}", sample=4, strategy="swap")
        swap_requests = srv.requests - before
    base, swapped = by_type(probes(db, "probes-4-s0", judge="m")), by_type(probes(db, "probes-4-s0", judge="m+swap"))
    assert base["position"]["bias"] == 1.0 and base["length"]["bias"] == 0.0
    assert base["truncation"]["accuracy"] == 0.5
    assert all(r["bias"] == 0.0 for r in swapped.values() if r["n"])
    m = {r["judge"]: r for r in mitigations(db, "probes-4-s0").iter_rows(named=True)}
    n_trunc, n_other = 4, 16                                 # 4 pairs per type, 5 types
    assert m["m"]["agreement"] == pytest.approx(n_trunc / 40)
    assert m["m+swap"]["agreement"] == pytest.approx(2 * n_other / 40)
    assert (m["m+swap"]["b"], m["m+swap"]["c"]) == (n_trunc, 2 * n_other)
    assert m["m+swap"]["test"] == "chi2_cc" and m["m+swap"]["p"] == m["m+swap"]["p_cc"]   # 36 discordant
    assert m["m+swap"]["p_exact"] == pytest.approx(stats.binomtest(4, 36, 0.5).pvalue)
    assert m["m+swap"]["p_holm"] == m["m+swap"]["p"]          # one comparison
    assert m["m+swap"]["calls"] == swap_requests == 80 and m["m+swap"]["calls_per_verdict"] == 2
    assert m["m"]["frontier"] and m["m+swap"]["frontier"]


def test_probe_cli_end_to_end(db, capsys):
    from app.cli import main
    assert main(["probe", "--judge", "fake:sim", "--sample", "2", "--strategy", "swap", "--n-boot", "200",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["judge"] == "sim+swap" and doc["pool"] == "probes-2-s0" and doc["status"] == "finished"
    types = [r["type"] for r in doc["probes"]]
    assert types[:5] == ["position", "length", "truncation", "markdown", "origin"]
    for row in doc["probes"]:
        assert {"type", "n", "bias", "lo", "hi"} <= set(row)
        assert row["bias"] is None or -1 <= row["lo"] <= row["bias"] <= row["hi"] <= 1
    assert doc["cost"]["calls"] == 2 * 20 and doc["cost"]["calls_per_verdict"] == 2
    assert main(["runs", "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert [(r["kind"], r["status"]) for r in runs] == [("probe", "finished")]
    # a bad strategy is refused with a message naming it
    assert main(["probe", "--judge", "fake:sim", "--strategy", "swapp"]) == 1
    assert "unknown part 'swapp'" in capsys.readouterr().err


@pytest.mark.slow
def test_the_bundled_model_on_a_small_sample(db):
    """local:smollm2 on 1 pair per probe type, both orders (10 calls)."""
    out = run_probe(db, "local:smollm2", sample=1, timeout=600)     # a loaded 2-core machine: ~60 s a call
    assert out["made"] == 10 and out["failed"] == 0
    rows = by_type(probes(db, "probes-1-s0", n_boot=200))
    assert {"position", "length", "truncation", "markdown", "origin"} <= set(rows)
    for r in rows.values():
        assert r["bias"] is None or -1 <= r["bias"] <= 1


def test_probes_page_shows_biases_and_launches_a_run(db, monkeypatch):
    import time

    import duckdb
    from streamlit.testing.v1 import AppTest

    from tests.conftest import REPO, query_rows
    for strategy in (None, "swap"):
        run_probe(db, "fake:sim?slot_bias=0.5", sample=2, strategy=strategy)
    monkeypatch.setenv("JUDGEAUDIT_DB", str(db))
    at = AppTest.from_file(str(REPO / "app" / "main.py"), default_timeout=180).run()
    at.switch_page("views/probes/page.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.header[0].value == "Probes & mitigations"
    assert at.caption[0].value.startswith("The built-in probe set: 325 controlled pairs (the 375 of Soumik")
    assert len(at.dataframe) == 2                     # truncation accuracy; the mitigations table
    at.text_input[0].set_value("dash")
    at.text_input[1].set_value("swap")
    at.number_input[0].set_value(1)
    next(b for b in at.button if b.label == "Launch").click().run()
    assert not at.exception and "Started probe run" in at.success[0].value
    deadline, status = time.time() + 120, None
    while time.time() < deadline and status not in ("finished", "failed"):
        time.sleep(1)
        try:
            status = query_rows(db, "SELECT status FROM runs WHERE config->>'judge' = 'dash+swap'")
            status = status[0][0] if status else None
        except duckdb.Error:          # the run holds the file between batches
            continue
    assert status == "finished"
    assert query_rows(db, "SELECT count(*) FROM verdicts v JOIN judges j USING (judge_id) "
                          "WHERE j.name = 'dash+swap'") == [(10,)]      # 5 pairs x 2 orders


def test_another_judges_probes_leave_a_judges_intervals_alone(db):
    """Each (judge, probe type) bootstraps with its own seeded generator: probing a judge whose name
    sorts first must not move the intervals of one probed before."""
    run_probe(db, "fake:bsim?slot_bias=0.5&noise=0.15", sample=10)
    before = probes(db, "probes-10-s0")
    run_probe(db, "fake:asim?slot_bias=1&noise=0.3", sample=10)
    both = probes(db, "probes-10-s0")            # asim's rows now come first
    assert set(both["judge"]) == {"asim", "bsim"}
    assert both.filter(pl.col("judge") == "bsim").equals(before)
    assert not probes(db, "probes-10-s0", judge="bsim", seed=1).equals(before)   # the seed does matter


class SideServer(OpenAIServer):
    """A judge that prefers the longer response (or, `longer=False`, the shorter; TIE when equally
    long), reports 1 completion token and the prompt's words as prompt tokens, and keeps every prompt."""

    def __init__(self, longer: bool = True, **kw):
        super().__init__(**kw)
        self.longer, self.prompts = longer, []

    async def _respond(self, request):
        self.requests += 1
        prompt = request["messages"][-1]["content"]
        self.prompts.append(prompt)
        a, b = LengthServer.LAYOUT.search(prompt).groups()
        text = {1: "A+", -1: "B+", 0: "TIE"}[sign(len(a) - len(b)) * (1 if self.longer else -1)]
        return 200, {"model": self.model, "choices": [{"index": 0, "message": {"content": text}}],
                     "usage": {"prompt_tokens": len(prompt.split()), "completion_tokens": 1}}, []


def swap_pool(db, write_jsonl) -> tuple[list[str], list[str]]:
    """q1..q6: x (reference 1) v y (reference 2); x is the longer answer on odd prompts, y on even
    ones; q7 has no second reference. m prefers the longer answer, k the shorter (both are right on
    half the calls), each asked alone and swapped (k+swap in the anchored format too); l-ref
    (imported) always answers A+. Returns the prompts m's server saw plain and swapped."""
    from ingest.store import import_pool
    from ingest.scoring import import_verdicts
    from ingest.scoring import score, ScoreRequest
    rows = [{"prompt_id": f"q{i}", "prompt": f"question {i}", "candidate_id": cid, "reference": ref,
             "response": " ".join([cid] * (3 if (cid == "x") == (i % 2 == 1) else 1))}
            for i in range(1, 7) for cid, ref in (("x", 1.0), ("y", 2.0))]
    rows += [{"prompt_id": "q7", "prompt": "question 7", "candidate_id": cid, "response": cid, "reference": ref}
             for cid, ref in (("x", 1.0), ("w", None))]
    import_pool(db, write_jsonl("swaps.jsonl", rows), "swaps")
    import_verdicts(db, write_jsonl("l-ref.jsonl", [
        {"judge": "l-ref", "format": "tournament", "prompt_id": f"q{i}", "a_id": a, "b_id": b, "raw": "A+"}
        for i in range(1, 7) for a, b in (("x", "y"), ("y", "x"))]), "swaps")

    def run(url, strategy, formats=("tournament",)):
        score(ScoreRequest(pool="swaps", judge=f"openai:{url}", formats=list(formats), db=db, schedule="both",
                           strategy=strategy, progress=False, logprobs=False, concurrency=2))
    with SideServer(longer=True, model="m") as long_, SideServer(longer=False, model="k") as short:
        run(f"m@{long_.url}", None)
        plain_prompts = list(long_.prompts)
        run(f"m@{long_.url}", "swap")
        run(f"k@{short.url}", "swap", ("anchored", "tournament"))
    return plain_prompts, long_.prompts[len(plain_prompts):]


def test_strategies_against_their_own_judge_or_the_first_plain_one(db, write_jsonl):
    """m+swap is compared with m, its own judge; k+swap, whose judge k was never run here, with the
    first judge without a strategy (l-ref) in the tournament, and with nothing in the anchored format."""
    plain_prompts, swap_prompts = swap_pool(db, write_jsonl)
    m = mitigations(db, "swaps")
    assert list(zip(m["format"], m["judge"])) == [("anchored", "k+swap"), ("tournament", "k+swap"),
                                                  ("tournament", "l-ref"), ("tournament", "m"),
                                                  ("tournament", "m+swap")]
    got = {(r["format"], r["judge"]): r for r in m.iter_rows(named=True)}
    lone, k, ref, plain, swapped = got.values()
    # each is right on half of its counted calls (q7 left out): 12 in the tournament (both orders),
    # 6 in the anchored format (x in slot A against the anchor y)
    assert [(r["n_calls"], r["agreement"]) for r in got.values()] == [(6, 0.5)] + [(12, 0.5)] * 4
    assert [r["strategy"] for r in got.values()] == ["swap", "swap", "baseline", "baseline", "swap"]
    assert [r["calls_per_verdict"] for r in got.values()] == [2, 2, 1, 1, 2]
    assert [r["calls"] for r in got.values()] == [12, 24, 12, 12, 24]
    # tokens: the server's usage of the counted calls (q7's left out); a swap verdict's is its two requests'
    counted = [len(p.split()) for p in plain_prompts if "question 7" not in p]
    assert len(counted) == 12
    assert (plain["tokens_in"], plain["tokens_out"]) == (sum(counted), 12)
    assert plain["tokens_per_verdict"] == pytest.approx((sum(counted) + 12) / 12)
    counted = [len(p.split()) for p in swap_prompts if "question 7" not in p]
    assert len(counted) == 24
    assert (swapped["tokens_in"], swapped["tokens_out"]) == (sum(counted), 24)
    assert swapped["tokens_per_verdict"] == pytest.approx((sum(counted) + 24) / 12)
    # m+swap v m: the same answers, no discordant call
    assert (swapped["baseline"], swapped["n_paired"], swapped["b"], swapped["c"]) == ("m", 12, 0, 0)
    assert (swapped["test"], swapped["p"], swapped["p_holm"]) == ("exact", 1.0, 1.0)
    # k+swap v l-ref: l-ref is right on (y, x), k on odd prompts. b = (y, x) on q2, q4, q6 = 3;
    # c = (x, y) on q1, q3, q5 = 3
    assert (k["baseline"], k["n_paired"], k["b"], k["c"], k["p"]) == ("l-ref", 12, 3, 3, 1.0)
    for r in (lone, ref, plain):
        assert r["baseline"] is None and r["b"] is None and r["p_holm"] is None
    # l-ref spends no recorded tokens and agrees as well as the others: alone on the frontier
    assert [r["frontier"] for r in got.values()] == [True, False, True, False, False]


def test_self_preference_reads_the_family_of_the_judges_model(db, write_jsonl):
    """A judge named 'house' whose model is gpt-4o-mini: model_origin_1 (gpt-4o v llama) is a pair
    with one response of its own family; model_origin_2 (claude v qwen) is not. The loopback server
    answers A+ in both orders: +1 with gpt-4o in slot A, -1 with it in slot B."""
    from ingest.store import import_pool
    from ingest.scoring import score, ScoreRequest
    pairs = (("model_origin_1", ("gpt-4o", "llama3:8b")), ("model_origin_2", ("claude-4", "qwen-2")))
    rows = [{"prompt_id": pid, "prompt": f"question {pid}", "candidate_id": cid, "response": f"{cid} {pid}",
             "reference": 0.5, "model": model} for pid, models in pairs for cid, model in zip((T, C), models)]
    import_pool(db, write_jsonl("house.jsonl", rows), "house")
    with OpenAIServer() as srv:
        score(ScoreRequest(pool="house", judge=f"openai:gpt-4o-mini@{srv.url}", judge_name="house",
                           formats=["tournament"], db=db, schedule="both", progress=False, logprobs=False))
    origin = by_type(probes(db, "house", n_boot=50))["origin"]
    assert (origin["judge"], origin["n"], origin["n_calls"], origin["bias"]) == ("house", 1, 2, 0.0)
