#!/usr/bin/env bash
# The national-scale STARD runs, one heavy job at a time, each niced and resumable: rerun this script after a
# kill and every step continues where it stopped (the index build from its last checkpointed chunk, the benches
# from their cached vectors).
#   1. the ONNX int8 export of EmbeddingGemma (once, ~2 min)
#   2. a dense index of all 64,665 national LawRefBook articles with it (~50 min on 2 idle cores)
#   3. bench/stard.py over both candidate sets: dense, fused, cross-validated fusion, the agent's retriever by CV
#   4. bench/stard_adapter.py: the query-side adapter, out of fold
#   5. bench/embedders.py: the embedder candidates side by side on the 11k subset (int8 vectors from step 2)
# Usage: bench/stard_national.sh   (PY=... to choose the interpreter; DATA=... for the index folder)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
DATA=${DATA:-data/national-gemma-int8}
R=bench/results
export PYTHONPATH=$PWD HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
[ -f models/embeddinggemma-300m/onnx/model_int8.onnx ] || nice -n 19 "$PY" scripts/export_onnx.py
nice -n 19 "$PY" init_index.py --corpus ../shared/data/lawrefbook/lawrefbook_articles.jsonl.gz --national-only \
  --data-dir "$DATA" --quantize onnx-int8 --chunk-size 512 2> $R/national_gemma_int8_build.log
nice -n 19 "$PY" bench/stard.py --index-dir "$DATA" --folds 5 --json $R/stard_gemma_int8.json \
  > $R/stard_gemma_int8.stdout 2> $R/stard_gemma_int8.log
nice -n 19 "$PY" bench/stard_adapter.py --index-dir "$DATA" --save --json $R/stard_adapter.json \
  > $R/stard_adapter.stdout 2> $R/stard_adapter.log
nice -n 19 "$PY" bench/embedders.py --from-index gemma-onnx-int8="$DATA" --speed-docs 64 --speed-rounds 3 \
  --json $R/embedders.json > $R/embedders.stdout 2> $R/embedders.log
