#!/usr/bin/env bash
# Installs a pinned aioquic (a Python QUIC and HTTP/3 implementation, from PyPI) into a virtual
# environment under bin/tools/ and prints the path of its python. The gateway's tests run
# test/earlydata/aioquic_early_post.py with it: a third-party HTTP/3 client sending a POST in 0-RTT.
set -euo pipefail
VERSION=${AIOQUIC_VERSION:-1.7.2}
root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/bin/tools/aioquic-$VERSION"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import aioquic' 2>/dev/null; then
  echo "aioquic: installing $VERSION into $venv" >&2
  rm -rf "$venv"
  python3 -m venv "$venv" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "aioquic==$VERSION" >&2
fi
echo "$venv/bin/python"
