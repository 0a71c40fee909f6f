#!/usr/bin/env bash
# Runs the broker comparison (config/samples/broker-comparison.yaml: Mosquitto, RabbitMQ, Artemis
# and Kafka at each QoS they offer, at 1,000 msg/s and in a closed loop) with `msgbench run` and
# prints the table of docs/benchmarks-brokers.md from its suite.json. Every broker is started and
# stopped by the run itself; make setup installs them (RabbitMQ from Debian, Artemis and Kafka from
# Maven Central).
#
#   hack/bench-brokers.sh                          the whole suite (54 runs, about 15 minutes)
#   hack/bench-brokers.sh --repetitions 1          a quick look
#   hack/bench-brokers.sh --table runs/broker-comparison/<run-id>/suite.json   only the table
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
command -v jq >/dev/null || { echo "bench-brokers: jq not found (Debian package jq)" >&2; exit 1; }

table() {
  jq -r '
    def m(f): (.stats.figures[f].mean // null);
    def fmt(x; d): if x == null then "—" else (x * pow(10; d) | round / pow(10; d) | tostring) end;
    "| point | received/s | e2e p50 ms | e2e p99 ms | broker CPU µs/msg | broker RSS MiB | out of order | retransmits |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    (.points[] |
      "| \(.name) | \(fmt(m("throughput.receivedPerSecond"); 0)) | \(fmt(m("latency.endToEnd.p50") | if . == null then null else . / 1000 end; 2)) | \(fmt(m("latency.endToEnd.p99") | if . == null then null else . / 1000 end; 2)) | \(fmt(m("resources.brokerCPUPerMessage") | if . == null then null else . * 1e6 end; 1)) | \(fmt((.stats.figures["resources.brokerMaxRSSBytes"].max // null) | if . == null then null else . / 1048576 end; 0)) | \(fmt(m("outOfOrder"); 1)) | \(fmt(m("wire.retransmits"); 1)) |")
  ' "$1"
}

if [ "${1:-}" = "--table" ]; then
  table "$2"
  exit 0
fi
out=${OUT:-runs}
go build -o bin/msgbench ./cmd/msgbench
bin/msgbench run -q -f config/samples/broker-comparison.yaml --out "$out" "$@" || true
table "$out/broker-comparison/latest/suite.json"
