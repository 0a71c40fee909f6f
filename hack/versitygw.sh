#!/usr/bin/env bash
# Builds a pinned versitygw (Versity S3 Gateway, an S3-compatible server over a POSIX folder)
# from the Go module proxy into bin/tools/ and prints its path. Tests start it on a free
# loopback port as the object store results are uploaded to.
set -euo pipefail
VERSION=${VERSITYGW_VERSION:-v1.8.0}
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/bin/tools/versitygw-$VERSION"
if [ ! -x "$bin" ]; then
  echo "versitygw: building $VERSION (a minute or two on a cold cache)" >&2
  tmp=$(mktemp -d)
  GOBIN="$tmp" CGO_ENABLED=0 go install "github.com/versity/versitygw/cmd/versitygw@$VERSION" >&2
  mkdir -p "$(dirname "$bin")"
  mv "$tmp/versitygw" "$bin"
  rmdir "$tmp"
fi
echo "$bin"
