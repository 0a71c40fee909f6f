#!/usr/bin/env bash
# Prepares KUBEBUILDER_ASSETS for controller-runtime's envtest: a pinned kube-apiserver and
# kubectl built from the Go module proxy (hack/k8s-binaries.sh) beside Debian's etcd, in
# bin/k8s/<version>/. Prints the folder; use as
#   export KUBEBUILDER_ASSETS=$(hack/envtest-assets.sh)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/hack/apt-packages.sh"
dir=$("$root/hack/k8s-binaries.sh" kube-apiserver kubectl)
etcd=$(command -v etcd || true)
[ -n "$etcd" ] || { echo "envtest-assets: etcd not found after installing etcd-server" >&2; exit 1; }
ln -sf "$etcd" "$dir/etcd"
echo "$dir"
