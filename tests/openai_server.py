"""A small OpenAI-compatible chat-completions server on loopback, for tests and benchmarks.

It answers like a judge that reads the format line of the prompt (ACCEPT, 4, 85, A+) and can
inject faults, chosen by a marker in the prompt text so counts are exact and deterministic:
    [fault=500xN]     HTTP 500 for the first N attempts of that call, then an answer
    [fault=429xN]     HTTP 429 with Retry-After: 0.05, N times
    [fault=badjsonxN] a 200 whose body is not JSON, N times
    [fault=dropxN]    close the connection without answering, N times
    [fault=hangxN]    answer only after `hang_s` seconds (past the client's timeout), N times
    [fault=prose]     always answer prose instead of a verdict
Constrained decoding: `constraints` names the request fields it honours (structured_outputs,
guided_choice, grammar, json_schema, response_format): under one, it answers a label allowed there
(as JSON {"verdict": ...} for the JSON ones). A constraint field it does not honour is refused with
HTTP 400 when `refuse_unknown`, else silently ignored (as many servers do).
Runs in a background thread: `with OpenAIServer() as srv: srv.url`.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import threading
from collections import Counter

CONSTRAINT_FIELDS = ("structured_outputs", "guided_choice", "grammar", "json_schema", "response_format")


def allowed_labels(field: str, value) -> list[str]:
    """The labels a constraint allows, read back from the request field."""
    if field == "structured_outputs":
        return list(value["choice"])
    if field == "guided_choice":
        return list(value)
    if field == "grammar":
        return [m.replace('\\"', '"') for m in re.findall(r'"((?:[^"\\]|\\.)*)"', value)]
    schema = value["json_schema"]["schema"] if field == "response_format" else value
    return list(schema["properties"]["verdict"]["enum"])


FAULT = re.compile(r"\[fault=(500|429|badjson|drop|hang|prose)(?:x(\d+))?\]")


def verdict_for(prompt: str) -> str:
    if "ACCEPT or REJECT" in prompt:
        return "ACCEPT"
    if "1-5 scale" in prompt:
        return "4"
    if "0-100 scale" in prompt:
        return "85"
    return "A+"


class OpenAIServer:
    def __init__(self, latency_s: float = 0.0, hang_s: float = 3.0, model: str = "test-judge", port: int = 0,
                 constraints: tuple[str, ...] = (), refuse_unknown: bool = True):
        self.latency_s, self.hang_s, self.model = latency_s, hang_s, model
        self.constraints, self.refuse_unknown = set(constraints), refuse_unknown
        self.constrained_requests = 0
        self._want_port = port        # 0: any free port; a fixed one to restart "the same" endpoint
        self.attempts: Counter = Counter()        # call content -> requests seen
        self.requests = 0
        self.auth_headers: set[str] = set()
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self.port = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self):
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc):
        async def shutdown():
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self._loop.stop()
        asyncio.run_coroutine_threadsafe(shutdown(), self._loop)
        self._thread.join(5)
        self._loop.close()

    def _serve(self):
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", self._want_port))
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in lines[1:] if h)}
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                if "authorization" in headers:
                    self.auth_headers.add(headers["authorization"])
                status, payload, extra = await self._respond(json.loads(body))
                if status is None:          # drop the connection
                    writer.close()
                    return
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                head_out = [f"HTTP/1.1 {status} {'OK' if status == 200 else 'Error'}",
                            "Content-Type: application/json", f"Content-Length: {len(data)}", *extra]
                writer.write(("\r\n".join(head_out) + "\r\n\r\n").encode() + data)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    async def _respond(self, request: dict):
        self.requests += 1
        prompt = request["messages"][-1]["content"]
        self.attempts[prompt] += 1
        attempt = self.attempts[prompt]
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        m = FAULT.search(prompt)
        kind, times = (m.group(1), int(m.group(2) or 10**9)) if m else (None, 0)
        if kind and kind != "prose" and attempt <= times:
            if kind == "500":
                return 500, {"error": {"message": "internal error"}}, []
            if kind == "429":
                return 429, {"error": {"message": "rate limited"}}, ["Retry-After: 0.05"]
            if kind == "badjson":
                return 200, b"{not json", []
            if kind == "drop":
                return None, None, []
            if kind == "hang":
                await asyncio.sleep(self.hang_s)
        text = "The response seems fine to me." if kind == "prose" else verdict_for(prompt)
        for field in [f for f in CONSTRAINT_FIELDS if f in request]:
            if field not in self.constraints:
                if self.refuse_unknown:
                    return 400, {"error": {"message": f"Unrecognized request argument supplied: {field}"}}, []
                continue
            self.constrained_requests += 1
            allowed = allowed_labels(field, request[field])
            text = text if text in allowed else allowed[0]
            if field in ("json_schema", "response_format"):
                text = json.dumps({"verdict": text})
        choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        if request.get("logprobs"):
            first = text.split()[0]
            alts = {first: math.log(0.7), "3" if first == "4" else "REJECT" if first == "ACCEPT" else "B+": math.log(0.3)}
            choice["logprobs"] = {"content": [{"token": first, "logprob": math.log(0.7),
                                               "top_logprobs": [{"token": t, "logprob": lp} for t, lp in alts.items()]}]}
        return 200, {"id": "cmpl-1", "object": "chat.completion", "model": self.model, "choices": [choice],
                     "usage": {"prompt_tokens": len(prompt.split()), "completion_tokens": 1,
                               "total_tokens": len(prompt.split()) + 1}}, []
