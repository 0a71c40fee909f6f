#!/usr/bin/env bash
# HTTP/1.1 publish rate of msgbench's http driver against wrk, on the same msgbench HTTP gateway
# in front of the same local Mosquitto: closed loop, one request in flight per connection, the
# same payload, QoS and number of connections. Prints both rates, their ratio and the CPU each
# side used. docs/benchmarks-http.md quotes its output.
#
# Usage: hack/bench-http.sh [connections=8] [seconds=10] [payload-bytes=256] [qos=1]
# Needs: Go, mosquitto (hack/apt-packages.sh), wrk (installed from Debian when missing), python3.
set -euo pipefail

conns=${1:-8} secs=${2:-10} payload=${3:-256} qos=${4:-1}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

if ! command -v wrk >/dev/null; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "bench-http: installing wrk" >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq wrk >&2
fi
"$root/hack/apt-packages.sh"
mosquitto=$(command -v mosquitto || echo /usr/sbin/mosquitto)

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
cpu_seconds() { # user+system CPU seconds of a process
  awk -v hz="$(getconf CLK_TCK)" '{print ($14+$15)/hz}' "/proc/$1/stat"
}

(cd "$root" && CGO_ENABLED=0 go build -o "$tmp/msgbench" ./cmd/msgbench)

mport=$(free_port)
cat >"$tmp/mosquitto.conf" <<CONF
listener $mport 127.0.0.1
allow_anonymous true
persistence false
set_tcp_nodelay true
max_inflight_messages 20
max_queued_messages 1000000
$( [ "$(id -u)" -eq 0 ] && echo "user root" )
CONF
"$mosquitto" -c "$tmp/mosquitto.conf" >"$tmp/mosquitto.log" 2>&1 &
pids+=($!); mpid=$!

cat >"$tmp/bench.yaml" <<YAML
apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmark
metadata: {name: bench-http}
spec:
  protocol: http
  qos: $qos
  http: {version: "1.1", keepAlive: true}
  workload:
    publishers: $conns
    subscribers: 0
    topics: $conns
    topicPrefix: bench-
    payloadBytes: $payload
    rate: 0
    warmup: 2s
    duration: ${secs}s
YAML

gport=$(free_port)
"$tmp/msgbench" gateway --mode http --listen "127.0.0.1:$gport" --broker "127.0.0.1:$mport" -f "$tmp/bench.yaml" 2>"$tmp/gateway.log" &
pids+=($!); gpid=$!
for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$gport") 2>/dev/null && break; sleep 0.1; done

# wrk: the same POST with a payload of the same size (random bytes, as msgbench sends).
head -c "$payload" /dev/urandom | base64 -w0 | head -c "$payload" >"$tmp/body"
cat >"$tmp/post.lua" <<LUA
local f = io.open("$tmp/body", "rb")
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/octet-stream"
LUA

echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "gateway 127.0.0.1:$gport → mosquitto $("$mosquitto" -h 2>/dev/null | head -1 | awk '{print $3}') 127.0.0.1:$mport; $conns connections, ${secs}s, $payload-byte payload, QoS $qos"

# Warm the gateway's broker pool (its first publish connects).
curl -s -o /dev/null -X POST --data-binary @"$tmp/body" "http://127.0.0.1:$gport/topics/bench-warm?qos=$qos" || true

rounds=${ROUNDS:-3}
wrk -t2 -c"$conns" -d2s -s "$tmp/post.lua" "http://127.0.0.1:$gport/topics/bench-wrk?qos=$qos" >/dev/null # warm-up, like msgbench's

printf "%-6s %-9s %11s %13s %19s %12s %10s\n" round client requests/s "client CPU s" "gateway CPU µs/req" "latency p50" p99
for round in $(seq "$rounds"); do
  # Alternate which tool goes first, so a slow phase of a shared machine hits both alike.
  order="wrk msgbench"; [ $((round % 2)) -eq 0 ] && order="msgbench wrk"
  for tool in $order; do
    g0=$(cpu_seconds "$gpid")
    if [ "$tool" = wrk ]; then
      /usr/bin/time -f "%U %S" -o "$tmp/wrk.time" \
        wrk -t2 -c"$conns" -d"${secs}s" --latency -s "$tmp/post.lua" "http://127.0.0.1:$gport/topics/bench-wrk?qos=$qos" >"$tmp/wrk.out"
      g1=$(cpu_seconds "$gpid")
      n=$(awk '/requests in/ {print $1}' "$tmp/wrk.out")
      non2xx=$(awk '/Non-2xx/ {print $5}' "$tmp/wrk.out")
      [ -z "$non2xx" ] || echo "wrk: $non2xx non-2xx responses" >&2
      printf "%-6s %-9s %11.0f %13.2f %19.1f %12s %10s\n" "$round" wrk "$(awk '/Requests\/sec/ {print $2}' "$tmp/wrk.out")" \
        "$(awk '{print $1+$2}' "$tmp/wrk.time")" "$(echo "($g1 - $g0) * 1000000 / $n" | bc -l)" \
        "$(awk '$1=="50%" {print $2}' "$tmp/wrk.out")" "$(awk '$1=="99%" {print $2}' "$tmp/wrk.out")"
    else
      "$tmp/msgbench" loadgen -f "$tmp/bench.yaml" --broker "127.0.0.1:$gport" --out "$tmp/result.json" >"$tmp/msgbench.out" 2>&1
      g1=$(cpu_seconds "$gpid")
      python3 - "$tmp/result.json" "$round" "$(echo "$g1 - $g0" | bc -l)" "$secs" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ack = r["latency"]["publishAck"]
# The gateway served warm-up and measured window: divide its CPU by all requests of the run.
total = r["sent"] * (float(sys.argv[4]) + 2) / float(sys.argv[4])
if r["acked"] != r["sent"]:
    print(f"msgbench: {r['sent'] - r['acked']} publishes without a 2xx response", file=sys.stderr)
print("%-6s %-9s %11.0f %13.2f %19.1f %10.0fus %8.0fus" % (sys.argv[2], "msgbench", r["sent"] / r["measuredSeconds"],
      r["resources"]["loadgenCPUSeconds"], float(sys.argv[3]) * 1e6 / total, ack["p50Micros"], ack["p99Micros"]))
PY
    fi
  done
done
