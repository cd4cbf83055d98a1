"""Benchmark: judge calls per second end to end (HTTP -> parse -> DuckDB) against a zero-latency
local OpenAI-compatible server, at concurrency 64, with the client CPU time per verdict. The
baseline, measured in the same run, is the bare client: the same requests through one httpx
client per connection, with no parsing and no database.

The server is nginx answering a fixed chat completion (Debian's nginx, if installed: C, so it takes
little of the 2 cores) or else tests/openai_server.py in its own process.

    .venv/bin/python tests/bench/bench_ingest.py [--calls 6000] [--concurrency 64] [--server nginx|python]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

SERVER = """
import sys, time
sys.path.insert(0, {root!r})
from tests.openai_server import OpenAIServer
with OpenAIServer() as s:
    print(s.port, flush=True)
    time.sleep(3600)
"""


NGINX_CONF = """worker_processes 1; daemon off; pid {dir}/nginx.pid; error_log {dir}/error.log;
events {{ worker_connections 1024; }}
http {{ access_log off; client_body_temp_path {dir}; proxy_temp_path {dir}; fastcgi_temp_path {dir};
  uwsgi_temp_path {dir}; scgi_temp_path {dir}; keepalive_requests 1000000;
  server {{ listen 127.0.0.1:{port}; location / {{ default_type application/json;
    return 200 '{{"id":"x","object":"chat.completion","model":"nginx","choices":[{{"index":0,"message":{{"role":"assistant","content":"ACCEPT"}},"finish_reason":"stop"}}],"usage":{{"prompt_tokens":30,"completion_tokens":1}}}}'; }} }} }}
"""


def start_server(kind: str, work: Path):
    if kind == "nginx":
        import socket
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        conf = work / "nginx.conf"
        conf.write_text(NGINX_CONF.format(dir=work, port=port))
        proc = subprocess.Popen(["nginx", "-c", str(conf), "-p", str(work)], stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", json={})
                break
            except httpx.HTTPError:
                time.sleep(0.05)
        return proc, port
    proc = subprocess.Popen([sys.executable, "-c", SERVER.format(root=str(ROOT))], stdout=subprocess.PIPE, text=True)
    return proc, int(proc.stdout.readline())


def cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


async def bare_client(url: str, n: int, concurrency: int) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "Is this response of acceptable quality? "
                                                                   "Reply with exactly one word: ACCEPT or REJECT."}],
            "max_tokens": 16, "temperature": 0}
    todo = iter(range(n))

    from ingest.scoring.judges.openai_compat import _ssl_context

    async def worker():
        async with httpx.AsyncClient(limits=httpx.Limits(max_connections=1), verify=_ssl_context()) as client:
            for _ in todo:
                r = await client.post(url + "/chat/completions", json=body)
                r.json()
    await asyncio.gather(*(worker() for _ in range(concurrency)))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=6000)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--server", choices=["nginx", "python"], default="nginx" if shutil.which("nginx") else "python")
    args = ap.parse_args()
    from ingest.store import import_pool
    from ingest.scoring import score, ScoreRequest

    work = Path(tempfile.mkdtemp(prefix="judgeaudit-ingest-"))
    server, port = start_server(args.server, work)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        pool = work / "pool.jsonl"
        with open(pool, "w") as fh:
            for i in range(args.calls):
                fh.write(json.dumps({"prompt_id": f"q{i // 4}", "prompt": f"Question {i // 4}",
                                     "candidate_id": f"c{i % 4}", "response": f"Answer {i}"}) + "\n")
        db = work / "bench.duckdb"
        import_pool(db, pool, "bench")

        asyncio.run(bare_client(url, 200, args.concurrency))              # warm-up
        c0, t0 = cpu_seconds(), time.perf_counter()
        asyncio.run(bare_client(url, args.calls, args.concurrency))
        bare_s, bare_cpu = time.perf_counter() - t0, cpu_seconds() - c0

        c0, t0 = cpu_seconds(), time.perf_counter()
        result = score(ScoreRequest(pool="bench", judge=f"openai:bench@{url}", formats=["binary"], db=db,
                                    concurrency=args.concurrency, progress=False, logprobs=False))
        full_s, full_cpu = time.perf_counter() - t0, cpu_seconds() - c0
        assert result["made"] == args.calls and result["failed"] == 0, result
    finally:
        server.kill()
    n = args.calls
    print(f"{n} calls at concurrency {args.concurrency} against a zero-latency local server ({args.server})")
    print(f"bare httpx client (baseline): {n / bare_s:,.0f} calls/s, {bare_cpu / n * 1000:.2f} ms CPU per call")
    print(f"judgeaudit score end to end:  {n / full_s:,.0f} verdicts/s, {full_cpu / n * 1000:.2f} ms CPU per verdict "
          f"(incl. planning, journal, DuckDB writes)")
    print(f"ratio end-to-end / bare client: {(n / full_s) / (n / bare_s):.2f}")


if __name__ == "__main__":
    main()
