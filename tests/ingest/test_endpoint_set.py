"""Several endpoints for one judge (issue 21 §2; DESIGN.md 'Past one machine'): the pool's rules on
a fake clock, the SPEC grammar and the identity, judgeaudit.toml's base_urls, and runs against two
real local servers, one of them stopped mid-run."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ingest import UserError
from ingest.endpoints import endpoints
from ingest.scoring import ScoreRequest, score
from ingest.scoring._endpoints import EndpointSet, EndpointsDown
from ingest.scoring._request import ensure_spec_judge
from ingest.scoring.formats import BUILTIN
from ingest.scoring.judges import parse_judge, public_endpoint
from ingest.store import import_pool
from tests.conftest import query_rows
from tests.openai_server import OpenAIServer

EXE = str(Path(sys.executable).with_name("judgeaudit"))


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _pool(n=2, concurrency=2, drain_after=3, cooldown_s=10.0, clock=None, log=None):
    return EndpointSet([f"http://e{i}/v1" for i in range(n)], concurrency, drain_after, cooldown_s,
                        clock=clock or Clock(), log=(log.append if log is not None else lambda m: None))


# -- the pool, on a fake clock ------------------------------------------------------------------

def test_pool_spreads_calls_and_holds_each_endpoints_concurrency():
    async def go():
        pool = _pool(concurrency=2)
        # most free slots first, ties to the lower index: 0, 1, 0, 1 (2 + 2 slots)
        got = [await pool.acquire() for _ in range(4)]
        assert got == [0, 1, 0, 1]
        assert [h.in_use for h in pool.health] == [2, 2]
        waiting = asyncio.ensure_future(pool.acquire())      # a fifth attempt waits for a slot
        await asyncio.sleep(0)
        assert not waiting.done()
        pool.release(1, "answered")
        assert await waiting == 1 and [h.in_use for h in pool.health] == [2, 2]
    asyncio.run(go())


def test_waiting_attempts_are_served_in_order_and_a_release_does_not_overtake():
    async def go():
        pool = _pool(n=2, concurrency=1)
        assert [await pool.acquire(), await pool.acquire()] == [0, 1]
        first = asyncio.ensure_future(pool.acquire())
        await asyncio.sleep(0)
        pool.release(0, "answered")      # the releasing worker asks again at once, without yielding ...
        again = asyncio.ensure_future(pool.acquire())
        assert await asyncio.wait_for(first, 1) == 0  # ... but the slot went to the attempt that waited
        await asyncio.sleep(0.01)
        assert not again.done()
        pool.release(1, "answered")
        assert await again == 1
    asyncio.run(go())


def test_an_endpoint_failing_in_a_row_is_drained_then_probed_after_its_cool_down():
    async def go():
        clock, log = Clock(), []
        pool = _pool(concurrency=4, drain_after=3, cooldown_s=10.0, clock=clock, log=log)
        for _ in range(2):
            i = await pool.acquire()
            pool.release(i, "answered")
        # failures of endpoint 0, an answer between resets the count: F F A F F -> not drained yet
        for outcome in ("failed", "failed", "answered", "failed", "failed"):
            pool.health[0].in_use += 1
            pool.release(0, outcome, "transport error")
        assert pool.health[0].state == "up" and pool.health[0].fails == 2
        pool.health[0].in_use += 1
        pool.release(0, "failed", "transport error")     # the third in a row
        assert pool.health[0].state == "drained" and pool.health[0].drained_until == 110.0
        assert "drained for 10 s, 3 failed attempts in a row (last: transport error)" in log[-1]
        # drained: every attempt goes to endpoint 1, whatever its load (up to its own 4 slots)
        assert [await pool.acquire() for _ in range(4)] == [1, 1, 1, 1]
        assert pool.elsewhere(1) is False and pool.elsewhere(0) is True
        for _ in range(4):
            pool.release(1, "answered")
        clock.now = 110.0            # the cool-down is over: endpoint 0 takes one probe at a time
        assert pool.usable(0) and pool.health[0].state == "probing"
        held = [await pool.acquire() for _ in range(5)]      # 1 probe on 0 + endpoint 1's 4 slots
        assert sorted(held) == [0, 1, 1, 1, 1]
        sixth = asyncio.ensure_future(pool.acquire())
        await asyncio.sleep(0.01)
        assert not sixth.done()      # no second attempt on a probing endpoint
        sixth.cancel()
        pool.release(0, "answered")                       # the probe answered: back whole
        assert pool.health[0].state == "up" and pool.health[0].drains == 0
        assert "answering again" in log[-1]
    asyncio.run(go())


def test_a_failed_probe_drains_again_and_the_pool_is_down_only_when_none_came_back():
    async def go():
        pool = EndpointSet(["http://e0/v1", "http://e1/v1"], 2, drain_after=2, cooldown_s=0.1,
                            log=lambda m: None)      # the real clock: the waiter wakes by itself

        def fail(i, times):
            for _ in range(times):
                pool.health[i].in_use += 1
                pool.release(i, "failed", "HTTP 503: busy")

        fail(0, 2)
        fail(1, 2)
        # both drained once: not down, an attempt waits for the first cool-down to end
        assert [h.state for h in pool.health] == ["drained", "drained"] and not pool.down()
        waiting = asyncio.ensure_future(pool.acquire())
        await asyncio.sleep(0.02)
        assert not waiting.done()
        assert await asyncio.wait_for(waiting, 1) == 0   # the cool-downs end: a probe slot
        pool.release(0, "failed", "HTTP 503: busy")    # endpoint 0's probe fails: drained again
        assert pool.health[0].drains == 2 and not pool.down()   # endpoint 1 has not been probed yet
        i = await pool.acquire()
        assert i == 1
        pool.release(1, "failed", "connection refused")
        assert pool.down()
        with pytest.raises(EndpointsDown, match="all 2 endpoints are down: http://e0/v1 .*HTTP 503.*"
                                                "http://e1/v1 .*connection refused"):
            await pool.acquire()
    asyncio.run(go())


def test_a_waiting_attempt_hears_that_the_pool_is_down():
    async def go():
        clock = Clock()
        pool = _pool(n=2, concurrency=1, drain_after=1, cooldown_s=1.0, clock=clock)
        for i in (0, 1):
            pool.health[i].drains = 1
        first, second = await pool.acquire(), await pool.acquire()
        waiting = asyncio.ensure_future(pool.acquire())
        await asyncio.sleep(0)
        pool.release(first, "failed", "x")
        pool.release(second, "failed", "y")      # both drained a second time since they answered
        with pytest.raises(EndpointsDown):
            await asyncio.wait_for(waiting, 1)
    asyncio.run(go())


def test_a_retry_avoids_the_endpoint_that_failed_it_while_another_is_up():
    async def go():
        pool = _pool(n=2, concurrency=1)
        assert await pool.acquire() == 0
        pool.release(0, "failed", "reset")
        assert await pool.acquire() == 0        # a new call may go to 0 (1 failure, not drained) ...
        pool.release(0, "answered")
        assert await pool.acquire(avoid=0) == 1  # ... the retry of the call that failed there goes to 1
        retry = asyncio.ensure_future(pool.acquire(avoid=1))
        await asyncio.sleep(0)
        assert await retry == 0
    asyncio.run(go())


# -- the SPEC grammar and the identity -----------------------------------------------------------

FORMATS = {"likert5": BUILTIN["likert5"]}


def test_several_endpoints_are_one_judge_whose_endpoint_is_the_sorted_set():
    one = parse_judge("openai:m@http://gpu-b:8000/v1/", FORMATS)
    assert one.endpoint == "http://gpu-b:8000/v1" and one.endpoints == ["http://gpu-b:8000/v1"]
    assert one.settings == {"api_key_env": None, "timeout": 60.0}      # exactly as before several
    two = parse_judge("openai:m@http://gpu-b:8000/v1,http://user:pw@gpu-a:8000/v1?k=1", FORMATS)
    assert two.endpoint == "http://gpu-a:8000/v1,http://gpu-b:8000/v1"   # sorted, no credentials
    assert two.endpoints == ["http://gpu-a:8000/v1", "http://gpu-b:8000/v1"] and two.name == "m"
    swapped = parse_judge("openai:m@http://gpu-a:8000/v1,http://gpu-b:8000/v1", FORMATS)
    assert swapped.endpoint == two.endpoint
    assert "pw" not in json.dumps(two.settings)
    with pytest.raises(UserError, match="the endpoint http://gpu-a:8000/v1 is given twice"):
        parse_judge("openai:m@http://gpu-a:8000/v1,http://gpu-a:8000/v1/", FORMATS)
    with pytest.raises(UserError, match="'ftp://gpu-b' is not an http\\(s\\) URL"):
        parse_judge("openai:m@http://gpu-a:8000/v1,ftp://gpu-b", FORMATS)
    with pytest.raises(UserError, match="'' is not an http"):
        parse_judge("openai:m@http://gpu-a:8000/v1,", FORMATS)
    with pytest.raises(UserError) as info:
        parse_judge("openai:m@http://gpu-a:8000/v1,http://user:secret@", FORMATS)
    assert "secret" not in str(info.value)


def test_the_set_of_endpoints_binds_the_judge_name(db, write_jsonl):
    import_pool(db, write_jsonl("pool.jsonl", [{"prompt_id": "q", "prompt": "Q", "candidate_id": "c",
                                                 "response": "r"}]), "p")
    decoding = {"temperature": 0.0, "max_tokens": 16, "reasoning": "none"}
    both = parse_judge("openai:m@http://b:1/v1,http://a:1/v1", FORMATS)
    jid = ensure_spec_judge(db, both, decoding)
    # the same set in another order is the same judge
    assert ensure_spec_judge(db, parse_judge("openai:m@http://a:1/v1,http://b:1/v1", FORMATS), decoding) == jid
    with pytest.raises(UserError, match='endpoint "http://a:1/v1,http://b:1/v1" is stored, this run has '
                                        '"http://a:1/v1".*--judge-name'):
        ensure_spec_judge(db, parse_judge("openai:m@http://a:1/v1", FORMATS), decoding)
    stored = query_rows(db, "SELECT endpoint, identity FROM judges")
    assert stored[0][0] == "http://a:1/v1,http://b:1/v1"
    assert json.loads(stored[0][1])["endpoint"] == "http://a:1/v1,http://b:1/v1"


def test_a_configured_endpoint_with_base_urls_gives_a_several_endpoint_judge(db, tmp_path):
    (tmp_path / "judgeaudit.toml").write_text(
        '[endpoints.farm]\nbase_urls = ["http://gpu-1:8000/v1/", "http://gpu-2:8000/v1"]\n'
        'model = "qwen"\napi_key_env = "FARM_KEY"\n'
        '[endpoints.one]\nbase_url = "http://gpu-3:8000/v1"\nmodel = "qwen"\n')
    eps = endpoints(db)
    assert eps["farm"].base_urls == ("http://gpu-1:8000/v1", "http://gpu-2:8000/v1")
    spec = eps["farm"].judge_spec("qwen")
    assert (spec, eps["farm"].api_key_env) == ("openai:qwen@http://gpu-1:8000/v1,http://gpu-2:8000/v1", "FARM_KEY")
    assert parse_judge(spec, FORMATS).endpoints == ["http://gpu-1:8000/v1", "http://gpu-2:8000/v1"]
    assert (eps["one"].judge_spec("qwen"), eps["one"].api_key_env) == ("openai:qwen@http://gpu-3:8000/v1", None)
    with pytest.raises(UserError, match="model 'llama' is not configured"):
        eps["one"].judge_spec("llama")
    for body, field in [('base_url = "http://a/v1"\nbase_urls = ["http://b/v1"]\n', "base_url"),
                        ("base_urls = []\n", "base_urls"),
                        ('base_urls = ["http://a/v1", "ftp://b"]\n', "base_urls"),
                        ('base_urls = ["http://a/v1", "http://a/v1/"]\n', "base_urls")]:
        (tmp_path / "judgeaudit.toml").write_text(f'[endpoints.bad]\n{body}model = "m"\n')
        with pytest.raises(UserError, match=f"field 'endpoints.bad.{field}'"):
            endpoints(db)


# -- two real servers -----------------------------------------------------------------------------

class StoppableServer(OpenAIServer):
    """The test server, with stop(): close the listening socket (new connections are refused) and
    cut the requests in flight, as a killed server would."""

    def _serve(self):
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", self._want_port))
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

    def stop(self):
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._server.close)
            super().__exit__(None, None, None)

    def __exit__(self, *exc):
        self.stop()


def _stop_when(server: StoppableServer, requests: int) -> threading.Thread:
    def watch():
        deadline = time.time() + 60
        while server.requests < requests and time.time() < deadline:
            time.sleep(0.002)
        server.stop()
    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def _rows(n_prompts=30, k=4):
    return [{"prompt_id": f"q{p}", "prompt": f"Question {p}", "candidate_id": f"c{c}",
             "response": f"answer {c} to {p}", "reference": float(c)} for p in range(n_prompts) for c in range(k)]


def _request(*servers, **kw):
    base = dict(pool="p", judge="openai:test-judge@" + ",".join(s.url for s in servers),
                formats=["likert5", "binary"], concurrency=3, timeout=2.0, max_retries=2, retry_base_s=0.01,
                retry_cap_s=0.05, flush_interval_s=0.05, progress=False, drain_after=3, cooldown_s=0.2)
    return ScoreRequest(**{**base, **kw})


def test_one_endpoint_stopped_mid_run_the_run_finishes_on_the_survivor(db, write_jsonl, capfd):
    import_pool(db, write_jsonl("pool.jsonl", _rows()), "p")      # 30 prompts x 4 = 120 candidates
    with StoppableServer(latency_s=0.01) as a, StoppableServer(latency_s=0.01) as b:
        watcher = _stop_when(a, 40)
        result = score(_request(a, b))
        watcher.join(5)
        a_requests, b_requests = a.requests, b.requests
    url_a, url_b = public_endpoint(a.url), public_endpoint(b.url)
    # 120 candidates x 2 pointwise formats = 240 calls, every one stored once and parsed
    assert (result["status"], result["planned"], result["made"], result["failed"]) == ("finished", 240, 240, 0)
    keys = query_rows(db, "SELECT count(*), count(DISTINCT (format_id, prompt_idx, a_idx, sample)), "
                          "count(*) FILTER (WHERE status = 'ok') FROM verdicts")
    assert keys == [(240, 240, 240)]
    per_endpoint = dict(query_rows(db, "SELECT endpoint, count(*) FROM verdicts GROUP BY endpoint"))
    assert set(per_endpoint) == {url_a, url_b} and per_endpoint[url_a] > 0
    assert per_endpoint[url_a] + per_endpoint[url_b] == 240
    # A answered fewer than the 40 requests it saw before it was stopped (some were cut in flight);
    # B never failed, so each of its requests is one stored answer: the rest of the run is B's
    assert per_endpoint[url_a] <= 40 <= a_requests
    assert per_endpoint[url_b] == b_requests and per_endpoint[url_b] >= 200
    assert result["endpoints"] == {url_a: per_endpoint[url_a], url_b: per_endpoint[url_b]}
    # the calls cut on A were retried on B: more than one attempt, and B's answer stored
    retried = query_rows(db, f"SELECT count(*) FROM verdicts WHERE attempts > 1 AND endpoint = '{url_b}'")[0][0]
    assert retried >= 1 and query_rows(db, "SELECT count(*) FROM verdicts WHERE attempts > 1 AND "
                                           f"endpoint = '{url_a}'")[0][0] == 0
    judge = query_rows(db, "SELECT name, endpoint FROM judges")
    assert judge == [("test-judge", ",".join(sorted([url_a, url_b])))]
    err = capfd.readouterr().err
    assert f"endpoint {url_a}: drained" in err and url_b + ": drained" not in err
    print(f"calls per endpoint: A (stopped after 40 requests) {per_endpoint[url_a]}, "
          f"B {per_endpoint[url_b]}; A saw {a_requests} requests, B {b_requests}")


def test_all_endpoints_down_fails_the_run_and_the_same_command_resumes(db, write_jsonl):
    import_pool(db, write_jsonl("pool.jsonl", _rows(n_prompts=20)), "p")     # 80 candidates x 2 = 160 calls
    with StoppableServer(latency_s=0.01) as a, StoppableServer(latency_s=0.01) as b:
        ports = a.port, b.port
        a_watch, b_watch = _stop_when(a, 20), _stop_when(b, 20)
        started = time.perf_counter()
        with pytest.raises(UserError, match=r"all 2 endpoints are down: .*The run stopped: \d+ calls were stored, "
                                            r"\d+ are still to make; run the same command again"):
            score(_request(a, b, drain_after=2, cooldown_s=0.3))
        took = time.perf_counter() - started
        a_watch.join(5)
        b_watch.join(5)
    assert took < 10        # drained, one cool-down, failed probes: down, not a hang on timeouts
    stored = query_rows(db, "SELECT count(*) FROM verdicts WHERE status = 'ok'")[0][0]
    assert 0 < stored < 160
    run = query_rows(db, "SELECT status, error FROM runs ORDER BY run_id DESC LIMIT 1")[0]
    assert run[0] == "failed" and "endpoints are down" in run[1]
    # both come back on their ports (the same endpoints, the same judge): the rest is made
    with StoppableServer(port=ports[0]) as a2, StoppableServer(port=ports[1]) as b2:
        again = score(_request(a2, b2))
        assert a2.requests > 0 and b2.requests > 0
    assert again["status"] == "finished" and again["already_done"] == stored
    assert query_rows(db, "SELECT count(*), count(*) FILTER (WHERE status = 'ok') FROM verdicts") == [(160, 160)]


def test_constrained_decoding_is_checked_on_every_endpoint(db, write_jsonl):
    import_pool(db, write_jsonl("pool.jsonl", _rows(n_prompts=2)), "p")
    with OpenAIServer(constraints=("guided_choice",)) as good, OpenAIServer(constraints=()) as bad:
        req = _request(good, bad, formats=["likert5"], decoding="constrained", constraint="guided_choice")
        with pytest.raises(UserError, match=f"the server at {bad.url} refused the 'guided_choice' constraint"):
            score(req)
        assert good.constrained_requests == (1 if good.url < bad.url else 0)   # checked in the set's order
        assert good.requests + bad.requests <= 2      # the check calls only: no call of the run
    assert query_rows(db, "SELECT count(*) FROM verdicts") == [(0,)]
    with OpenAIServer(constraints=("guided_choice",)) as one, OpenAIServer(constraints=("guided_choice",)) as two:
        result = score(_request(one, two, formats=["likert5"], decoding="constrained", constraint="guided_choice"))
        assert result["made"] == 8 and one.constrained_requests > 1 and two.constrained_requests > 1


def test_drain_after_and_cooldown_from_the_command_line(db, write_jsonl):
    import_pool(db, write_jsonl("pool.jsonl", _rows(n_prompts=20)), "p")      # 80 candidates: 80 calls
    with StoppableServer(latency_s=0.01) as a, StoppableServer(latency_s=0.01) as b:
        watcher = _stop_when(a, 10)
        done = subprocess.run([EXE, "score", "--pool", "p", "--judge", f"openai:test-judge@{a.url},{b.url}",
                               "--formats", "binary", "--concurrency", "2", "--timeout", "2", "--drain-after", "1",
                               "--cooldown", "45", "--db", str(db), "--json"], capture_output=True, text=True,
                              timeout=120)
        watcher.join(5)
    assert done.returncode == 0, done.stderr
    # one failure drains A (--drain-after 1) for 45 s (--cooldown): longer than the run, so A is
    # never probed again and is drained exactly once; B makes the rest
    assert done.stderr.count(f"endpoint {public_endpoint(a.url)}: drained for 45 s, 1 failed attempts in a row") == 1
    assert "its probe after the cool-down failed" not in done.stderr
    assert json.loads(done.stdout)["made"] == 80
    assert query_rows(db, "SELECT count(*), count(*) FILTER (WHERE status = 'ok') FROM verdicts") == [(80, 80)]
