"""Helpers the metric tests share (each was copied into several files)."""

import json
import math

import numpy as np


def candidate(pid, cid, ref=None, response=None) -> dict:
    """One pool row: prompt `pid` ("prompt PID"), candidate `cid` answering `response` (its id when
    none), with reference score `ref`."""
    return {"prompt_id": pid, "prompt": f"prompt {pid}", "candidate_id": cid,
            "response": response or cid, "reference": ref}


def pointwise(judge, fmt, raws) -> list[dict]:
    """One verdict row per (prompt, candidate, raw) triple of `judge` in format `fmt`."""
    return [{"judge": judge, "format": fmt, "prompt_id": p, "candidate_id": c, "raw": raw} for p, c, raw in raws]


def main_json(capsys, *args) -> dict:
    """Run the command line in this process (app.cli.main) and read the JSON document it printed."""
    from app.cli import main
    assert main(list(args)) == 0
    return json.loads(capsys.readouterr().out)


def _arr(*xs, dtype=np.int64):
    """A hand-sized numpy array (int64 unless told)."""
    return np.array(xs, dtype=dtype)


def _by_hand_top1(s, r, sizes, key):
    """The definition, one prompt at a time: among the judge-top candidates take the one with the
    largest key; top1 = whether it is reference-top. Mean over prompts."""
    out, start = [], 0
    for k in sizes:
        sl = slice(start, start + k)
        sq, rq, kq = np.asarray(s[sl]), np.asarray(r[sl]), np.asarray(key[sl])
        tops = np.flatnonzero(sq == sq.max())
        chosen = tops[np.argmax(kq[tops])]
        out.append(float(rq[chosen] == rq.max()))
        start += k
    return float(np.mean(out))


# the two responses of a probe pair (tests/audit/test_probes.py's hand-made pools, and the end-to-end
# probe runs of tests/ingest/test_probes.py)
T, C = "treated", "control"


def chi2_1df_sf(x: float) -> float:
    """P(chi-square with 1 df > x) = P(|Z| > sqrt(x)) = erfc(sqrt(x / 2))."""
    return math.erfc(math.sqrt(x / 2))
