#!/usr/bin/env bash
# What being scraped costs a run: the same closed-loop MQTT QoS 1 benchmark with and without
# --metrics and a scraper reading /metrics every 250 ms (four times more often than the chart's
# PodMonitor), alternating A B A B so the machine's drift hits both. Prints each pair's received
# msg/s, end-to-end p50/p99 and load-generator CPU per message, and the ratios.
# docs/benchmarks.md quotes its output.
#
# Usage: hack/bench-metrics.sh [pairs=4] [seconds=10]
# Needs: Go, mosquitto (hack/apt-packages.sh), python3.
set -euo pipefail
pairs=${1:-4} secs=${2:-10}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
scraper=""
cleanup() {
  [ -z "$scraper" ] || kill "$scraper" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
"$root/hack/apt-packages.sh" mosquitto
(cd "$root" && go build -o "$tmp/msgbench" ./cmd/msgbench)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

run() { # $1: a or b
  local extra=()
  if [ "$1" = b ]; then
    extra=(--metrics "127.0.0.1:$port" --metrics-wait 0s)
    # one long-lived scraper process, as a Prometheus server is (a curl per scrape would cost a
    # fork and exec each time, which is not what being scraped costs)
    python3 -c '
import sys, time, urllib.request
while True:
    try:
        urllib.request.urlopen(sys.argv[1], timeout=2).read()
    except OSError:
        pass
    time.sleep(0.25)' "http://127.0.0.1:$port/metrics" &
    scraper=$!
  fi
  "$tmp/msgbench" run -f "$root/config/samples/mqtt-qos1.yaml" --set "workload.duration=${secs}s" --set workload.rate=0 \
    --out "$tmp/runs" --name "bench-$1" -q --json "${extra[@]}" > "$tmp/$1.json" 2>>"$tmp/log"
  if [ -n "$scraper" ]; then kill "$scraper" 2>/dev/null || true; wait "$scraper" 2>/dev/null || true; scraper=""; fi
  python3 - "$tmp/$1.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
e = r["latency"]["endToEnd"]
print(r["throughput"]["receivedPerSecond"], e["p50Micros"], e["p99Micros"], 1e6 * r["resources"]["loadgenCPUSeconds"] / max(1, r["received"]))
PY
}

echo "pair  A: no metrics (msg/s p50µs p99µs loadgen-CPU-µs/msg)   B: --metrics, scraped every 250 ms   B/A msg/s"
for i in $(seq "$pairs"); do
  a=$(run a); b=$(run b)
  python3 -c "import sys; a=list(map(float,'$a'.split())); b=list(map(float,'$b'.split())); print('%d     %8.0f %6.0f %7.0f %5.1f      %8.0f %6.0f %7.0f %5.1f      %.3f' % ($i, *a, *b, b[0]/a[0]))"
done
