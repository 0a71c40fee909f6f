#!/usr/bin/env bash
# The fleet benchmark (issue 22): the largest fleet of idle MQTT clients one local Mosquitto can
# hold on this machine, and a size series below it, each run with `msgbench run`. It reads the
# limits first and sizes itself from them:
#
#   - one Mosquitto is one process: it holds at most (hard open-files limit − its own files)
#     connections (the broker gets the hard limit as its soft one);
#   - each load-generator worker process holds its clients' sockets too, so the fleet is split
#     into workers.replicas worker processes of at most (hard limit − reserve) clients each;
#   - memory: at most MemAvailable / BYTES_PER_CONN clients (kernel socket buffers included);
#   - ports: clients dial from source addresses spread over 127.0.0.0/8, so the ephemeral port
#     range bounds nothing on loopback.
#
# Prints, per size: connections held, load-generator and broker memory per connection (RSS growth
# over a 100-connection run, divided by the connections of the largest worker process / of the
# broker), the connect rate the ramp achieved and connect latency p50/p99/max; then a markdown
# table and an SVG chart "connections held vs memory per connection" in OUT.
#
# Usage: hack/bench-fleet.sh [sizes…]    (default: 1000 2000 5000 10000 max)
# Env:   OUT=dir (default /tmp/msgbench-fleet), CONNECT_RATE=5000 (per worker),
#        SECONDS_MEASURED=10, MAX=N (cap the largest fleet), BYTES_PER_CONN=40000
# On a machine with raised limits (e.g. `ulimit -Hn 1048576` as root, a net.core.somaxconn of
# 4096 and 8 GiB free) the same command runs 100,000+ connections: `MAX=100000 hack/bench-fleet.sh max`.
# Needs: Go, mosquitto (hack/apt-packages.sh), python3.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-/tmp/msgbench-fleet}
rate=${CONNECT_RATE:-5000}
secs=${SECONDS_MEASURED:-10}
per_conn_mem=${BYTES_PER_CONN:-40000}
mkdir -p "$out"
"$root/hack/apt-packages.sh" mosquitto >/dev/null
(cd "$root" && go build -o "$out/msgbench" ./cmd/msgbench)

hard=$(ulimit -Hn)
[ "$hard" = unlimited ] && hard=1048576
read -r port_lo port_hi < /proc/sys/net/ipv4/ip_local_port_range
mem_kb=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
broker_reserve=100 # Mosquitto's own files: listeners, log, epoll, libraries
worker_reserve=500 # a worker's own files besides its clients' sockets
by_files=$((hard - broker_reserve))
by_mem=$((mem_kb * 1024 / per_conn_mem))
max=$((by_files < by_mem ? by_files : by_mem))
bound="the broker's open files (hard limit $hard − $broker_reserve)"
[ "$by_mem" -lt "$by_files" ] && bound="memory ($((mem_kb / 1024)) MiB available / $per_conn_mem B per connection)"
if [ -n "${MAX:-}" ] && [ "$MAX" -lt "$max" ]; then max=$MAX; bound="MAX=$MAX"; fi
max=$((max / 2 * 2)) # publishers = subscribers
echo "machine: $(nproc) cores, $((mem_kb / 1024)) MiB available, open files hard limit $hard (soft $(ulimit -Sn)), ephemeral ports $port_lo-$port_hi, somaxconn $(cat /proc/sys/net/core/somaxconn)"
echo "largest fleet: $max connections, bounded by $bound"

sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 2000 5000 10000 max)

run() { # $1: connections, $2: connectRate per worker (default CONNECT_RATE) → one JSON line
  local n=$1 half=$(($1 / 2)) rate=${2:-$rate}
  local per_worker=$((hard - worker_reserve))
  local workers=$(((n + per_worker - 1) / per_worker))
  "$out/msgbench" run -q --json -f "$root/config/samples/mqtt-qos0.yaml" --out "$out/runs" --force --run-id "n$n-r$rate" --name fleet \
    --set "workload.publishers=$half" --set "workload.subscribers=$half" --set "workload.topics=$half" \
    --set "workload.connectRate=$rate" --set workload.rate=10 --set workload.payloadBytes=64 \
    --set "workload.duration=${secs}s" --set workload.warmup=1s --set "workers.replicas=$workers" \
    > "$out/n$n-r$rate.json" 2> "$out/n$n-r$rate.log" || { echo "run of $n connections failed: $(tail -3 "$out/n$n-r$rate.log")" >&2; return 1; }
  python3 - "$out/n$n-r$rate.json" "$n" "$workers" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
c = r["latency"]["connect"]
ramp = r.get("connectRamp") or {}
print(json.dumps({"n": int(sys.argv[2]), "workers": int(sys.argv[3]), "phase": r["phase"], "held": c["count"],
    "loadgenRSS": r["resources"]["loadgenMaxRSSBytes"], "brokerRSS": r["resources"]["brokerMaxRSSBytes"],
    "rate": ramp.get("perSecond", 0), "target": ramp.get("targetPerSecond", 0),
    "p50": c["p50Micros"], "p99": c["p99Micros"], "max": c["maxMicros"]}))
PY
}

base=$(run 100)
rows=()
for s in "${sizes[@]}"; do
  [ "$s" = max ] && s=$max
  [ "$s" -le "$max" ] || { echo "skipping $s: above the largest fleet here ($max)"; continue; }
  echo "running $s connections…" >&2
  if row=$(run "$s"); then rows+=("$row"); fi # a failed size is reported and skipped
done
# The connect-rate ceiling: the largest fleet once more, all at once (connectRate 0: at most 64
# connects in flight over all workers, below Mosquitto's listen backlog of 100).
echo "running $max connections, connectRate 0…" >&2
if row=$(run "$max" 0); then rows+=("$row"); fi

printf '%s\n' "${rows[@]}" > "$out/rows.jsonl"
python3 - "$base" "$out" "$bound" <<'PY'
import json, sys
base = json.loads(sys.argv[1]); out = sys.argv[2]; bound = sys.argv[3]
rows = [json.loads(l) for l in open(f"{out}/rows.jsonl") if l.strip()]
print()
print("| connections held | workers | load generator B/connection | broker B/connection | connect rate achieved (target) | connect p50 / p99 / max |")
print("| --- | --- | --- | --- | --- | --- |")
pts = []
for r in rows:
    per_worker = r["n"] / r["workers"]
    lg = (r["loadgenRSS"] - base["loadgenRSS"]) / (per_worker - base["n"])
    br = (r["brokerRSS"] - base["brokerRSS"]) / (r["n"] - base["n"])
    tgt = f"{r['target']:,}/s" if r["target"] else "all at once"
    if r["target"]:
        pts.append((r["held"], lg, br))
    print(f"| {r['held']:,} of {r['n']:,} ({r['phase']}) | {r['workers']} | {lg:,.0f} | {br:,.0f} | "
          f"{r['rate']:,.0f}/s ({tgt}) | {r['p50']/1000:.1f} / {r['p99']/1000:.1f} / {r['max']/1000:.1f} ms |")
print(f"\nlargest fleet bounded by {bound}; memory is RSS growth over a {base['n']}-connection run "
      "(kernel socket buffers are not in it)")
# SVG: connections held (x, log) vs bytes per connection (y), load generator and broker.
import math
W, H, L, B = 560, 300, 60, 40
xs = [p[0] for p in pts] or [1]
ymax = max([p[1] for p in pts] + [p[2] for p in pts] + [1]) * 1.15
x0, x1 = math.log10(min(xs)) - 0.1, math.log10(max(xs)) + 0.1
X = lambda v: L + (math.log10(v) - x0) / (x1 - x0) * (W - L - 20)
Y = lambda v: H - B - v / ymax * (H - B - 20)
svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="11">',
       f'<line x1="{L}" y1="{H-B}" x2="{W-20}" y2="{H-B}" stroke="#000"/><line x1="{L}" y1="20" x2="{L}" y2="{H-B}" stroke="#000"/>',
       f'<text x="{(W+L)/2}" y="{H-8}" text-anchor="middle">connections held (log scale)</text>',
       f'<text x="14" y="{(H-B)/2}" transform="rotate(-90 14 {(H-B)/2})" text-anchor="middle">bytes per connection (RSS)</text>']
for v in xs:
    svg.append(f'<text x="{X(v):.0f}" y="{H-B+14}" text-anchor="middle">{v:,}</text>')
for k in range(5):
    v = ymax * k / 4
    svg.append(f'<text x="{L-4}" y="{Y(v)+4:.0f}" text-anchor="end">{v/1000:.0f} KB</text>')
for idx, color, name in ((1, "#1f77b4", "load generator"), (2, "#d62728", "Mosquitto")):
    path = " ".join(f"{X(p[0]):.1f},{Y(p[idx]):.1f}" for p in pts)
    svg.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
    svg += [f'<circle cx="{X(p[0]):.1f}" cy="{Y(p[idx]):.1f}" r="3" fill="{color}"/>' for p in pts]
    svg.append(f'<text x="{W-130}" y="{30 + 14*idx}" fill="{color}">{name}</text>')
svg.append("</svg>")
open(f"{out}/fleet.svg", "w").write("\n".join(svg) + "\n")
print(f"chart: {out}/fleet.svg")
PY
