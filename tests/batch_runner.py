"""A small batch runner for tests: reads OpenAI Batch request files, POSTs each line's body to an
OpenAI-compatible server one line at a time, and writes the result lines in vLLM's shape
(`vllm run-batch`: failed lines have status 400, a null body and `error` a string) or in OpenAI's
(a failed line has `response` null and `error` {"code", "message"}).

    python tests/batch_runner.py --url http://127.0.0.1:8000/v1 --shape vllm -o results.jsonl requests-*.jsonl
"""

from __future__ import annotations

import argparse
import json
import uuid
from pathlib import Path

import httpx


def _result(custom_id: str, shape: str, status: int, body: dict | None, error: str | None) -> dict:
    if shape == "vllm":
        return {"id": f"vllm-{uuid.uuid4().hex}", "custom_id": custom_id,
                "response": {"status_code": status, "request_id": f"vllm-batch-{uuid.uuid4().hex}",
                             "body": body if error is None else None},
                "error": error}
    if error is not None:
        return {"id": f"batch_req_{uuid.uuid4().hex}", "custom_id": custom_id, "response": None,
                "error": {"code": "server_error" if status >= 500 else "invalid_request", "message": error}}
    return {"id": f"batch_req_{uuid.uuid4().hex}", "custom_id": custom_id,
            "response": {"status_code": status, "request_id": uuid.uuid4().hex, "body": body}, "error": None}


def run_batch(files: list[Path], url: str, out: Path, shape: str = "vllm", timeout: float = 120.0) -> int:
    """Answer every line of `files` through the server at `url` (ending in /v1); returns the lines."""
    base = url.rstrip("/").removesuffix("/v1")
    n = 0
    with httpx.Client(timeout=timeout) as client, open(out, "w", encoding="utf-8") as fh:
        for path in files:
            for text in Path(path).read_text(encoding="utf-8").splitlines():
                if not text.strip():
                    continue
                line = json.loads(text)
                assert line["method"] == "POST" and line["url"] == "/v1/chat/completions", line
                try:
                    response = client.post(base + line["url"], json=line["body"])
                    body = response.json() if response.status_code == 200 else None
                    error = None if response.status_code == 200 else f"HTTP {response.status_code}: {response.text[:200]}"
                    status = response.status_code if shape == "openai" or error is None else 400
                except httpx.HTTPError as exc:
                    status, body, error = 400, None, f"{type(exc).__name__}: {exc}"
                fh.write(json.dumps(_result(line["custom_id"], shape, status, body, error)) + "\n")
                n += 1
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--url", required=True)
    ap.add_argument("--shape", choices=["vllm", "openai"], default="vllm")
    ap.add_argument("-o", "--out", required=True, type=Path)
    args = ap.parse_args()
    print(run_batch(args.files, args.url, args.out, args.shape))


if __name__ == "__main__":
    main()
