#!/usr/bin/env bash
# Prints what failed in a go test log, after everything else: every "--- FAIL" line, each data
# race report whole (the race detector's "WARNING: DATA RACE" blocks), panics and the packages
# that failed. A CI log cut to its last lines then still shows why, whatever the tests printed
# between (envtest's operators log a lot).
set -uo pipefail
log=${1:?usage: test-failures.sh go-test.log}
echo
echo "=== what failed (from $log)"
grep -E -- '^\s*--- FAIL|^FAIL\s|^panic: ' "$log" || true
awk '/^WARNING: DATA RACE/{on=1; n++; print "--- data race " n ":"} on{print} on&&/^==================/{on=0}' "$log" | head -400
