#!/usr/bin/env bash
# Builds a pinned CoreDNS with only the plugins cluster DNS needs (kubernetes, cache, errors,
# log, health, ready, bind, loadbalance) from the Go module proxy into bin/tools/ and prints its
# path. The e2e node (hack/e2e-node.sh) runs it as the cluster's DNS server. CoreDNS documents
# this way of choosing plugins at compile time: a main package that imports the plugins and sets
# dnsserver.Directives in plugin.cfg order.
set -euo pipefail
VERSION=${COREDNS_VERSION:-v1.15.0}
root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/bin/tools/coredns-$VERSION"
if [ ! -x "$bin" ]; then
  echo "coredns: building $VERSION (a few minutes on a cold cache)" >&2
  work="$root/bin/tools/.coredns-build-$VERSION"
  mkdir -p "$work"
  cd "$work"
  cat > go.mod <<MOD
module msgbench.local/coredns

go 1.26

require github.com/coredns/coredns $VERSION
MOD
  cat > main.go <<'GO'
// CoreDNS with the plugins a single-node cluster's DNS needs.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"
)

func init() {
	// The order of plugin.cfg, which is the order a query passes the plugins.
	dnsserver.Directives = []string{"bind", "ready", "health", "errors", "log", "loadbalance", "cache", "kubernetes"}
}

func main() { coremain.Run() }
GO
  GOFLAGS=-mod=mod go mod tidy >&2
  CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$bin.tmp" . >&2
  mv "$bin.tmp" "$bin"
fi
echo "$bin"
