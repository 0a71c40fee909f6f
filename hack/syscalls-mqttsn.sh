#!/usr/bin/env bash
# Counts the system calls per delivered message of each process, MQTT direct against MQTT-SN
# through the gateway: QoS 1, a window of one, 4 publisher–subscriber pairs, 255-byte payloads,
# 20,000 messages (docs/benchmarks-mqttsn.md, "Where the 80 % goes"). Needs strace, mosquitto and
# bin/msgbench (make build). Tracing slows every call: read the counts, not the rates.
#
#   hack/syscalls-mqttsn.sh [MESSAGES]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
msgbench="$root/bin/msgbench"
messages=${1:-20000}
for tool in strace mosquitto "$msgbench"; do
  command -v "$tool" >/dev/null || { echo "syscalls-mqttsn: $tool not found" >&2; exit 1; }
done
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
broker_port=$(free_port)
gateway_port=$(free_port)
cat > "$work/mosquitto.conf" <<CONF
listener $broker_port 127.0.0.1
allow_anonymous true
max_inflight_messages 20
max_queued_messages 1000000
set_tcp_nodelay true
CONF
mosquitto -c "$work/mosquitto.conf" >"$work/mosquitto.log" 2>&1 &
broker=$!; pids+=("$broker")
sleep 0.5

manifest() { # protocol name
  cat <<YAML
apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmark
metadata: {name: $2}
spec:
  protocol: $1
  qos: 1
  mqtt: {inflight: 1}
  workload: {publishers: 4, subscribers: 4, topics: 4, payloadBytes: 255, messages: $messages, warmup: 0s}
YAML
}
manifest mqtt direct >"$work/direct.yaml"
manifest mqtt-sn sn >"$work/sn.yaml"

calls() { # file → "calls per message" line of the biggest entries
  awk -v n="$messages" '$NF != "total" && $4 ~ /^[0-9]+$/ {printf "%s %.1f\n", $NF, $4/n}' "$1" | sort -k2 -n -r | head -6 | tr '\n' ' '
}
report() { # label file
  # strace's total line: % time, seconds, usecs/call, calls[, errors], "total"
  local t; t=$(awk '$NF == "total" {print (NF == 6 ? $(NF-2) : $(NF-1))}' "$2")
  printf '%-22s %6.1f per message  (%s)\n' "$1" "$(echo "$t / $messages" | bc -l)" "$(calls "$2")"
}

# MQTT direct.
strace -c -f -o "$work/broker-direct.txt" -p "$broker" & tracer=$!; pids+=("$tracer"); sleep 1
strace -c -f -o "$work/loadgen-direct.txt" "$msgbench" loadgen -f "$work/direct.yaml" --broker "127.0.0.1:$broker_port" >"$work/direct.out" 2>&1
kill -INT "$tracer"; wait "$tracer" || true

# MQTT-SN through the gateway.
strace -c -f -o "$work/broker-sn.txt" -p "$broker" & tracer=$!; pids+=("$tracer"); sleep 1
strace -c -f -o "$work/gateway-sn.txt" "$msgbench" gateway --mode mqtt-sn --listen "127.0.0.1:$gateway_port" \
  --broker "127.0.0.1:$broker_port" -f "$work/sn.yaml" >"$work/gateway.log" 2>&1 & gwtrace=$!; pids+=("$gwtrace")
sleep 2
strace -c -f -o "$work/loadgen-sn.txt" "$msgbench" loadgen -f "$work/sn.yaml" --broker "127.0.0.1:$gateway_port" >"$work/sn.out" 2>&1
kill -INT "$tracer"; wait "$tracer" || true
pkill -TERM -P "$gwtrace" 2>/dev/null || true
wait "$gwtrace" || true

grep -h "messages " "$work/direct.out" "$work/sn.out"
echo "MQTT direct:"
report "  Mosquitto" "$work/broker-direct.txt"
report "  load generator" "$work/loadgen-direct.txt"
echo "MQTT-SN through the gateway:"
report "  Mosquitto" "$work/broker-sn.txt"
report "  gateway" "$work/gateway-sn.txt"
report "  load generator" "$work/loadgen-sn.txt"
