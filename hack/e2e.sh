#!/usr/bin/env bash
# make e2e: start the real single-node Kubernetes (hack/e2e-node.sh up, msgbench installed from
# the chart with the images `make images` just built), run the e2e test (test/e2e, build tag
# e2e) against it, and stop the node again. Prints how long each step took.
#
#   E2E_KEEP=1 make e2e        leave the node running afterwards (hack/e2e-node.sh down stops it)
#   E2E_RUN=TestSamples/mqtt-qos1 make e2e    only some tests (go test -run)
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
go test -tags e2e -count=1 -v -timeout "${E2E_TIMEOUT:-40m}" ${E2E_RUN:+-run "$E2E_RUN"} ./test/e2e/ 2>&1 |
  tee "${E2E_LOG:-$root/bin/e2e.log}" || rc=$?
t_test=$((SECONDS - t0 - t_up))

if [ -z "${E2E_KEEP:-}" ]; then
  "$root/hack/e2e-node.sh" down
fi
echo "e2e: node up ${t_up}s, tests ${t_test}s, total $((SECONDS - t0))s (log: ${E2E_LOG:-bin/e2e.log})"
exit $rc
