#!/usr/bin/env bash
# Runs the five reference studies (config/samples/studies/) on this machine, scaled down so that
# all five take about 90 minutes on 2 cores (the link-bound SINETStream study about 60 of them),
# and writes each one's report with its study figure:
#   runs/studies/<study>/<run-id>/{suite.json,report.html,*.csv}, one folder per run
#   runs/studies/<study>/report/  the study's figures as SVG, PNG and PDF (msgbench report --images)
# docs/studies/<study>.md quote what these runs printed. Scaling (fewer repetitions, shorter
# windows, fewer messages) is per study below and said again in each doc; pass a study's name to
# run only that one, e.g. hack/reproduce-studies.sh ipsj2022-mqtt-vs-mqtts.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=${MSGBENCH:-bin/msgbench}
[[ -x $bin ]] || make build >/dev/null
out=${OUT:-runs/studies}
declare -A args=(
  [ipsj2022-mqtt-vs-mqtts]=""
  [emqx-mqtt-over-quic]="--repetitions 1 --set workload.duration=10s"
  [h3-vs-mqtt-quic-nbiot]="--repetitions 1 --set workload.messages=20"
  [dicomo2017-mqtt-mqttsn-http]="--repetitions 1 --set workload.duration=10s --set workload.warmup=2s"
  [sinetstream-5g-sa-vs-lte]="--repetitions 1"
  # Study 2's time to first data is a one-client measurement: one publisher and one subscriber,
  # no loss, so that round trips, not a loaded 30 kbit/s downlink, set it.
  [h3-first-data]="--repetitions 3 --name h3-first-data --set workload.publishers=1 --set workload.subscribers=1 --set workload.topics=1 --set workload.messages=5 --set network.lossPercent=0"
)
declare -A file=([h3-first-data]=h3-vs-mqtt-quic-nbiot)
studies=("$@")
[[ ${#studies[@]} -gt 0 ]] || studies=(ipsj2022-mqtt-vs-mqtts emqx-mqtt-over-quic h3-vs-mqtt-quic-nbiot h3-first-data dicomo2017-mqtt-mqttsn-http sinetstream-5g-sa-vs-lte)
status=0
for s in "${studies[@]}"; do
  [[ -n ${args[$s]+x} ]] || { echo "unknown study $s (one of: ${!args[*]})" >&2; exit 2; }
  f=config/samples/studies/${file[$s]:-$s}.yaml
  echo "== $s: $bin run -f $f ${args[$s]} --out $out -q" >&2
  start=$(date +%s)
  # shellcheck disable=SC2086 # the arguments are words on purpose
  "$bin" run -f "$f" ${args[$s]} --out "$out" -q || status=1
  [[ -e $out/$s/latest/suite.json ]] && "$bin" report "$out/$s/latest" --out "$out/$s/report" --images >/dev/null
  echo "== $s: $(( $(date +%s) - start )) s" >&2
done
exit $status
