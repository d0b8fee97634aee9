# Two user commands: `make demo` (setup + answer a sample question) and `make test` (setup + whole test suite).
# Setup is idempotent: the venv, the models and the index are only (re)built when their inputs change.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
QUESTION ?= 我能要求App删除我的个人信息吗？
# llama.cpp is compiled for this machine's CPU (AVX-512 where it has it: the gate's prompt processing is faster than
# with a portable AVX2 build, bench/results/llama_build.json), no llava: ~5 min once. The wheel is kept under ~/.cache
# per (version, flags, CPU), so a clean clone on the same machine reuses it and another CPU gets its own build.
# Each instruction set the CPU reports is named, not -march=native: that also turns on AMX, which a VM may report
# but not enable (Firecracker: SIGILL at the first batched matmul), and ggml's AMX path is not needed here.
LLAMA_VERSION := 0.3.36
CPUINFO ?= /proc/cpuinfo
CPU_FLAGS := $(shell grep -m1 '^flags' $(CPUINFO) 2>/dev/null)
ggml_isa = -DGGML_$(2)=$(if $(filter $(1),$(CPU_FLAGS)),ON,OFF)
LLAMA_CMAKE_ARGS := -DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF $(call ggml_isa,sse4_2,SSE42) $(call ggml_isa,avx,AVX) \
	$(call ggml_isa,avx2,AVX2) $(call ggml_isa,fma,FMA) $(call ggml_isa,f16c,F16C) $(call ggml_isa,bmi2,BMI2) \
	$(call ggml_isa,avx_vnni,AVX_VNNI) $(call ggml_isa,avx512f,AVX512) $(call ggml_isa,avx512vbmi,AVX512_VBMI) \
	$(call ggml_isa,avx512_vnni,AVX512_VNNI) $(call ggml_isa,avx512_bf16,AVX512_BF16)
LLAMA_KEY := $(shell (echo '$(CPU_FLAGS)'; echo '$(LLAMA_VERSION) $(LLAMA_CMAKE_ARGS)') | sha256sum | cut -c1-12)
WHEELS := $(HOME)/.cache/agentic-rag/llama-cpp-wheels/$(LLAMA_KEY)
export CMAKE_BUILD_PARALLEL_LEVEL := 2
export LITELLM_LOCAL_MODEL_COST_MAP := True
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: setup models index demo test bench eval clean-index
setup: $(VENV)/.installed

$(BIN)/python:
	$(PY) -m venv $(VENV)

# Built into a temporary folder and renamed: an interrupted build leaves no half wheel behind.
$(WHEELS)/.built: | $(BIN)/python
	rm -rf $(WHEELS).tmp
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/pip wheel -q --no-deps --no-cache-dir llama-cpp-python==$(LLAMA_VERSION) -w $(WHEELS).tmp
	rm -rf $(WHEELS) && mv $(WHEELS).tmp $(WHEELS) && touch $@

# --force-reinstall: a venv that holds another build of the same version (e.g. the earlier portable one) gets this one.
$(VENV)/.installed: requirements.txt requirements-dev.txt $(WHEELS)/.built | $(BIN)/python
	$(BIN)/pip install -q --find-links $(WHEELS) -r requirements-dev.txt
	$(BIN)/pip install -q --no-deps --force-reinstall $(WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl
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
