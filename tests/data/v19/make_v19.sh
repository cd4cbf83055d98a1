#!/usr/bin/env bash
# How judgeaudit-v19.duckdb.gz and its documents were made: run from a checkout of commit 20088e2
# (schema 19, the last before migration 020 renamed verdicts.label and the `labels` table), with a
# venv that has judgeaudit's dependencies:  bash tests/data/v19/make_v19.sh OUT_DIR
set -euo pipefail
OUT=$(realpath "$1"); mkdir -p "$OUT"; W=$(mktemp -d); DB=$W/v19.duckdb
J() { python -m app.cli "$@" --db "$DB"; }
python - "$W" <<'PY'
import json, sys
w = sys.argv[1]
rows, pairs, accepts = [], [], []
for p in range(8):
    for c, (model, ref, words) in enumerate([("alpha", 1.0, 6), ("beta", 2.0, 14), ("gamma", 3.0, 30)]):
        rows.append({"prompt_id": f"p{p}", "prompt": f"Question {p}: explain item {p}.", "candidate_id": model,
                     "response": " ".join(f"w{p}{c}{i}" for i in range(words + p)), "reference": ref + 0.1 * p,
                     "model": model, "split": "heldout" if p == 7 else "pool"})
        for a, annotator in enumerate(["ann", "bea"]):
            accepts.append({"prompt_id": f"p{p}", "candidate_id": model, "annotator": annotator,
                            "label": "accept" if (c + p + a) % 3 else "reject"})
    for a, annotator in enumerate(["ann", "bea"]):
        pairs.append({"prompt_id": f"p{p}", "a_id": "gamma", "b_id": "alpha", "annotator": annotator,
                      "label": "A" if (p + a) % 3 else "tie"})
open(f"{w}/pool.jsonl", "w").write("".join(json.dumps(r) + "\n" for r in rows))
open(f"{w}/labels.jsonl", "w").write("".join(json.dumps(r) + "\n" for r in pairs + accepts))
verdicts = [{"judge": "outside", "format": "likert5", "prompt_id": f"p{p}", "candidate_id": m, "raw": str(1 + (p + i) % 5),
             "decoding": "constrained", "label_probs": {str(1 + (p + i) % 5): 0.7, str(1 + (p + i + 1) % 5): 0.3}}
            for p in range(8) for i, m in enumerate(["alpha", "beta", "gamma"])]
open(f"{w}/verdicts.jsonl", "w").write("".join(json.dumps(r) + "\n" for r in verdicts))
PY
J import-pool "$W/pool.jsonl" --pool v19
J score --pool v19 --judge 'fake:sim?noise=0.2' --formats likert5,binary,tournament --swap-sample all
J score --pool v19 --judge 'fake:sim?noise=0.4' --judge-name sim-2 --formats likert5,binary
J import-verdicts "$W/verdicts.jsonl" --pool v19
J jury --pool v19 --name panel --judges sim,sim-2,outside --vote median
J import-labels "$W/labels.jsonl" --pool v19
J calibrate --pool v19 --threshold 0.4 --json > /dev/null
J curate --pool v19 --judge sim --format likert5 --rate 0.5 --out "$W/subset.jsonl" > /dev/null
cp "$DB" "$W/copy.duckdb"        # the documents are printed from a copy: the kept file is as written
D() { python -m app.cli "$@" --db "$W/copy.duckdb"; }
D pools --json > "$OUT/pools.json"
for c in audit bias rank calibrate positions levels variance consistency judges; do D $c --pool v19 --json > "$OUT/$c.json"; done
D estimate --pool v19 --target accept --json > "$OUT/estimate-accept.json"
D estimate --pool v19 --target winrate --json > "$OUT/estimate-winrate.json"
D drift --pool v19 --judge sim-2 --against sim --json > "$OUT/drift.json"
D report --pool v19 --out "$OUT/report.json" > /dev/null
D export-verdicts --pool v19 --out "$OUT/export-verdicts.jsonl" > /dev/null
gzip -9 -c "$DB" > "$OUT/judgeaudit-v19.duckdb.gz"
rm -rf "$W"
