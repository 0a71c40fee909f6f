#!/usr/bin/env bash
# Installs the Debian packages msgbench's tests and local runs use, when they are missing:
#   etcd-server   etcd for the envtest kube-apiserver
#   mosquitto     the real MQTT broker of tests and `msgbench run`
#   chromium      headless browser that checks the HTML report renders
#   iproute2      ip netns / ip link for the user-space link emulator
#   openjdk-17-jre-headless, maven   run and fetch (hack/kafka.sh) the local Kafka broker
#   prometheus    scrapes a live run in the metrics tests; promtool checks the dashboard's PromQL
#   rabbitmq-server  RabbitMQ 3.10 and its Erlang: the local rabbitmq broker (brokers/rabbitmq)
# Needs root (or sudo). Prints what it installs; does nothing when all are present.
#
#   hack/apt-packages.sh            everything the tests need
#   hack/apt-packages.sh mosquitto  only the named packages
set -euo pipefail

all=(etcd-server:etcd mosquitto:mosquitto chromium:chromium iproute2:ip openjdk-17-jre-headless:java maven:mvn prometheus:prometheus rabbitmq-server:rabbitmq-server)
want=()
if [ $# -eq 0 ]; then
  want=("${all[@]}")
else
  for name in "$@"; do
    for pair in "${all[@]}"; do
      [ "${pair%%:*}" = "$name" ] && want+=("$pair")
    done
  done
fi
missing=()
for pair in "${want[@]}"; do
  pkg=${pair%%:*} bin=${pair#*:}
  command -v "$bin" >/dev/null 2>&1 || [ -x "/usr/sbin/$bin" ] || [ -x "/usr/bin/$bin" ] || missing+=("$pkg")
done
[ ${#missing[@]} -gt 0 ] || exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "apt-packages: need root or sudo to install ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "apt-packages: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq >&2
# policy-rc.d keeps the packages' own services from starting: tests start their own instances
# on free ports and stop them by PID.
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' | $sudo tee /usr/sbin/policy-rc.d >/dev/null
  $sudo chmod +x /usr/sbin/policy-rc.d
  trap '$sudo rm -f /usr/sbin/policy-rc.d' EXIT
fi
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
