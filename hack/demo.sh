#!/usr/bin/env bash
# The README's first command (make demo): install Mosquitto where possible, build msgbench, run
# a real benchmark on this machine and point at its report.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! hack/apt-packages.sh mosquitto; then
  echo "demo: could not install Mosquitto; msgbench will use its embedded broker (named as such in the result)" >&2
fi
make --no-print-directory build
sample=${SAMPLE:-config/samples/mqtt-qos1.yaml}
bin/msgbench run -f "$sample" --set workload.duration="${DURATION:-10s}" --set workload.warmup=2s --out runs
name=$(sed -n 's/^  name: //p' "$sample" | head -n1)
echo
echo "Open runs/$name/latest/report.html in a browser; the raw numbers are in runs/$name/latest/result.json"
echo "(each run keeps its own folder under runs/$name/; latest points at the newest)."
echo "Next: try another sample (ls config/samples), override fields with --set, compare runs with bin/msgbench report."
