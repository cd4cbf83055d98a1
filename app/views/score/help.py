"""The Score page's guidance as text (pure, tested): what a launch will cost before it starts."""

from __future__ import annotations


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "time unknown"
    if seconds < 1:
        return "under a second"
    if seconds >= 3600:
        return f"about {seconds / 3600:.1f} h"
    return f"about {seconds / 60:.0f} min" if seconds >= 60 else f"about {seconds:.0f} s"


def estimate_text(count: dict, local_eta: float | None, tested: dict | None, judge: str, concurrency: int,
                  basis: str = "") -> str:
    """One line: the number of calls (per format) and the estimated time: the given estimate (the
    bundled model's, as measured on this machine, or the simulated judge's latency: `basis` says
    which), else the latency of this judge's last test call over the concurrency."""
    per = " + ".join(f"{n:,} {f}" for f, n in count["per_format"].items())
    eta, how = local_eta, basis
    if eta is None:
        if tested and tested.get("judge") == judge and tested.get("latency_ms"):
            eta = count["total"] * tested["latency_ms"] / 1000 / max(1, concurrency)
            how = f"at the test call's {tested['latency_ms'] / 1000:.1f} s per call and concurrency {concurrency}"
        else:
            how = "Test connection to estimate it"
    return f"**{count['total']:,} calls** ({per}); {duration(eta)} ({how}). Calls already answered are not made again."


def local_basis(est, n_calls: int) -> str:
    """How the bundled model's time is estimated (ingest.scoring.Estimate): its load time and pace as
    runs measured them on this machine (medians of the latest runs), and how many runs; with several
    formats, each format's pace and the runs behind it; the machine's load they met and its load now;
    or a first guess before any."""
    rate = f"{n_calls / est.calls_s:.2f} calls/s" if est.calls_s else "no calls"
    what = f"{duration(est.load_s).removeprefix('about ')} to load, then {rate}"
    if not est.runs:
        return f"a first guess for the bundled model: {what}; no run measured on this machine yet"
    if len(est.paces) > 1:
        what += " (" + ", ".join(f"{fmt} {pace:.2f}/s" + (f" over {runs} run{'s' if runs != 1 else ''}" if runs else "")
                                 for fmt, pace, runs in est.paces) + ")"
    left = f"; {', '.join(est.guessed)} not measured here yet" if est.guessed else ""
    if est.load_now is not None:
        left += (f"; measured at a load of {est.load_then:.1f} a core, {est.load_now:.1f} now (a busier machine "
                 "takes longer)")
    return f"the bundled model as {est.runs} run{'s' if est.runs != 1 else ''} measured it here (medians): {what}{left}"


def sim_basis(latency_ms: float, concurrency: int) -> str:
    """How a simulated judge's time is estimated: its latency over the concurrency."""
    return f"at the simulated {latency_ms:g} ms per call over concurrency {concurrency}"


SAMPLES_HELP = ("Ask each call N times (samples 0 to N−1) to measure how consistent the judge is: the Formats "
                "page then shows the flip rate and Krippendorff's α, and what averaging the samples does. N > 1 "
                "needs a temperature above 0 (N copies of one answer measure nothing). Same as --samples.")
TEMPERATURE_HELP = ("Sent with every call and part of the judge's identity (another temperature is another judge: "
                    "give it its own name). Above 0 the free answer is stored as `sampled`, not greedy. "
                    "Same as --temperature.")


def times_samples(count: dict, samples: int) -> dict:
    """The call count (and characters) of a plan whose every call is asked `samples` times."""
    return {"total": count["total"] * samples, "per_format": {f: n * samples for f, n in count["per_format"].items()},
            "chars": {f: n * samples for f, n in count.get("chars", {}).items()}}
