#!/usr/bin/env bash
# How judgeaudit-v11.duckdb.gz and its *.json documents were made: run from a checkout of commit
# 38e5966 (schema 11, before migration 012 renamed run_id/job_id), with a venv that has judgeaudit's
# dependencies:  bash tests/data/v11/make_v11.sh OUT_DIR
set -euo pipefail
OUT=$(realpath "$1"); mkdir -p "$OUT"; W=$(mktemp -d); DB=$W/v11.duckdb
J() { python -m app.cli "$@" --db "$DB"; }
python - "$W" <<'PY'
import json, sys
w = sys.argv[1]
rows, labels = [], []
for p in range(6):
    for c, (model, ref, words) in enumerate([("alpha", 1.0, 6), ("beta", 2.0, 14), ("gamma", 3.0, 30)]):
        rows.append({"prompt_id": f"p{p}", "prompt": f"Question {p}: explain item {p}.", "candidate_id": model,
                     "response": " ".join(f"w{p}{c}{i}" for i in range(words + p)), "reference": ref + 0.1 * p,
                     "model": model, "split": "heldout" if p == 5 else "pool"})
    labels.append({"prompt_id": f"p{p}", "a_id": "gamma", "b_id": "alpha", "label": "A" if p % 3 else "tie"})
open(f"{w}/pool.jsonl", "w").write("".join(json.dumps(r) + "\n" for r in rows))
open(f"{w}/labels.jsonl", "w").write("".join(json.dumps(r) + "\n" for r in labels))
verdicts = [{"judge": "outside", "format": "likert5", "prompt_id": f"p{p}", "candidate_id": m, "raw": str(1 + (p + i) % 5)}
            for p in range(6) for i, m in enumerate(["alpha", "beta", "gamma"])]
open(f"{w}/verdicts.jsonl", "w").write("".join(json.dumps(r) + "\n" for r in verdicts))
PY
J import-pool "$W/pool.jsonl" --pool v11
J score --pool v11 --judge 'fake:sim?noise=0.2' --formats likert5,tournament --swap-sample all
J score --pool v11 --judge 'openai:bat@http://127.0.0.1:9/v1' --formats binary --batch-out "$W/batch" --json > /dev/null
python - "$W" <<'PY'
import hashlib, json, pathlib, sys
w = pathlib.Path(sys.argv[1])
out = []
for f in sorted((w / "batch").glob("*.jsonl")):
    for line in f.read_text().splitlines():
        cid = json.loads(line)["custom_id"]
        if cid.endswith("manifest"):
            continue
        verdict = "ACCEPT" if int(hashlib.sha256(cid.encode()).hexdigest(), 16) % 3 else "REJECT"
        out.append({"id": "r-" + cid[:8], "custom_id": cid, "error": None, "response": {"status_code": 200,
                    "body": {"model": "bat", "choices": [{"message": {"content": verdict}}],
                             "usage": {"prompt_tokens": 40, "completion_tokens": 1}}}})
(w / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in out))
PY
J import-batch "$W/results.jsonl" --json > /dev/null
J import-verdicts "$W/verdicts.jsonl" --pool v11
J score --pool v11 --judge 'fake:sim?noise=0.4' --judge-name sim-2 --formats likert5
J import-labels "$W/labels.jsonl" --pool v11
J calibrate --pool v11 --threshold 0.4 --json > /dev/null
J curate --pool v11 --judge sim --format likert5 --rate 0.5 --out "$W/subset.jsonl" > /dev/null
cp "$DB" "$W/copy.duckdb"        # the documents are printed from a copy: the kept file is as written
D() { python -m app.cli "$@" --db "$W/copy.duckdb"; }
D pools --json > "$OUT/pools.json"
for c in audit bias rank calibrate positions levels variance consistency; do D $c --pool v11 --json > "$OUT/$c.json"; done
D drift --pool v11 --judge sim-2 --against sim --json > "$OUT/drift.json"
D report --pool v11 --out "$OUT/report.json" > /dev/null
D export-verdicts --pool v11 --out "$OUT/export-verdicts.jsonl" > /dev/null
gzip -9 -c "$DB" > "$OUT/judgeaudit-v11.duckdb.gz"
rm -rf "$W"
