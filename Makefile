# Two user commands: `make demo` (setup + answer a sample question) and `make test` (setup + whole test suite).
# Setup is idempotent: the venv, the models and the index are only (re)built when their inputs change.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
QUESTION ?= 公司把我的手机号卖给别人合法吗？
# Portable llama.cpp build (AVX2, no -march=native, no llava): ~4 min once, then pip's wheel cache.
export CMAKE_ARGS := -DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
export CMAKE_BUILD_PARALLEL_LEVEL := 2
export LITELLM_LOCAL_MODEL_COST_MAP := True
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: setup models index demo test bench eval clean-index
setup: $(VENV)/.installed

$(VENV)/.installed: requirements.txt requirements-dev.txt
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q -r requirements-dev.txt
	$(BIN)/pip install -q --no-deps --no-build-isolation -e .
	touch $@

models: setup
	$(BIN)/python download_models.py

index: models
	$(BIN)/python init_index.py

demo: index
	$(BIN)/python -m agentic_rag.demo "$(QUESTION)"

test: index
	$(BIN)/python -m pytest -q

eval: index
	$(BIN)/python -m agentic_rag.eval retrieval --dataset eval/pipl_eval.jsonl --json eval/results/retrieval.json --png docs/retrieval.png

bench: index
	$(BIN)/python bench/bench_retrieval.py

clean-index: setup
	$(BIN)/python clean_index.py
