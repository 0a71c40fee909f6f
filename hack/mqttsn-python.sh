#!/usr/bin/env bash
# Installs a pinned mqtt-sn-12 (a Python MQTT-SN 1.2 client from PyPI, not written here) into a
# virtual environment under bin/tools/, at the version and hashes hack/mqttsn-python/requirements.txt
# pins, and prints the path of its python. gateway/mqttsn's TestPythonClient runs
# test/mqttsn/python_client.py with it through msgbench's MQTT-SN gateway.
set -euo pipefail
VERSION=1.0.9 # hack/mqttsn-python/requirements.txt's mqtt-sn-12
root=$(cd "$(dirname "$0")/.." && pwd)
req="$root/hack/mqttsn-python/requirements.txt"
venv="$root/bin/tools/mqtt-sn-12-$VERSION"
if [ ! -x "$venv/bin/python" ] || ! cmp -s "$req" "$venv/requirements.txt" ||
  ! "$venv/bin/python" -c 'import mqttsn12.client.MqttSnClient' 2>/dev/null; then
  echo "mqtt-sn-12: installing $VERSION into $venv" >&2
  rm -rf "$venv"
  python3 -m venv "$venv" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --require-hashes --no-deps -r "$req" >&2
  cp "$req" "$venv/requirements.txt"
fi
echo "$venv/bin/python"
