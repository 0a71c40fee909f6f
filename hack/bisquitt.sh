#!/usr/bin/env bash
# Builds bisquitt (github.com/energomonitor/bisquitt, a transparent MQTT-SN 1.2 gateway in Go,
# not written here) from the Go module proxy at the version and hashes hack/bisquitt/go.mod and
# go.sum pin, into bin/tools/bisquitt-<version>/bisquitt, and prints that path. Tests run it as a
# third-party gateway for spec.gateway.external (docs/interop.md), locally and on the e2e node.
#
# The checksum database has no entry for bisquitt (the proxy serves v0.6.0 but sum.golang.org
# answers 404), so GONOSUMDB skips the lookup for that one module only; go.sum still pins its
# hash, and -mod=readonly refuses anything go.sum does not name.
set -euo pipefail
VERSION=0.6.0 # hack/bisquitt/go.mod's bisquitt
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/bin/tools/bisquitt-$VERSION/bisquitt"
if [ ! -x "$bin" ] || ! "$bin" --version 2>/dev/null | grep -q "$VERSION"; then
  echo "bisquitt: building $VERSION from the Go module proxy" >&2
  mkdir -p "$(dirname "$bin")"
  (cd "$root/hack/bisquitt" &&
    GONOSUMDB=github.com/energomonitor/bisquitt GOFLAGS=-mod=readonly GOWORK=off CGO_ENABLED=0 \
      go build -o "$bin.tmp" github.com/energomonitor/bisquitt/cmd/bisquitt >&2)
  mv "$bin.tmp" "$bin"
fi
echo "$bin"
