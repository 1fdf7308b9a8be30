# Entry points, each doing all of its own set-up on a fresh machine:
#   make report   check the studies, run the CPU RMSNorm study with its own (evidence-grade)
#                 settings and build its PDF; prints the wall time (60-70 s on the idle 2-core
#                 machine the study is sized for, about 175 s on a slower one: README.md says why)
#   make smoke    the same chain as a `--quick` smoke run: every code path, no evidence
#   make test     the test suite (what .ci/run calls); first installs Debian's slurm-wlm, munge
#                 and neovim where they are missing and we are root, for the real-client tests
#                 (tests/system_packages.sh: a no-op where present, not root or without apt),
#                 and the SARIF Multitool from npm into .consumers/ (tests/npm_consumers.sh)

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STUDY  ?= studies/rmsnorm_cpu.perf
REPORT ?= out/rmsnorm_cpu.pdf
SMOKE  ?= out/rmsnorm_cpu_smoke.pdf

.PHONY: report smoke test setup

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

# The report is built from the bundle this run wrote (`run` prints its path), never
# from whichever bundle of the study happens to be the latest, such as a smoke run's.
# The wall time covers check, run and build, not the one-off set-up above.
report: setup
	@start=$$(date +%s); \
	$(BIN)/perfdsl check studies/ && \
	bundle=$$($(BIN)/perfdsl run $(STUDY) --target cpu) && \
	$(BIN)/perfdsl build --pdf $(STUDY) --results "$$bundle" -o $(REPORT); \
	status=$$?; \
	echo "make report: $$(( $$(date +%s) - start )) s wall (check, evidence-grade cpu run, PDF)"; \
	exit $$status

smoke: setup
	$(BIN)/perfdsl check studies/
	bundle=$$($(BIN)/perfdsl run $(STUDY) --target cpu --quick) && \
	$(BIN)/perfdsl build --pdf $(STUDY) --results "$$bundle" -o $(SMOKE)

test: setup
	sh tests/system_packages.sh
	sh tests/npm_consumers.sh
	$(BIN)/python -m pytest
