#!/usr/bin/env bash
# Runs the Kafka benchmarks of docs/benchmarks-kafka.md on this machine: pure-Go clients compared,
# msgbench's Kafka driver against Kafka's own producer/consumer perf tools (back to back, on one
# local broker), and the SINETStream grid for Kafka and MQTT without network emulation.
# Arguments go to hack/benchkafka (e.g. -mode perf -records 100000 -repeat 2).
set -euo pipefail
cd "$(dirname "$0")/.."
export MSGBENCH_KAFKA_LIBS="${MSGBENCH_KAFKA_LIBS:-$(hack/kafka.sh)}"
exec go run ./hack/benchkafka "$@"
