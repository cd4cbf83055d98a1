"""The mutation score of a `make mutate` run (mutmut 3), over the mutants that are not equivalent.

    python tests/mutation/report.py [--equivalents tests/mutation/equivalent.txt]

Reads every mutant's status from `mutmut results --all true` (run in the repository root, after
`mutmut run`) and the equivalent mutants from the equivalents file: one mutant a line, its name,
then its one-line reason (`#` starts a comment line). Prints, per area (audit/ with ingest/scoring/formats/,
and train/): mutants, equivalent, killed (a failing test, a timeout or a crash), survived, no tests,
the score killed / (mutants - equivalent), and then every surviving mutant not listed as equivalent.
Exits 1 when an area scores below --min (default 90%), when a survivor is neither killed nor listed
as equivalent, or when mutants are not checked yet (an unfinished run). `--survivors` prints only
the names of the checked mutants that are neither killed nor listed as equivalent, one a line (what `make
mutate-recheck` re-runs after tests were added).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
AREAS = (("audit/ + ingest/scoring/formats/", ("audit.", "ingest.scoring.formats.")), ("train/", ("train.",)))
KILLED = {"killed", "timeout", "segfault", "caught by type check"}
LINE = re.compile(r"^\s+(\S+): (.+)$")


def read_equivalents(path: Path) -> dict[str, str]:
    """name -> reason; a line without a reason is an error (the reason is the point)."""
    out = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, _, reason = line.partition(" ")
        if not reason.strip():
            raise SystemExit(f"{path}:{n}: {name}: an equivalent mutant needs a one-line reason")
        out[name] = reason.strip()
    return out


def read_statuses(text: str) -> dict[str, str]:
    return {m.group(1): m.group(2).strip() for m in map(LINE.match, text.splitlines()) if m}


def area_of(name: str) -> str | None:
    for area, prefixes in AREAS:
        if name.startswith(prefixes):
            return area
    return None


def survivors(statuses: dict[str, str], equivalents: dict[str, str]) -> list[str]:
    """Checked mutants in an area that no test killed and that are not listed as equivalent."""
    return sorted(k for k, v in statuses.items() if area_of(k) and k not in equivalents
                  and v not in KILLED and v != "not checked")


def report(statuses: dict[str, str], equivalents: dict[str, str], minimum: float, sample: bool = False) -> int:
    code = 0
    for area, _ in AREAS:
        mine = {k: v for k, v in statuses.items() if area_of(k) == area}
        if not mine:
            continue
        equiv = {k for k in mine if k in equivalents}
        unchecked = {k for k, v in mine.items() if v == "not checked" and k not in equiv}
        counted = {k: v for k, v in mine.items() if k not in equiv and k not in unchecked}
        counts = Counter("killed" if v in KILLED else v for v in counted.values())
        killed = counts["killed"]
        timeouts = sum(v == "timeout" for v in counted.values())
        score = killed / len(counted) if counted else float("nan")
        print(f"{area}: {len(mine)} mutants, {len(equiv)} equivalent, {len(unchecked)} not checked yet, "
              f"{killed} killed ({timeouts} of them by a timeout), {counts['survived']} survived, "
              f"{counts['no tests']} with no test, "
              f"{sum(v for k, v in counts.items() if k not in ('killed', 'survived', 'no tests'))} other"
              f" -> score {killed}/{len(counted)} = {score:.1%} of the checked non-equivalent mutants")
        left = survivors(mine, equivalents)
        for name in left:
            print(f"    {counted[name]:>10}  {name}")
        if score < minimum:
            code = 1
        if left and not sample:
            print(f"    {len(left)} survivors are neither killed nor listed as equivalent: kill each with a test "
                  "or list it in the equivalents file with its reason")
            code = 1
        if unchecked and not sample:
            print(f"    {len(unchecked)} mutants not checked yet: the run is unfinished "
                  "(make mutate KEEP=1 resumes it)")
            code = 1
    stale = [] if sample else sorted(k for k in equivalents if k not in statuses)
    killed_anyway = sorted(k for k in equivalents if statuses.get(k) in KILLED)
    if stale:
        print(f"{len(stale)} equivalent entries name no current mutant (the code moved): {', '.join(stale[:10])}"
              + (" ..." if len(stale) > 10 else ""))
    if killed_anyway:
        print(f"{len(killed_anyway)} entries listed as equivalent were killed (not equivalent after all): "
              + ", ".join(killed_anyway))
    return code


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--equivalents", type=Path, default=HERE / "equivalent.txt")
    ap.add_argument("--results", type=Path, help="saved output of `mutmut results --all true` (default: run it)")
    ap.add_argument("--names", type=Path, help="only the mutants named in this file, one a line (a sample)")
    ap.add_argument("--min", type=float, default=0.90)
    ap.add_argument("--survivors", action="store_true", help="only the names of the survivors, one a line")
    args = ap.parse_args()
    if args.results:
        text = args.results.read_text(encoding="utf-8")
    else:
        mutmut = Path(sys.executable).with_name("mutmut")
        text = subprocess.run([str(mutmut), "results", "--all", "true"], capture_output=True, text=True,
                              check=True).stdout
    statuses = read_statuses(text)
    if args.names:
        keep = {line.strip() for line in args.names.read_text(encoding="utf-8").splitlines() if line.strip()}
        statuses = {k: v for k, v in statuses.items() if k in keep}
    equivalents = read_equivalents(args.equivalents)
    if args.survivors:
        print("\n".join(survivors(statuses, equivalents)))
        return 0
    return report(statuses, equivalents, args.min, sample=bool(args.names))


if __name__ == "__main__":
    sys.exit(main())
