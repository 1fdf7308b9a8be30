# Two entry points, each doing all of its own set-up on a fresh machine:
#   make report   check the studies, run the RMSNorm study (quick, CPU) and build its PDF
#   make test     the test suite (what .ci/run calls)

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
	# An editable install leaves the package uncompiled (pip compiles only what it
	# copies); where PYTHONDONTWRITEBYTECODE is set, every command would compile
	# it again: about 0.25 s of each fresh `perfdsl build`.
	$(BIN)/python -m compileall -q perfdsl
	touch $@

setup: $(BIN)/perfdsl

report: setup
	$(BIN)/perfdsl check studies/
	$(BIN)/perfdsl run $(STUDY) --target cpu --quick
	$(BIN)/perfdsl build --pdf $(STUDY) -o $(REPORT)

test: setup
	$(BIN)/python -m pytest
