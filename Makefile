# Two entry points, each doing all of its own set-up on a fresh machine:
#   make report   check, run (quick, CPU) and build the PDF of the bundled RMSNorm study
#   make test     run the test suite (what .ci/run calls)

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STUDY  ?= studies/rmsnorm_fusion.perf
REPORT ?= out/rmsnorm_fusion.pdf

.PHONY: report test setup

$(BIN)/perfdsl: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

setup: $(BIN)/perfdsl

report: setup
	$(BIN)/perfdsl check studies/

test: setup
	$(BIN)/python -m pytest
