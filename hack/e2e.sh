#!/usr/bin/env bash
# make e2e: start the real single-node Kubernetes (hack/e2e-node.sh up, msgbench installed from
# the chart with the images `make images` just built), run the e2e test (test/e2e, build tag
# e2e) against it, and stop the node again. Prints how long each step took.
#
#   E2E_KEEP=1 make e2e        leave the node running afterwards (hack/e2e-node.sh down stops it)
#   E2E_RUN=TestSamples/mqtt-qos1 make e2e    only some tests (go test -run)
#   E2E_NO_RERUN=1 make e2e    a failure is not run again (see below)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
t0=$SECONDS

if [ -d "$root/../shared/crds" ] && [ -z "${MSGBENCH_THIRD_PARTY_CRDS:-}" ]; then
  export MSGBENCH_THIRD_PARTY_CRDS=$(cd "$root/../shared/crds" && pwd)
fi

"$root/hack/e2e-node.sh" up
t_up=$((SECONDS - t0))

rc=0
export E2E_ENV_FILE=${MSGBENCH_E2E_STATE:-/var/lib/msgbench-e2e}/e2e.env
log=${E2E_LOG:-$root/bin/e2e.log}
go test -tags e2e -count=1 -v -timeout "${E2E_TIMEOUT:-40m}" ${E2E_RUN:+-run "$E2E_RUN"} ./test/e2e/ 2>&1 | tee "$log" || rc=$?

# A flaky test from a real failure: what failed runs once more, alone. Failing twice is a real
# failure (exit 1); passing the second time is a flake, named loudly and kept in
# bin/e2e-flaky.txt, and does not fail the run. Either way the first failure's diagnosis (the
# benchmark's status, its pods' logs and the namespace's events) is in the log above.
if [ "$rc" -ne 0 ] && [ -z "${E2E_NO_RERUN:-}" ]; then
  mapfile -t failed < <(grep -E '^\s*--- FAIL: ' "$log" | sed -E 's/^\s*--- FAIL: ([^ ]+).*/\1/' | sort -u)
  declare -A subs=()
  for name in "${failed[@]}"; do
    top=${name%%/*}
    if [ "$top" != "$name" ]; then
      sub=$(printf '%s' "${name#*/}" | sed -E 's/[].[*+?(){}|^$\\]/\\&/g')
      subs[$top]+="${subs[$top]:+|}$sub"
    else
      subs[$top]+=""
    fi
  done
  if [ "${#subs[@]}" -eq 0 ]; then
    echo "e2e: failed without a failing test (build error, timeout or panic): not rerun"
  else
    rerun_rc=0
    for top in "${!subs[@]}"; do
      pat="^$top\$"
      [ -n "${subs[$top]}" ] && pat+="/^(${subs[$top]})\$"
      echo "=== e2e: rerunning what failed, once: -run '$pat'"
      go test -tags e2e -count=1 -v -timeout "${E2E_TIMEOUT:-40m}" -run "$pat" ./test/e2e/ 2>&1 | tee -a "$log" || rerun_rc=$?
    done
    if [ "$rerun_rc" -eq 0 ]; then
      printf '%s\n' "${failed[@]}" > "$root/bin/e2e-flaky.txt"
      echo "e2e: FLAKY, failed once and passed when rerun: ${failed[*]} (bin/e2e-flaky.txt)"
      rc=0
    else
      echo "e2e: FAILED twice (a real failure): ${failed[*]}"
    fi
  fi
fi
t_test=$((SECONDS - t0 - t_up))

if [ -z "${E2E_KEEP:-}" ]; then
  "$root/hack/e2e-node.sh" down
fi
echo "e2e: node up ${t_up}s, tests ${t_test}s, total $((SECONDS - t0))s (log: $log)"
exit $rc
