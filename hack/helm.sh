#!/usr/bin/env bash
# Builds a pinned helm from the Go module proxy (helm.sh/helm/v4, no download site needed) into
# bin/tools/ and prints its path. The chart tests (charts/msgbench) and the e2e node use it.
#
#   helm=$(hack/helm.sh); $helm lint charts/msgbench
set -euo pipefail
VERSION=${HELM_VERSION:-v4.3.1}
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/bin/tools/helm-$VERSION"
if [ ! -x "$bin" ]; then
  echo "helm: building $VERSION (a few minutes on a cold cache)" >&2
  tmp=$(mktemp -d)
  GOBIN="$tmp" CGO_ENABLED=0 go install -trimpath \
    -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$VERSION" \
    "helm.sh/helm/v4/cmd/helm@$VERSION" >&2
  mkdir -p "$(dirname "$bin")"
  mv "$tmp/helm" "$bin"
  rmdir "$tmp"
fi
echo "$bin"
