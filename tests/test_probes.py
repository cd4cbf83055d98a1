"""The built-in probe set and `judgeaudit probe`: judges whose biases are known by construction
must show them, with the expected sign and size derived from the data independently."""

import hashlib
import json
import re
from collections import Counter
from importlib import resources

import polars as pl
import pytest
from scipy import stats

from audit import mitigations, probes
from ingest.probes import probe_rows, run_probe
from tests.conftest import SHARED_DATA
from tests.openai_server import OpenAIServer

PAIRS = [json.loads(line) for line in
         (resources.files("ingest.probes") / "controlled_pairs.jsonl").read_text("utf-8").splitlines()]
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
    raw = (resources.files("ingest.probes") / "controlled_pairs.jsonl").read_bytes()
    assert hashlib.sha256(raw).hexdigest() == SOURCE_SHA
    shared = SHARED_DATA / "judging_the_judges_controlled" / "controlled_pairs.jsonl"
    if shared.exists():
        assert shared.read_bytes() == raw
    readme = (resources.files("ingest.probes") / "README.md").read_text("utf-8")
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
    at.switch_page("views/probes.py").run()
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
