"""A real OpenAI-compatible server we did not write: llama-cpp-python's, serving the bundled GGUF.

`LlamaServer()` starts it, waits for /v1/models, then makes one real completion before handing the
URL to a test. A server that cannot answer (it died, or a native build met an instruction the
kernel has not enabled: SIGILL) fails the test with what happened and the tail of its log, never
with a transport error twenty calls later.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx

from tests.conftest import free_port, wait_http


def describe_exit(code: int | None) -> str:
    """A server process's end in words: SIGILL says what it usually means here."""
    if code is None:
        return "it is still running but did not answer"
    if code < 0:
        name = signal.Signals(-code).name
        if -code == signal.SIGILL:
            return (f"it died with {name} (an illegal instruction): llama.cpp was built for CPU features "
                    "this machine's kernel does not enable (e.g. AMX or AVX-512 from a native build); "
                    "rebuild it portably: `rm .venv/.llama-stamp && make test`")
        return f"it died with {name}"
    return f"it exited with status {code}"


class LlamaServer:
    """with LlamaServer() as url: ...  (url ends in /v1)"""

    def __init__(self, threads: int = 2, ctx: int = 2048):
        self.threads, self.ctx = threads, ctx
        self.proc: subprocess.Popen | None = None
        self.log = Path(tempfile.mkdtemp(prefix="llama-server-")) / "server.log"

    def _fail(self, what: str) -> None:
        code = self.proc.poll() if self.proc else None
        tail = self.log.read_text(errors="replace")[-1500:] if self.log.exists() else ""
        self.stop()
        raise RuntimeError(f"llama_cpp.server {what}: {describe_exit(code)}. Its log ends:\n{tail}")

    def __enter__(self) -> str:
        from ingest.scoring.judges.local import gguf_path
        port = free_port()
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf_path()), "--n_threads",
                 str(self.threads), "--n_ctx", str(self.ctx), "--host", "127.0.0.1", "--port", str(port)],
                stdout=log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}/v1"
        if not wait_http(url + "/models"):
            self._fail("did not come up within 120 s")
        try:    # one real completion: a build that cannot run on this CPU dies here, not in the test
            reply = httpx.post(url + "/chat/completions", timeout=120, json={
                "model": "check", "max_tokens": 2, "temperature": 0,
                "messages": [{"role": "user", "content": "Say OK."}]})
            reply.raise_for_status()
            reply.json()["choices"][0]["message"]
        except (httpx.HTTPError, KeyError, ValueError) as exc:
            self._fail(f"could not answer one completion ({type(exc).__name__}: {exc})")
        self.url = url
        return url

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __exit__(self, *exc) -> None:
        self.stop()
