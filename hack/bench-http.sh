#!/usr/bin/env bash
# Publish rate of msgbench's http driver against common load clients, on the same msgbench HTTP
# gateway in front of the same local Mosquitto: the same payload, QoS, number of connections and
# requests in flight per connection, rounds alternating which tool goes first. Prints per round
# requests/s, the CPU each side used per request and latency; at the end the median and range of
# msgbench's rate (and CPU per request) relative to each other tool. docs/benchmarks-http.md
# quotes its output.
#
#   VERSION=1.1 (default): wrk, h2load --h1 and msgbench; one request in flight per connection.
#   VERSION=2: h2load (h2c, prior knowledge) and msgbench (spec.http.version "2", cleartext);
#              STREAMS requests in flight per connection (h2load -m, msgbench spec.mqtt.inflight).
#   VERSION=3: Debian's h2load has no HTTP/3, so two h2load-like clients built here:
#              h3load-rs (hack/h3load/rs: Rust, quinn + h3, one thread) and h3load (hack/h3load:
#              Java, Netty's HTTP/3 codec over Cloudflare quiche), and msgbench
#              (spec.http.version "3") against the gateway's HTTP/3 listener, with a throwaway
#              certificate. H3CLIENTS="rs netty" (default) picks them.
#
# Usage: [VERSION=1.1|2|3] [STREAMS=16] [ROUNDS=6] [MSGBENCH=path] [GATEWAY=path] [PROFILE=dir] \
#          hack/bench-http.sh [connections=8] [seconds=10] [payload-bytes=256] [qos=1]
#   e.g. VERSION=2 STREAMS=16 hack/bench-http.sh 4 5 256 1
# MSGBENCH: the msgbench binary to measure (default: built from this tree); GATEWAY: the msgbench
# binary that serves as gateway (default: built from this tree). PROFILE: write a Go CPU profile
# of each msgbench loadgen run into this folder.
# Needs: Go, mosquitto (hack/apt-packages.sh), wrk and h2load (installed from Debian when
# missing), python3, openssl; VERSION=3 also cargo (crates.io) for h3load-rs, Java 17 and Maven
# (Maven Central) for h3load.
set -euo pipefail

conns=${1:-8} secs=${2:-10} payload=${3:-256} qos=${4:-1}
version=${VERSION:-1.1}
rounds=${ROUNDS:-6}
warm=2
case "$version" in
  1.1) streams=1; tools=(wrk h2load msgbench) ;;
  2) streams=${STREAMS:-16}; tools=(h2load msgbench) ;;
  3) streams=${STREAMS:-16}; tools=()
     default="rs netty"
     if ! command -v cargo >/dev/null && [ -z "${H3CLIENTS:-}" ]; then
       echo "bench-http: no cargo here (h3load-rs needs Rust ≥ 1.85 from rustup): comparing with hack/h3load (Netty) alone" >&2
       default=netty
     fi
     for c in ${H3CLIENTS:-$default}; do case $c in rs) tools+=(h3load-rs) ;; netty) tools+=(h3load) ;; esac; done
     tools+=(msgbench) ;;
  *) echo "bench-http: VERSION must be 1.1, 2 or 3, not $version" >&2; exit 2 ;;
esac
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

apt_install() { # command package
  command -v "$1" >/dev/null && return
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "bench-http: installing $2" >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$2" >&2
}
apt_install wrk wrk
apt_install h2load nghttp2-client
"$root/hack/apt-packages.sh"
mosquitto=$(command -v mosquitto || echo /usr/sbin/mosquitto)

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
cpu_seconds() { # user+system CPU seconds of a process
  awk -v hz="$(getconf CLK_TCK)" '{print ($14+$15)/hz}' "/proc/$1/stat"
}

if [ -n "${GATEWAY:-}" ]; then cp "$GATEWAY" "$tmp/msgbench"; else (cd "$root" && CGO_ENABLED=0 go build -o "$tmp/msgbench" ./cmd/msgbench); fi
client=${MSGBENCH:-$tmp/msgbench}

if [[ " ${tools[*]} " == *" h3load-rs "* ]]; then # into bin/h3load-rs (git-ignored)
  if ! command -v cargo >/dev/null; then
    # Debian's cargo (bookworm: Rust 1.63) is older than quinn needs; rustup's is not a package.
    echo "bench-http: h3load-rs needs cargo with Rust ≥ 1.85 (rustup: edition 2024) and crates.io; run with H3CLIENTS=netty to compare with hack/h3load alone" >&2
    exit 2
  fi
  (cd "$root/hack/h3load/rs" && CARGO_TARGET_DIR="$root/bin/h3load-rs" cargo build --release -q --locked >&2)
fi
if [[ " ${tools[*]} " == *" h3load "* ]]; then
  # hack/h3load's classes and class path into bin/h3load (git-ignored); Maven resolves Netty.
  (cd "$root/hack/h3load" && mvn -q -B package dependency:build-classpath -Dmdep.outputFile="$root/bin/h3load/classpath.txt" \
    -Dh3load.dir="$root/bin/h3load" >&2)
  # H3LOAD_FLAGS: more h3load options, e.g. -t2 for two event-loop threads (default one, as h2load).
  read -ra h3flags <<<"${H3LOAD_FLAGS:-}"
  h3load=(java -XX:+UseParallelGC -cp "$root/bin/h3load/classes:$(cat "$root/bin/h3load/classpath.txt")" h3load.H3Load "${h3flags[@]}")
fi
if [ "$version" = 3 ]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=127.0.0.1 \
    -addext subjectAltName=IP:127.0.0.1 -keyout "$tmp/tls.key" -out "$tmp/tls.crt" 2>/dev/null
fi

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
pids+=($!)

cat >"$tmp/bench.yaml" <<YAML
apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmark
metadata: {name: bench-http}
spec:
  protocol: http
  qos: $qos
  http: {version: "$version", keepAlive: true}
  mqtt: {inflight: $streams}
  workload:
    publishers: $conns
    subscribers: 0
    topics: $conns
    topicPrefix: bench-
    payloadBytes: $payload
    rate: 0
    warmup: ${warm}s
    duration: ${secs}s
YAML

gport=$(free_port)
gwtls=(); lgtls=(); scheme=http
[ "$version" = 3 ] && gwtls=(--tls-cert "$tmp/tls.crt" --tls-key "$tmp/tls.key") && lgtls=(--ca "$tmp/tls.crt") && scheme=https
"$tmp/msgbench" gateway --mode http --listen "127.0.0.1:$gport" --broker "127.0.0.1:$mport" -f "$tmp/bench.yaml" "${gwtls[@]}" 2>"$tmp/gateway.log" &
pids+=($!); gpid=$!
for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$gport") 2>/dev/null && break; sleep 0.1; done
url="$scheme://127.0.0.1:$gport/topics"

# The same POST with a payload of the same size (random bytes, as msgbench sends).
head -c "$payload" /dev/urandom | base64 -w0 | head -c "$payload" >"$tmp/body"
cat >"$tmp/post.lua" <<LUA
local f = io.open("$tmp/body", "rb")
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/octet-stream"
LUA

echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "HTTP/$version gateway 127.0.0.1:$gport → mosquitto $("$mosquitto" -h 2>/dev/null | head -1 | awk '{print $3}') 127.0.0.1:$mport; $conns connections × $streams in flight, ${secs}s (+${warm}s warm-up), $payload-byte payload, QoS $qos"
echo "msgbench: $client ($("$client" version 2>/dev/null | head -1)); tools: ${tools[*]} $(h2load --version 2>/dev/null | head -1)"

# Warm the gateway's broker pool (its first publish connects).
curl -s -o /dev/null -X POST --data-binary @"$tmp/body" "http://127.0.0.1:$gport/topics/bench-warm?qos=$qos" || true
if [ "$version" = 1.1 ]; then # wrk has no warm-up of its own: one before the rounds, like msgbench's
  wrk -t2 -c"$conns" -d${warm}s -s "$tmp/post.lua" "$url/bench-wrk?qos=$qos" >/dev/null
fi

# Each run appends: round tool requests/s clientCPUs clientCPUµs/req gatewayCPUµs/req p50 p99 mean load
rows="$tmp/rows.tsv"
report() { # round tool rps cpu requests-the-cpu-served gateway-cpu requests-the-gateway-served p50 p99 mean
  python3 - "$@" "$(cut -d' ' -f1 /proc/loadavg)" >>"$rows" <<'PY'
import sys
a = sys.argv[1:]
rps, cpu, ncpu, gcpu, ng = float(a[2]), float(a[3]), float(a[4]), float(a[5]), float(a[6])
print("\t".join([a[0], a[1], "%.0f" % rps, "%.2f" % cpu, "%.1f" % (cpu * 1e6 / ncpu), "%.1f" % (gcpu * 1e6 / ng)] + a[7:11]))
PY
  tail -1 "$rows" | awk -F'\t' '{printf "%-6s %-9s %11s %13s %12s %19s %10s %10s %10s %6s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10}'
}

printf "%-6s %-9s %11s %13s %12s %19s %10s %10s %10s %6s\n" round client requests/s "client CPU s" "µs/request" "gateway CPU µs/req" p50 p99 mean load
for round in $(seq "$rounds"); do
  # Rotate which tool goes first, so a slow phase of a shared machine hits all alike.
  n=${#tools[@]}
  for i in $(seq 0 $((n - 1))); do
    tool=${tools[$(((i + round - 1) % n))]}
    g0=$(cpu_seconds "$gpid")
    case $tool in
    wrk)
      /usr/bin/time -f "%U %S" -o "$tmp/time" \
        wrk -t2 -c"$conns" -d"${secs}s" --latency -s "$tmp/post.lua" "$url/bench-wrk?qos=$qos" >"$tmp/wrk.out"
      g1=$(cpu_seconds "$gpid")
      n_req=$(awk '/requests in/ {print $1}' "$tmp/wrk.out")
      non2xx=$(awk '/Non-2xx/ {print $5}' "$tmp/wrk.out")
      [ -z "$non2xx" ] || echo "wrk: $non2xx non-2xx responses" >&2
      report "$round" wrk "$(awk '/Requests\/sec/ {print $2}' "$tmp/wrk.out")" "$(awk '{print $1+$2}' "$tmp/time")" "$n_req" \
        "$(echo "$g1 - $g0" | bc -l)" "$n_req" "$(awk '$1=="50%" {print $2}' "$tmp/wrk.out")" "$(awk '$1=="99%" {print $2}' "$tmp/wrk.out")" -
      ;;
    h2load | h3load | h3load-rs)
      if [ "$tool" = h2load ]; then
        proto=(); [ "$version" = 1.1 ] && proto=(--h1)
        cmd=(h2load "${proto[@]}" -c"$conns" -m"$streams" -D"$secs" --warm-up-time=${warm}s -d "$tmp/body"
          -H 'content-type: application/octet-stream' "$url/bench-h2load?qos=$qos")
      elif [ "$tool" = h3load-rs ]; then
        cmd=("$root/bin/h3load-rs/release/h3load-rs" -c"$conns" -m"$streams" -D"$secs" --warm-up-time=${warm} -d "$tmp/body"
          -H 'content-type: application/octet-stream' "$url/bench-h3load?qos=$qos")
      else
        cmd=("${h3load[@]}" -c"$conns" -m"$streams" -D"$secs" --warm-up-time=${warm} -d "$tmp/body"
          -H 'content-type: application/octet-stream' "$url/bench-h3load?qos=$qos")
      fi
      /usr/bin/time -f "%U %S" -o "$tmp/time" "${cmd[@]}" >"$tmp/$tool.out" 2>&1 || { cat "$tmp/$tool.out" >&2; exit 1; }
      g1=$(cpu_seconds "$gpid")
      # Both print h2load's summary lines: "finished in …, N req/s", "requests: N total, …",
      # "status codes: N 2xx, …", "time for request: min max mean sd"; h3load adds p50/p99.
      rps=$(awk '/^finished in/ {print $4}' "$tmp/$tool.out")
      done_n=$(awk '/^requests:/ {print $8}' "$tmp/$tool.out")
      ok=$(awk '/^status codes:/ {print $3}' "$tmp/$tool.out")
      [ "$ok" = "$done_n" ] && [ "$ok" -gt 0 ] || echo "$tool: $ok 2xx of $done_n requests: $(grep -E '^(requests|status codes):' "$tmp/$tool.out" | tr '\n' ' ')" >&2
      # The process's CPU and the gateway's covered warm-up and measured window alike.
      all=$(echo "$rps * ($secs + $warm)" | bc -l)
      report "$round" "$tool" "$rps" "$(awk '{print $1+$2}' "$tmp/time")" "$all" "$(echo "$g1 - $g0" | bc -l)" "$all" \
        "$(awk '/^latency p50/ {print $3}' "$tmp/$tool.out")" "$(awk '/^latency p50/ {print $5}' "$tmp/$tool.out")" \
        "$(awk '/^time for request:/ {print $6}' "$tmp/$tool.out")"
      ;;
    msgbench)
      prof=(); [ -n "${PROFILE:-}" ] && mkdir -p "$PROFILE" && prof=(--cpuprofile "$PROFILE/msgbench-v$version-r$round.pprof")
      "$client" loadgen -f "$tmp/bench.yaml" --broker "127.0.0.1:$gport" "${lgtls[@]}" "${prof[@]}" --out "$tmp/result.json" >"$tmp/msgbench.out" 2>&1 ||
        { cat "$tmp/msgbench.out" >&2; exit 1; }
      g1=$(cpu_seconds "$gpid")
      # loadgenCPUSeconds covers the measured window only; the gateway served warm-up and window.
      read -r rps cpu sent all p50 p99 < <(python3 - "$tmp/result.json" "$secs" "$warm" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ack = r["latency"]["publishAck"]
if r["acked"] != r["sent"] or r["sent"] == 0:
    print(f"msgbench: {r['sent'] - r['acked']} of {r['sent']} publishes without a 2xx response", file=sys.stderr)
print(r["sent"] / r["measuredSeconds"], r["resources"]["loadgenCPUSeconds"], r["sent"],
      r["sent"] * (float(sys.argv[2]) + float(sys.argv[3])) / float(sys.argv[2]),
      "%.0fus" % ack["p50Micros"], "%.0fus" % ack["p99Micros"])
PY
      )
      report "$round" msgbench "$rps" "$cpu" "$sent" "$(echo "$g1 - $g0" | bc -l)" "$all" "$p50" "$p99" -
      ;;
    esac
  done
done

python3 - "$rows" <<'PY'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
by = {}
for r in rows:
    by.setdefault(r[1], {})[r[0]] = r
mine = by.pop("msgbench")
for tool, runs in by.items():
    rate = [float(mine[k][2]) / float(v[2]) for k, v in runs.items() if k in mine]
    cpu = [float(mine[k][4]) / float(v[4]) for k, v in runs.items() if k in mine]
    print("msgbench / %s requests/s: median %.2f, range %.2f–%.2f; client CPU per request: median %.2f, range %.2f–%.2f (%d rounds)"
          % (tool, statistics.median(rate), min(rate), max(rate), statistics.median(cpu), min(cpu), max(cpu), len(rate)))
for tool, runs in list(by.items()) + [("msgbench", mine)]:
    v = list(runs.values())
    print("%s: median %.0f requests/s, %.1f client CPU µs/request, %.1f gateway CPU µs/request"
          % (tool, statistics.median(float(r[2]) for r in v), statistics.median(float(r[4]) for r in v),
             statistics.median(float(r[5]) for r in v)))
PY
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
