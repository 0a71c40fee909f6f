#!/usr/bin/env bash
# Builds pinned Kubernetes binaries from the Go module proxy (no container registry, no
# dl.k8s.io needed) and caches them in bin/k8s/<version>/.
#
#   hack/k8s-binaries.sh [COMPONENT…]     default: kube-apiserver kubectl
#
# k8s.io/kubernetes cannot be `go install`ed (its go.mod replaces the staging modules with local
# folders), so a throw-away wrapper module requires it and maps every staging module to its
# published k8s.io/X v0.<minor>.<patch>. Prints the cache folder on stdout.
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-1.36.3}
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/bin/k8s/$K8S_VERSION"
components=("$@")
[ ${#components[@]} -gt 0 ] || components=(kube-apiserver kubectl)

missing=()
for c in "${components[@]}"; do
  [ -x "$out/$c" ] || missing+=("$c")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "$out"
  exit 0
fi

mkdir -p "$out"
work="$root/bin/k8s/.build-$K8S_VERSION"
mkdir -p "$work"
cd "$work"

gomod=$(go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" |
  sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
[ -n "$gomod" ] || { echo "k8s-binaries: cannot download k8s.io/kubernetes@v$K8S_VERSION" >&2; exit 1; }

staging_version="v0.${K8S_VERSION#1.}"
{
  echo "module msgbench.local/k8sbuild"
  echo
  echo "go 1.26"
  echo
  echo "require k8s.io/kubernetes v$K8S_VERSION"
  echo
  grep -E '^[[:space:]]*k8s\.io/[^ ]+ => \./staging/' "$gomod" |
    awk -v v="$staging_version" '{print "replace " $1 " => " $1 " " v}'
} > go.mod

{
  echo "//go:build tools"
  echo
  echo "package tools"
  echo
  echo "import ("
  for c in kube-apiserver kubectl kubelet kube-scheduler kube-controller-manager kube-proxy; do
    echo "	_ \"k8s.io/kubernetes/cmd/$c\""
  done
  echo ")"
} > tools.go

if [ ! -f go.sum ] || [ go.mod -nt go.sum ]; then
  GOFLAGS=-mod=mod go mod tidy >&2
fi

minor=${K8S_VERSION#1.}; minor=${minor%%.*}
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=v$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
for c in "${missing[@]}"; do
  echo "k8s-binaries: building $c v$K8S_VERSION (minutes on a cold cache)" >&2
  CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$out/$c.tmp" "k8s.io/kubernetes/cmd/$c" >&2
  mv "$out/$c.tmp" "$out/$c"
done
echo "$out"
