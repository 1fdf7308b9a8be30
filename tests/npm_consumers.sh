#!/bin/sh
# Install the consumers of perfdsl's outputs that come from npm into .consumers/ (ignored):
# Microsoft's SARIF Multitool, whose `validate` tests/test_formats_clients.py runs on
# `check --format sarif`. A no-op where it is present or npm is absent: the test then skips
# and says why. The version is pinned so that its rules do not change under the tests.
set -u
prefix=.consumers
tool="$prefix/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool"
[ -x "$tool" ] && exit 0
if ! command -v npm >/dev/null 2>&1; then
    echo "tests/npm_consumers.sh: no npm; the SARIF Multitool test will skip" >&2
    exit 0
fi
mkdir -p "$prefix"
if npm install --prefix "$prefix" --no-audit --no-fund --silent @microsoft/sarif-multitool@5.7.0 >/dev/null 2>&1; then
    # The package makes its binary executable in a postinstall script, which npm may not run.
    chmod u+x "$tool" 2>/dev/null
else
    echo "tests/npm_consumers.sh: npm could not install the SARIF Multitool; its test will skip" >&2
fi
exit 0
