# ctxlab — every target sets itself up: `make experiments` and `make test` work on a fresh clone.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# `make experiments` installs only what the shipped scenarios need (AgentScope's texts for ch08, the
# real tokenizers for the Chinese-text scenario, Optuna for the scenarios with a tune: section;
# tests/scenarios/test_setup.py holds it to that); the tools, the peers the parity tests drive and
# the notebooks' extras come with `make test`.
RUN_EXTRAS := agentscope,tokenizers,tune
DEV_EXTRAS := dev,peers,tokenizers,dask,notebooks,tune
RUN_STAMP := $(VENV)/.installed-run
STAMP := $(VENV)/.installed-dev
OUT ?= results
WORKERS ?=

.PHONY: setup openhands-env adk-env test test-thorough mutation lint typecheck experiments experiments-extended notebooks bench clean

setup: $(STAMP)

$(RUN_STAMP): pyproject.toml constraints.txt Makefile
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --constraint constraints.txt -e ".[$(RUN_EXTRAS)]"
	@touch $@

$(STAMP): $(RUN_STAMP)
	$(BIN)/python -m pip install --quiet --constraint constraints.txt -e ".[$(DEV_EXTRAS)]"
	@touch $@

# The lab's bytecode, compiled again whenever a module changes. An editable install leaves it to
# the first import, which writes none where PYTHONDONTWRITEBYTECODE is set: every `ctxlab`
# process (and every worker) would then compile each module anew, 0.2 s of it. Python checks a
# .pyc against its source, so a module edited since is read from its source until this runs.
BYTECODE := $(VENV)/.bytecode
SOURCES := $(shell find ctxlab -name '*.py')

$(BYTECODE): $(RUN_STAMP) $(SOURCES)
	$(BIN)/python -m compileall -q ctxlab
	@touch $@

# The OpenHands SDK (its parity driver and `texts: openhands`) needs Python >= 3.12, the lab 3.11:
# it gets an environment of its own, made with the first 3.12+ interpreter found.
OPENHANDS_VENV := .venv-openhands
OPENHANDS_STAMP := $(OPENHANDS_VENV)/.installed
OPENHANDS_CANDIDATES := python3.12 python3.13 $(sort $(wildcard $(HOME)/.pyenv/versions/3.1[2-9]*/bin/python))
OPENHANDS_PYTHON ?= $(shell for p in $(OPENHANDS_CANDIDATES); do \
	$$p -c 'import sys; assert sys.version_info >= (3, 12)' 2>/dev/null && { command -v $$p || echo $$p; } && break; done)

openhands-env: $(OPENHANDS_STAMP)

$(OPENHANDS_STAMP): constraints-openhands.txt
	@if [ -z "$(OPENHANDS_PYTHON)" ]; then \
		echo "openhands-env: skipped, no Python >= 3.12 found (set OPENHANDS_PYTHON); the OpenHands parity tests will skip"; \
	else \
		test -x $(OPENHANDS_VENV)/bin/python || $(OPENHANDS_PYTHON) -m venv $(OPENHANDS_VENV); \
		$(OPENHANDS_VENV)/bin/python -m pip install --quiet --constraint constraints-openhands.txt openhands-sdk==1.58.2 \
			&& touch $@; \
	fi

# Google ADK 2.13.0 needs google-genai < 3 and opentelemetry-api <= 1.44; constraints.txt pins
# what the lab's peers resolved to (google-genai 3.6.1, opentelemetry 1.45.2), so rather than move
# the versions the other parity tests were proven on, ADK gets an environment of its own.
ADK_VENV := .venv-adk
ADK_STAMP := $(ADK_VENV)/.installed

adk-env: $(ADK_STAMP)

$(ADK_STAMP): constraints-adk.txt
	test -x $(ADK_VENV)/bin/python || $(PYTHON) -m venv $(ADK_VENV)
	$(ADK_VENV)/bin/python -m pip install --quiet --constraint constraints-adk.txt google-adk==2.13.0
	@touch $@

LINTED := ctxlab tests $(wildcard benchmarks)

lint: $(STAMP)
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)

typecheck: $(STAMP)
	$(BIN)/python -m mypy --strict ctxlab benchmarks

test: lint typecheck openhands-env adk-env $(BYTECODE)
	$(BIN)/python -m pytest --hypothesis-profile=ci

test-thorough: $(STAMP) openhands-env adk-env
	$(BIN)/python -m pytest --hypothesis-profile=thorough

# Mutation testing of the modules that guard requests ([tool.mutmut] in pyproject.toml); slow, so
# not part of `make test`. The score and every survivor's reason are in docs/mutation.md.
mutation: $(STAMP)
	$(BIN)/python -m pip install --quiet --constraint constraints.txt -e ".[mutation]"
	rm -rf mutants
	$(BIN)/mutmut run $(if $(WORKERS),--max-children $(WORKERS))
	$(BIN)/mutmut results --all true

# Then `ctxlab tune` on every shipped scenario with a tune: section, in one call (the lab is
# imported and the worker processes started once). Trials are asked two at a time whatever WORKERS
# is (--batch 2), so results/<name>/tune/ is the same on any machine.
TUNED := $(shell grep -l '^tune:' scenarios/*.yaml)

experiments: $(RUN_STAMP) $(BYTECODE)
	$(BIN)/ctxlab run scenarios/*.yaml --out $(OUT) $(if $(WORKERS),--workers $(WORKERS))
	$(if $(TUNED),$(BIN)/ctxlab tune $(TUNED) --out $(OUT) --batch 2 --workers $(or $(WORKERS),2))

experiments-extended: $(RUN_STAMP) $(BYTECODE)
	$(BIN)/ctxlab run scenarios/extended/*.yaml --out $(OUT) $(if $(WORKERS),--workers $(WORKERS))

notebooks: $(STAMP)
	@test -f $(OUT)/index.md || $(MAKE) experiments
	$(BIN)/python -m ctxlab.analysis.notebooks notebooks/*.ipynb --results $(OUT) $(if $(WORKERS),--workers $(WORKERS))

bench: $(STAMP) $(BYTECODE)
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf $(VENV) $(OPENHANDS_VENV) $(ADK_VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis mutants
