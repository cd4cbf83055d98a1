"""Rebuild this slice from the project's shared LLMBar files (see README.md here):

    python tests/data/llmbar/make_slice.py ../shared/data/llmbar
"""

import json
import sys
from pathlib import Path

SUBSET, STRATEGY = "LLMBar/Natural", "Vanilla"
INSTANCE_KEYS = ("instance_id", "subset", "input", "output_1", "output_2", "gold")
VERDICT_KEYS = ("instance_id", "judge", "strategy", "order", "output_in_slot_a", "winner", "chose_slot_a")


def main(src: Path, out: Path) -> None:
    with open(src / "instances.jsonl", encoding="utf-8") as fh:
        instances = [r for r in map(json.loads, fh) if r["subset"] == SUBSET]
    keep = {r["instance_id"] for r in instances}
    with open(src / "pairwise_verdicts.jsonl", encoding="utf-8") as fh:
        verdicts = [r for r in map(json.loads, fh) if r["instance_id"] in keep and r["strategy"] == STRATEGY]
    for name, rows, keys in (("instances.jsonl", instances, INSTANCE_KEYS),
                             ("pairwise_verdicts.jsonl", verdicts, VERDICT_KEYS)):
        with open(out / name, "w", encoding="utf-8") as fh:
            for r in rows:
                fh.write(json.dumps({k: r[k] for k in keys}, ensure_ascii=False) + "\n")
    print(f"{len(instances)} instances, {len(verdicts)} verdicts")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(__file__).resolve().parent)
