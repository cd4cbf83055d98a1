"""The built-in probe set and `judgeaudit probe`: judges whose biases are known by construction
must show them, with the expected sign and size worked out from the data independently."""

import hashlib
import json
import math
import re
from collections import Counter
from importlib import resources

import polars as pl
import pytest
from scipy import stats

from audit import mitigations, probes
from ingest.scoring.probes import probe_rows, run_probe
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


# -- the statistics, by hand (issue 13: mutation testing) ------------------------------------------
def reference_cluster_share(pair, score, n_boot, rng):
    """Slow, obvious restatement of the probe bias and its interval: the mean over calls; per
    replicate, draw as many pairs as there are, with replacement (one rng.integers(0, G, size=G)
    draw each), pool the drawn pairs' calls and take their mean; then the 2.5th and 97.5th
    percentiles with linear interpolation between order statistics."""
    ids = sorted(set(pair))
    calls = {g: [s for p, s in zip(pair, score) if p == g] for g in ids}
    means = []
    for _ in range(n_boot):
        pooled = [s for i in rng.integers(0, len(ids), size=len(ids)) for s in calls[ids[i]]]
        means.append(sum(pooled) / len(pooled))
    means.sort()

    def percentile(q):
        h = (len(means) - 1) * q
        k = int(h)
        return means[k] + (h - k) * (means[min(k + 1, len(means) - 1)] - means[k])
    return sum(score) / len(score), percentile(0.025), percentile(0.975)


def test_cluster_share_is_the_call_mean_with_a_bootstrap_over_pairs():
    import numpy as np

    from audit._probes import cluster_share
    # pairs 3 (2 calls), 7 (1 call), 9 (3 calls): the mean over the 6 calls is (1+0+1-1+0+1)/6 = 1/3,
    # not the mean of the pair means (0.5 + 1 + 0)/3 = 0.5
    pair, score = np.array([3, 3, 7, 9, 9, 9]), np.array([1.0, 0.0, 1.0, -1.0, 0.0, 1.0])
    est, lo, hi = cluster_share(pair, score, 400, np.random.default_rng(11))
    want = reference_cluster_share(pair.tolist(), score.tolist(), 400, np.random.default_rng(11))
    assert est == pytest.approx(1 / 3)
    assert (est, lo, hi) == pytest.approx(want, rel=1e-12, abs=1e-12)
    assert lo < est < hi and hi <= 1.0
    # eight pairs of 1 to 4 calls: a bootstrap distribution fine enough that the 2.5th and 97.5th
    # percentiles are not also the 3.5th and 98.5th. Mean over the 16 calls: 3/16
    pair = np.array([0, 0, 1, 2, 2, 2, 3, 4, 4, 5, 6, 6, 7, 7, 7, 7])
    score = np.array([1, 0, 1, -1, 0, 1, -1, 1, 1, 0, -1, 0, 1, 1, 0, -1], dtype=float)
    got = cluster_share(pair, score, 400, np.random.default_rng(11))
    assert got[0] == pytest.approx(3 / 16)
    want = reference_cluster_share(pair.tolist(), score.tolist(), 400, np.random.default_rng(11))
    assert got == pytest.approx(want, rel=1e-12, abs=1e-12)
    # one pair: every replicate draws it, so the interval is the point
    assert cluster_share(np.array([5, 5, 5]), np.array([1.0, 1.0, 0.0]), 50, np.random.default_rng(0)) \
        == pytest.approx((2 / 3, 2 / 3, 2 / 3))


@pytest.mark.parametrize("prompt_id,want", [
    ("position_12", "position"), ("length_3", "length"), ("length_truncated_3", "truncation"),
    ("style_40", "markdown"), ("model_origin_7", "origin"), ("model_origin_rr_2", "origin"),
    ("other_1", None), ("xposition_1", None)])
def test_probe_type_from_the_pair_id(prompt_id, want):
    from audit._probes import probe_type
    assert probe_type(prompt_id) == want


@pytest.mark.parametrize("name,want", [
    ("GPT-4o", "gpt"), ("openai/o3", "gpt"), ("Claude-Sonnet-4", "claude"), ("gemma-2-9b", "gemini"),
    ("meta-llama/Llama-3.3-70B", "llama"), ("qwen-2", None), ("", None), (None, None)])
def test_family_of_a_model_name_ignores_case(name, want):
    from audit._probes import family
    assert family(name) == want


def test_pareto_frontier_by_hand():
    from audit._probes import pareto
    # (cost, agreement). (2, .6) is dominated by (1, .6): cheaper, as good. (3, .9) and (3, .9) tie:
    # neither dominates the other. (1, .6) and (0, .1): nothing cheaper agrees as well.
    assert pareto([1, 2, 3, 3, 0], [0.6, 0.6, 0.9, 0.9, 0.1]) == [True, False, True, True, True]
    # (2, .5) is dominated by (2, .7) (same cost, agrees more); (4, .7) by (2, .7) (costs more)
    assert pareto([2, 2, 4], [0.5, 0.7, 0.7]) == [False, True, False]
    assert pareto([5], [0.2]) == [True]


def test_holm_caps_at_one_and_keeps_ties_together():
    from audit import holm
    # m = 2: 0.6 x 2 = 1.2 -> capped at 1; 0.7 x 1 = 0.7 -> running max 1
    assert holm([0.6, 0.7]) == [1.0, 1.0]
    # m = 3, a tie: sorted 0.01 x 3 = 0.03, 0.02 x 2 = 0.04, 0.02 x 1 = 0.02 -> running max 0.04
    assert holm([0.02, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])
    assert holm([]) == []


def binom_two_sided(k: int, n: int) -> float:
    """Twice the lower tail of Binomial(n, 1/2) at k = min(b, c), at most 1."""
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n)


def chi2_1df_sf(x: float) -> float:
    """P(chi-square with 1 df > x) = P(|Z| > sqrt(x)) = erfc(sqrt(x / 2))."""
    return math.erfc(math.sqrt(x / 2))


@pytest.mark.parametrize("b,c,cc", [
    (0, 0, None),
    (1, 0, 0.0),            # |1 - 0| - 1 = 0
    (3, 0, 4 / 3),          # (3 - 1)^2 / 3
    (1, 4, 4 / 5),          # (|1 - 4| - 1)^2 / 5 = 4 / 5
    (3, 2, 0.0),            # |1| - 1 = 0: the correction floors at 0, not at 1
    (10, 2, 49 / 12),       # (8 - 1)^2 / 12 = 49 / 12 (not 2 x 7 / 12)
    (19, 5, 169 / 24),      # 24 discordant: still the exact test
    (20, 5, 196 / 25),      # 25 discordant: the corrected chi-square
    (5, 20, 196 / 25),
])
def test_mcnemar_by_hand(b, c, cc):
    from audit import mcnemar
    got = mcnemar(b, c)
    assert set(got) == {"p_exact", "p_cc", "p", "test"}
    if cc is None:          # no discordant pair: nothing to test
        assert got == {"p_exact": 1.0, "p_cc": 1.0, "p": 1.0, "test": "exact"}
        return
    n = b + c
    assert got["p_exact"] == pytest.approx(binom_two_sided(min(b, c), n), rel=1e-9)
    assert got["p_exact"] == pytest.approx(stats.binomtest(min(b, c), n, 0.5).pvalue, rel=1e-12)
    assert got["p_cc"] == pytest.approx(chi2_1df_sf(cc), rel=1e-9)
    assert got["test"] == ("exact" if n < 25 else "chi2_cc")
    assert got["p"] == (got["p_exact"] if n < 25 else got["p_cc"])


# A hand-made probe pool: pair ids in the source's naming, `treated` and `control` (and, once, two
# other candidates), models where an origin pair names them ('llama3:8b' has a colon, as Ollama tags do)
HAND_PAIRS = [("position_1", None, None), ("position_2", None, None), ("position_3", None, None),
              ("position_4", None, None), ("length_1", None, None), ("length_truncated_1", None, None),
              ("length_truncated_2", None, None), ("style_1", None, None),
              ("model_origin_1", "gpt-4o", "llama3:8b"), ("model_origin_2", "claude-sonnet-4", "gpt-4o"),
              ("model_origin_3", "qwen-2", "qwen-2"), ("model_origin_4", "gpt-4o", "gpt-4o-mini"),
              ("model_origin_5", "gpt-4o", "claude-sonnet-4"), ("model_origin_6", "gpt-4o", "claude-sonnet-4"),
              ("model_origin_7", "claude-sonnet-4", "gpt-4o"), ("model_origin_8", "gpt-4o", "claude-sonnet-4"),
              ("other_1", None, None)]
T, C = "treated", "control"
# (judge, pair, slot A, slot B, raw); margins for slot A: A++ 2, A+ 1, TIE 0, B+ -1, B++ -2
HAND_CALLS = [
    # alpha: no model family, no origin calls, sorts first
    ("alpha", "position_1", T, C, "TIE"), ("alpha", "position_1", C, T, "TIE"),
    # beta: one call only, an origin pair
    ("beta", "model_origin_1", T, C, "A+"),
    ("gpt-judge", "position_1", T, C, "A+"), ("gpt-judge", "position_1", C, T, "B+"),
    ("gpt-judge", "position_2", T, C, "A++"), ("gpt-judge", "position_2", C, T, "maybe"),
    ("gpt-judge", "position_3", "x", "y", "B+"), ("gpt-judge", "position_3", "y", "x", "B+"),
    ("gpt-judge", "position_4", T, C, "no idea"), ("gpt-judge", "position_4", C, T, "?"),
    ("gpt-judge", "length_1", T, C, "TIE"), ("gpt-judge", "length_1", C, T, "B+"),
    ("gpt-judge", "length_truncated_1", T, C, "B++"), ("gpt-judge", "length_truncated_1", C, T, "A+"),
    ("gpt-judge", "length_truncated_2", T, C, "TIE"), ("gpt-judge", "length_truncated_2", C, T, "B+"),
    ("gpt-judge", "style_1", T, C, "A+"), ("gpt-judge", "style_1", C, T, "A++"),
    ("gpt-judge", "model_origin_1", T, C, "A+"), ("gpt-judge", "model_origin_1", C, T, "B++"),
    ("gpt-judge", "model_origin_2", T, C, "A+"), ("gpt-judge", "model_origin_2", C, T, "TIE"),
    ("gpt-judge", "model_origin_3", T, C, "A+"), ("gpt-judge", "model_origin_3", C, T, "B+"),
    ("gpt-judge", "model_origin_4", T, C, "A+"), ("gpt-judge", "model_origin_4", C, T, "A+"),
    ("gpt-judge", "model_origin_5", T, C, "A+"), ("gpt-judge", "model_origin_5", C, T, "A+"),
    ("gpt-judge", "model_origin_6", T, C, "A++"), ("gpt-judge", "model_origin_6", C, T, "B+"),
    ("gpt-judge", "model_origin_7", T, C, "TIE"), ("gpt-judge", "model_origin_7", C, T, "B+"),
    ("gpt-judge", "model_origin_8", T, C, "A+"), ("gpt-judge", "model_origin_8", C, T, "unsure"),
    ("gpt-judge", "other_1", T, C, "A+"), ("gpt-judge", "other_1", C, T, "A+"),
]


def hand_probe_db(db, write_jsonl, pool="probes"):
    from ingest.store import import_pool
    from ingest.scoring import import_verdicts
    rows = []
    for pid, m_treated, m_control in HAND_PAIRS:
        cands = [("x", None), ("y", None)] if pid == "position_3" else [(T, m_treated), (C, m_control)]
        rows += [{"prompt_id": pid, "prompt": f"question {pid}", "candidate_id": cid,
                  "response": f"{cid} answer to {pid}", "reference": 0.5, "model": model} for cid, model in cands]
    import_pool(db, write_jsonl("hand-pool.jsonl", rows), pool)
    import_verdicts(db, write_jsonl("hand-verdicts.jsonl", [
        {"judge": j, "format": "tournament", "prompt_id": p, "a_id": a, "b_id": b, "raw": raw}
        for j, p, a, b, raw in HAND_CALLS]), pool)


def test_probe_rows_by_hand(db, write_jsonl):
    """Per call: +1 toward the treated response (for `position`: toward slot A), -1 away, 0 a TIE,
    unparsed calls left out; bias = the mean over parsed calls, n = pairs with a parsed call."""
    from audit import cell_rng
    hand_probe_db(db, write_jsonl)
    frame = probes(db, seed=3, n_boot=300)           # the default pool name: "probes"
    assert frame.columns == ["judge", "type", "n", "n_calls", "parse_rate", "bias", "lo", "hi", "accuracy",
                             "acc_lo", "acc_hi", "treated", "control"]
    got = {(r["judge"], r["type"]): r for r in frame.iter_rows(named=True)}
    assert list(got) == [("alpha", "position"),
                         ("beta", "origin"), ("beta", "origin:gpt-4o"), ("beta", "origin:llama3:8b"),
                         ("gpt-judge", "position"), ("gpt-judge", "length"), ("gpt-judge", "truncation"),
                         ("gpt-judge", "markdown"), ("gpt-judge", "origin"),
                         ("gpt-judge", "origin:claude-sonnet-4"), ("gpt-judge", "origin:gpt-4o"),
                         ("gpt-judge", "origin:gpt-4o-mini"), ("gpt-judge", "origin:llama3:8b"),
                         ("gpt-judge", "origin:qwen-2")]
    # (n, n_calls, parse_rate, bias, pair index -> the parsed calls' preferences)
    pos = {"position_1": [1, -1], "position_2": [1]}     # slot A: A+ +1, B+ -1; A++ +1; 'maybe' unparsed;
    #                                                     position_3 (x, y) is no treated/control pair
    want = {
        ("alpha", "position"): (1, 2, 1.0, 0.0, {"position_1": [0, 0]}),
        ("gpt-judge", "position"): (2, 3, 3 / 6, 1 / 3, pos),
        # length_1: treated in A, TIE 0; control in A, B+ -> the treated won: +1
        ("gpt-judge", "length"): (1, 2, 1.0, 1 / 2, {"length_1": [0, 1]}),
        # truncation 1: B++ with the truncation in A -> -1; A+ with the complete one in A -> -1
        # truncation 2: TIE 0; B+ with the complete one in A -> +1. Mean (-1 - 1 + 0 + 1) / 4
        ("gpt-judge", "truncation"): (2, 4, 1.0, -1 / 4, {"length_truncated_1": [-1, -1],
                                                           "length_truncated_2": [0, 1]}),
        # markdown: A+ (treated in A) +1, A++ (control in A) -1
        ("gpt-judge", "markdown"): (1, 2, 1.0, 0.0, {"style_1": [1, -1]}),
        # self-preference of a gpt judge (by its name; imported verdicts have no model): pairs with
        # exactly one gpt response. origin_1 (gpt-4o v llama): A+ gpt in A +1, B++ gpt in B +1;
        # origin_2 (claude v gpt-4o): A+ claude in A -1, TIE 0. origin_3 (no gpt) and origin_4
        # (gpt v gpt) are not such pairs. origin_5..8 (gpt-4o v claude): A+ +1, A+ claude in A -1;
        # A++ +1, B+ gpt in B +1; TIE 0, B+ claude in B -1; A+ +1 and an unparsed answer. 3 / 11
        ("gpt-judge", "origin"): (6, 11, 11 / 12, 3 / 11, {
            "model_origin_1": [1, 1], "model_origin_2": [-1, 0], "model_origin_5": [1, -1],
            "model_origin_6": [1, 1], "model_origin_7": [0, -1], "model_origin_8": [1]}),
        # claude: origin_2 +1 0; origin_5 -1 +1; origin_6 -1 -1; origin_7 0 +1; origin_8 -1: -1 / 9
        ("gpt-judge", "origin:claude-sonnet-4"): (5, 9, 9 / 10, -1 / 9, {
            "model_origin_2": [1, 0], "model_origin_5": [-1, 1], "model_origin_6": [-1, -1],
            "model_origin_7": [0, 1], "model_origin_8": [-1]}),
        # gpt-4o: as for the self-preference, plus origin_4 (v gpt-4o-mini): A+ gpt-4o in A +1,
        # A+ mini in A -1: 3 / 13
        ("gpt-judge", "origin:gpt-4o"): (7, 13, 13 / 14, 3 / 13, {
            "model_origin_1": [1, 1], "model_origin_2": [-1, 0], "model_origin_4": [1, -1],
            "model_origin_5": [1, -1], "model_origin_6": [1, 1], "model_origin_7": [0, -1],
            "model_origin_8": [1]}),
        ("gpt-judge", "origin:gpt-4o-mini"): (1, 2, 1.0, 0.0, {"model_origin_4": [-1, 1]}),
        ("gpt-judge", "origin:llama3:8b"): (1, 2, 1.0, -1.0, {"model_origin_1": [-1, -1]}),
        ("beta", "origin:gpt-4o"): (1, 1, 1.0, 1.0, {"model_origin_1": [1]}),
        ("beta", "origin:llama3:8b"): (1, 1, 1.0, -1.0, {"model_origin_1": [-1]}),
    }
    order = [p for p, _, _ in HAND_PAIRS]
    for key, (n, n_calls, parse_rate, bias, prefs) in want.items():
        row = got[key]
        assert (row["n"], row["n_calls"]) == (n, n_calls), key
        assert row["parse_rate"] == pytest.approx(parse_rate) and row["bias"] == pytest.approx(bias), key
        pair = [order.index(p) for p, v in prefs.items() for _ in v]
        score = [float(x) for v in prefs.values() for x in v]
        ref = reference_cluster_share(pair, score, 300, cell_rng(3, key[0], key[1]))
        assert (row["bias"], row["lo"], row["hi"]) == pytest.approx(ref, rel=1e-12, abs=1e-12), key
        if key[1] != "truncation":
            assert row["accuracy"] is None and row["acc_lo"] is None and row["acc_hi"] is None, key
    # truncation accuracy: calls preferring the complete response, a TIE not among them: 2 of 4
    trunc = got[("gpt-judge", "truncation")]
    ref = reference_cluster_share([5, 5, 6, 6], [1.0, 1.0, 0.0, 0.0], 300, cell_rng(3, "gpt-judge", "truncation"))
    assert trunc["accuracy"] == 0.5 and (trunc["acc_lo"], trunc["acc_hi"]) == pytest.approx(ref[1:], rel=1e-12)
    # a model met only against itself: no pair, nothing parsed, no parse rate
    qwen = got[("gpt-judge", "origin:qwen-2")]
    assert (qwen["n"], qwen["n_calls"], qwen["parse_rate"], qwen["bias"], qwen["lo"]) == (0, 0, None, None, None)
    # a judge of no known family: an origin row saying so
    assert {k: v for k, v in got[("beta", "origin")].items() if v is not None} == {
        "judge": "beta", "type": "origin", "n": 0, "n_calls": 0,
        "treated": "a response from the judge's own model family", "control": "one from another family"}
    # what treated and control are
    assert (got[("gpt-judge", "origin:llama3:8b")]["treated"], got[("gpt-judge", "origin:llama3:8b")]["control"]) \
        == ("a response from llama3:8b", "one from another model")
    assert (got[("alpha", "position")]["treated"], got[("alpha", "position")]["control"]) \
        == ("the response in slot A", "the response in slot B")
    assert (trunc["treated"], trunc["control"]) == ("the truncated response", "the complete response")
    # one judge's rows, alone
    assert probes(db, judge="gpt-judge", seed=3, n_boot=300).equals(frame.filter(pl.col("judge") == "gpt-judge"))


def test_no_calls_give_empty_frames_with_their_column_types(db, write_jsonl):
    from ingest.store import import_pool
    import_pool(db, write_jsonl("empty.jsonl", [{"prompt_id": "position_1", "prompt": "q", "candidate_id": c,
                                                 "response": c, "reference": 0.5} for c in (T, C)]), "quiet")
    p, m = probes(db, "quiet"), mitigations(db, "quiet")
    assert p.is_empty() and m.is_empty()
    assert dict(p.schema) == {"judge": pl.String, "type": pl.String, "n": pl.Int64, "n_calls": pl.Int64,
                              "parse_rate": pl.Float64, "bias": pl.Float64, "lo": pl.Float64, "hi": pl.Float64,
                              "accuracy": pl.Float64, "acc_lo": pl.Float64, "acc_hi": pl.Float64,
                              "treated": pl.String, "control": pl.String}
    assert dict(m.schema) == {"format": pl.String, "judge": pl.String, "baseline": pl.String,
                              "strategy": pl.String, "n_calls": pl.Int64, "agreement": pl.Float64,
                              "calls_per_verdict": pl.Int64, "calls": pl.Int64, "tokens_in": pl.Int64,
                              "tokens_out": pl.Int64, "tokens_per_verdict": pl.Float64, "n_paired": pl.Int64,
                              "b": pl.Int64, "c": pl.Int64, "test": pl.String, "p_exact": pl.Float64,
                              "p_cc": pl.Float64, "p": pl.Float64, "p_holm": pl.Float64, "frontier": pl.Boolean}


def test_probes_and_mitigations_read_the_database_they_are_given(db, write_jsonl, tmp_path, monkeypatch):
    # $JUDGEAUDIT_DB names a missing file: a function that dropped its db argument would fail
    hand_probe_db(db, write_jsonl)
    strategy_pool(db, write_jsonl)
    monkeypatch.setenv("JUDGEAUDIT_DB", str(tmp_path / "not-this.duckdb"))
    frame = probes(db, seed=3, n_boot=50)
    assert frame.height == 14 and frame["judge"][0] == "alpha"         # the rows of test_probe_rows_by_hand
    assert mitigations(db, "strat", baseline="base")["judge"].to_list()[:2] == ["base", "cot"]


def strategy_pool(db, write_jsonl):
    """Six prompts, x (reference 1) worse than y (reference 2), asked in both orders; q7 has a
    candidate without a reference (its calls are left out). Imported verdicts of three prompting
    strategies: `base` always answers A+ (right when y is in slot A), `cot` is right except on q6 and
    an unparsed answer, and asks q1 (x, y) twice; `rubric` always answers B+."""
    from ingest.store import import_pool
    from ingest.scoring import import_verdicts
    rows = [{"prompt_id": f"q{i}", "prompt": f"question {i}", "candidate_id": cid, "response": f"{cid} {i}",
             "reference": ref} for i in range(1, 7) for cid, ref in (("x", 1.0), ("y", 2.0))]
    rows += [{"prompt_id": "q7", "prompt": "question 7", "candidate_id": cid, "response": cid, "reference": ref}
             for cid, ref in (("x", 1.0), ("w", None))]
    import_pool(db, write_jsonl("strat.jsonl", rows), "strat")
    calls = []
    for i in range(1, 7):
        calls += [("base", i, "x", "y", "A+"), ("base", i, "y", "x", "A+"),
                  ("rubric", i, "x", "y", "B+"), ("rubric", i, "y", "x", "B+"),
                  ("cot", i, "x", "y", "B+" if i < 6 else "TIE"),
                  ("cot", i, "y", "x", "A++" if i < 5 else "garbled" if i == 5 else "B+")]
    calls += [("base", 7, "x", "w", "A+")]
    verdicts = [{"judge": j, "format": "tournament", "prompt_id": f"q{i}", "a_id": a, "b_id": b, "raw": raw}
                for j, i, a, b, raw in calls]
    verdicts.append({"judge": "cot", "format": "tournament", "prompt_id": "q1", "a_id": "x", "b_id": "y",
                     "raw": "B+", "sample": 1})
    # `solo` made one call in each of two other comparative formats
    verdicts += [{"judge": "solo", "format": "anchored", "prompt_id": "q1", "a_id": "x", "b_id": "y", "raw": "B+"},
                 {"judge": "solo", "format": "arena5", "prompt_id": "q2", "a_id": "y", "b_id": "x", "raw": "A=B"}]
    spec = write_jsonl("arena5.toml", ['name = "arena5"', 'kind = "comparative"',
                                       'labels = { "A>>B" = 2, "A>B" = 1, "A=B" = 0, "B>A" = -1, "B>>A" = -2 }'])
    import_verdicts(db, write_jsonl("strat-verdicts.jsonl", verdicts), "strat", format_specs=[spec])


def test_mitigations_against_a_named_baseline_by_hand(db, write_jsonl):
    strategy_pool(db, write_jsonl)
    frame = mitigations(db, "strat", baseline="base")
    assert list(zip(frame["format"], frame["judge"])) == [("tournament", "base"), ("tournament", "cot"),
                                                          ("tournament", "rubric"), ("anchored", "solo"),
                                                          ("arena5", "solo")]
    # solo: one call per format, right (y is better) in the anchored one, a wrong TIE in arena5;
    # the named baseline made no call there, so nothing is compared
    solo = frame.filter(pl.col("judge") == "solo")
    assert solo.select("n_calls", "agreement", "baseline", "p", "frontier").rows() == [(1, 1.0, None, None, True),
                                                                                   (1, 0.0, None, None, True)]
    m = {r["judge"]: r for r in frame.filter(pl.col("format") == "tournament").iter_rows(named=True)}
    base, cot, rubric = m["base"], m["cot"], m["rubric"]
    # agreement: the preferred slot is the reference's; base right on the 6 (y, x) calls of 12
    assert (base["n_calls"], base["agreement"]) == (12, 0.5)
    # cot: (x, y) right on q1-q5 and q1's second sample, (y, x) right on q1-q4: 10 of 13
    assert (cot["n_calls"], cot["agreement"]) == (13, pytest.approx(10 / 13))
    assert (rubric["n_calls"], rubric["agreement"]) == (12, 0.5)
    for r in m.values():
        assert (r["strategy"], r["calls_per_verdict"], r["calls"] == r["n_calls"]) == ("baseline", 1, True)
        assert (r["tokens_in"], r["tokens_out"], r["tokens_per_verdict"]) == (0, 0, 0.0)   # imported
    assert base["baseline"] is None and base["b"] is None and base["p"] is None and base["p_holm"] is None
    # paired on (prompt, slots, sample): the 12 calls both made. cot: b = base right, cot wrong
    # = (y, x) on q5 (unparsed) and q6 = 2; c = base wrong, cot right = (x, y) on q1-q5 = 5.
    # 7 discordant: exact, 2 x P(X <= 2 | 7, 1/2) = 2 x (1 + 7 + 21) / 128 = 0.453125
    assert (cot["baseline"], cot["n_paired"], cot["b"], cot["c"], cot["test"]) == ("base", 12, 2, 5, "exact")
    assert cot["p_exact"] == pytest.approx(0.453125) and cot["p"] == cot["p_exact"]
    assert cot["p_cc"] == pytest.approx(chi2_1df_sf((3 - 1) ** 2 / 7))
    # rubric: b = the 6 (y, x) calls, c = the 6 (x, y) calls: 2 x P(X <= 6 | 12) > 1 -> 1
    assert (rubric["n_paired"], rubric["b"], rubric["c"], rubric["p"]) == (12, 6, 6, 1.0)
    # Holm over the format's two comparisons: 0.453125 x 2 = 0.90625; 1.0 x 1 -> running max 1
    assert (cot["p_holm"], rubric["p_holm"]) == (pytest.approx(0.90625), 1.0)
    # no tokens recorded: equal cost, so only the best agreement is on the frontier
    assert [r["frontier"] for r in m.values()] == [False, True, False]
    # without a named baseline, judges without a strategy are not compared
    plain = mitigations(db, "strat")
    assert plain["judge"].to_list() == ["base", "cot", "rubric", "solo", "solo"]
    assert plain["b"].null_count() == plain["p_holm"].null_count() == plain["baseline"].null_count() == 5


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
