#!/usr/bin/env bash
# How long a newcomer waits for `make report`, as they would meet it: a fresh
# clone of this checkout's HEAD, whose first `make report` also creates .venv.
# The two costs are printed apart, since only the second recurs:
#
#   set-up   `make setup` (a virtual environment and every dependency; once)
#   report   `make report` with the environment made (check, evidence-grade run, PDF)
#
# The report's own time must stay at most 90 s on an idle 2-core machine. Prints
# seconds and leaves the clone (with out/ and artifacts/) for reading the report.
#
#   bash benchmarks/make_report_time.sh [CLONE_DIR]
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
CLONE="${1:-$(mktemp -d /tmp/make_report.XXXXXX)/perfdsl}"

git clone --quiet "$REPO" "$CLONE"
cd "$CLONE"

start=$(date +%s)
make setup >setup.log 2>&1
setup_s=$(( $(date +%s) - start ))

start=$(date +%s)
status=0
make report >report.log 2>&1 || status=$?
report_s=$(( $(date +%s) - start ))

echo "clone:   $CLONE ($(git rev-parse --short HEAD))"
echo "set-up:  ${setup_s} s (make setup, log in setup.log)"
echo "report:  ${report_s} s (make report, exit ${status}, log in report.log)"
exit "$status"
