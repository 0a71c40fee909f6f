#!/usr/bin/env bash
# msgbench on a local kind cluster, for users with Docker and internet access
# (docs/quickstart-kind.md). NOT run in msgbench's own CI: its machines have no Docker engine and
# no registry access; there, hack/e2e-node.sh builds a node from package registries instead.
#
#   hack/kind-up.sh          create the cluster and install everything, then run a first benchmark
#   hack/kind-up.sh down     delete the cluster
#
# Needs: docker, kind, kubectl, helm (v3 or v4) on PATH. Versions are pinned below; override them
# with the environment variables of the same name.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

CLUSTER=${KIND_CLUSTER:-msgbench}
CHAOS_MESH_VERSION=${CHAOS_MESH_VERSION:-2.8.2}
STRIMZI_VERSION=${STRIMZI_VERSION:-1.2.0}
MINIO_CHART_VERSION=${MINIO_CHART_VERSION:-5.4.0}
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
MSGBENCH_IMAGE=ghcr.io/msgbench/msgbench:$VERSION
MOSQUITTO_IMAGE=ghcr.io/msgbench/mosquitto:2.0.11
S3_USER=msgbench S3_PASSWORD=msgbench-secret-key

step() { printf '\n==> %s\n' "$*"; }

if [ "${1:-}" = down ]; then
  kind delete cluster --name "$CLUSTER"
  exit 0
fi
for tool in docker kind kubectl helm; do
  command -v "$tool" >/dev/null || { echo "kind-up: $tool is not installed" >&2; exit 1; }
done

step "kind cluster $CLUSTER"
if ! kind get clusters 2>/dev/null | grep -qx "$CLUSTER"; then
  kind create cluster --name "$CLUSTER" --wait 120s
fi
kubectl config use-context "kind-$CLUSTER" >/dev/null

step "Chaos Mesh $CHAOS_MESH_VERSION (kind's nodes run containerd)"
# chaos-daemon injects netem into the pods' network namespaces through the node's container
# runtime: kind's is containerd at /run/containerd/containerd.sock. The host kernel needs sch_netem.
helm repo add chaos-mesh https://charts.chaos-mesh.org >/dev/null 2>&1 || true
helm repo update chaos-mesh >/dev/null
helm upgrade --install chaos-mesh chaos-mesh/chaos-mesh --version "$CHAOS_MESH_VERSION" \
  --namespace chaos-mesh --create-namespace \
  --set chaosDaemon.runtime=containerd --set chaosDaemon.socketPath=/run/containerd/containerd.sock \
  --set dashboard.create=false --wait --timeout 5m

step "Strimzi $STRIMZI_VERSION (watching every namespace)"
helm upgrade --install strimzi oci://quay.io/strimzi-helm/strimzi-kafka-operator --version "$STRIMZI_VERSION" \
  --namespace strimzi --create-namespace --set watchAnyNamespace=true --wait --timeout 5m

step "MinIO (S3-compatible object store for the results) at http://minio.minio.svc:9000"
helm repo add minio https://charts.min.io >/dev/null 2>&1 || true
helm repo update minio >/dev/null
helm upgrade --install minio minio/minio --version "$MINIO_CHART_VERSION" --namespace minio --create-namespace \
  --set mode=standalone --set replicas=1 --set persistence.enabled=false \
  --set resources.requests.memory=256Mi --set rootUser="$S3_USER" --set rootPassword="$S3_PASSWORD" \
  --set 'buckets[0].name=msgbench-results' --set 'buckets[0].policy=none' --set 'buckets[0].purge=false' \
  --wait --timeout 5m

step "msgbench images $MSGBENCH_IMAGE and $MOSQUITTO_IMAGE"
if [ "${MSGBENCH_IMAGES:-docker}" = archive ]; then
  # Without docker build: the tarballs `make images` writes (Linux with Debian's mosquitto).
  make images VERSION="$VERSION"
  kind load image-archive bin/images/msgbench.tar --name "$CLUSTER"
  kind load image-archive bin/images/mosquitto.tar --name "$CLUSTER"
else
  docker build -t "$MSGBENCH_IMAGE" --build-arg VERSION="$VERSION" --build-arg COMMIT="$(git rev-parse HEAD 2>/dev/null || echo unknown)" .
  docker build -t "$MOSQUITTO_IMAGE" images/mosquitto
  kind load docker-image "$MSGBENCH_IMAGE" "$MOSQUITTO_IMAGE" --name "$CLUSTER"
fi

step "msgbench from charts/msgbench"
kubectl create namespace msgbench-system --dry-run=client -o yaml | kubectl apply -f - >/dev/null
kubectl label namespace msgbench-system --overwrite pod-security.kubernetes.io/enforce=restricted >/dev/null
helm upgrade --install msgbench charts/msgbench --namespace msgbench-system \
  --set image.tag="$VERSION" --set mosquitto.image="$MOSQUITTO_IMAGE" --wait --timeout 3m

step "a first benchmark: MQTT QoS 1 on two workers, results in MinIO"
kubectl create namespace bench --dry-run=client -o yaml | kubectl apply -f - >/dev/null
kubectl label namespace bench --overwrite pod-security.kubernetes.io/enforce=restricted >/dev/null
kubectl -n bench create secret generic s3-credentials --from-literal=accessKeyID="$S3_USER" \
  --from-literal=secretAccessKey="$S3_PASSWORD" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
kubectl -n bench delete messagingbenchmark mqtt-two-workers --ignore-not-found >/dev/null
kubectl -n bench apply -f config/samples/mqtt-two-workers-objectstore.yaml
kubectl -n bench wait messagingbenchmark/mqtt-two-workers --for=jsonpath='{.status.phase}'=Succeeded --timeout 5m ||
  kubectl -n bench get messagingbenchmark mqtt-two-workers -o jsonpath='{.status.message}{"\n"}'
kubectl -n bench get messagingbenchmarks
kubectl -n bench get messagingbenchmark mqtt-two-workers -o jsonpath='{.status.resultsURL}{"\n"}{.status.summary}{"\n"}'
