#!/usr/bin/env bash
# A real single-node Kubernetes on this machine, built from package registries only, with
# msgbench installed from its Helm chart (docs/e2e.md):
#
#   hack/e2e-node.sh up       start it (idempotent; prints `export KUBECONFIG=…`)
#   hack/e2e-node.sh down     stop every process it started (by PID), remove its pods, network
#                             devices, iptables chains and cgroups; keeps the caches
#   hack/e2e-node.sh down --purge   also delete the caches under $MSGBENCH_E2E_STATE
#   hack/e2e-node.sh status   what runs
#   hack/e2e-node.sh env      the settings the e2e test reads (KUBECONFIG, S3 endpoint…)
#
# What runs, each as a host process:
#   etcd (Debian etcd-server), kube-apiserver, kube-controller-manager, kube-scheduler, kubelet,
#   kube-proxy (iptables mode)     pinned k8s.io/kubernetes from the Go module proxy
#                                  (hack/k8s-binaries.sh, cached in bin/k8s/<version>)
#   containerd, runc, CNI bridge   Debian packages containerd, runc, containernetworking-plugins
#   CoreDNS                        cluster DNS (hack/coredns.sh, from the Go module proxy)
#   versitygw                      S3-compatible object store (hack/versitygw.sh), reachable in
#                                  the cluster as http://s3.objectstore.svc:9000
# Images: bin/images/*.tar from hack/images.sh, imported with `ctr images import` (no registry);
# the RabbitMQ and Artemis images become the operator's images for those broker types.
#
# Everything it creates is its own: the interface msgbench-node0 (dummy, or a port-less bridge)
# with the node's address,
# the bridge msgbench-br0 for pods (forwarding enabled on that bridge only, not globally), its own
# containerd socket and state under /run/msgbench-e2e and $MSGBENCH_E2E_STATE. Needs root, cgroup
# v1 or v2, and iptables. Addresses are private ranges chosen to be rarely used; change them with
# E2E_NODE_IP, E2E_POD_CIDR (a /24), E2E_SERVICE_CIDR when they clash with this machine's networks.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
K8S_VERSION=${K8S_VERSION:-1.36.3}
STATE=${MSGBENCH_E2E_STATE:-/var/lib/msgbench-e2e}
RUN=/run/msgbench-e2e
NODE_NAME=msgbench-e2e
NODE_IP=${E2E_NODE_IP:-10.215.0.1}
POD_CIDR=${E2E_POD_CIDR:-10.213.0.0/24}
SERVICE_CIDR=${E2E_SERVICE_CIDR:-10.214.0.0/16}
DUMMY=msgbench-node0
BRIDGE=msgbench-br0
API_PORT=6443
S3_PORT=9000
RELEASE_NS=msgbench-system

pod_prefix=${POD_CIDR%.*}            # 10.213.0
POD_GW="$pod_prefix.1"
svc_prefix=${SERVICE_CIDR%/*}; svc_prefix=${svc_prefix%.*}   # 10.214.0
API_SERVICE_IP="$svc_prefix.1"

BIN="$root/bin/k8s/$K8S_VERSION"
PKI="$STATE/pki"
LOGS="$STATE/logs"
PIDS="$RUN/pids"
SOCK="$RUN/containerd/containerd.sock"
KUBECONFIG_ADMIN="$STATE/admin.kubeconfig"

log() { printf '%s e2e-node: %s\n' "$(date +%T)" "$*" >&2; }
die() { log "$*"; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root (it runs a kubelet, containerd and sets up pod networking)"

ctr_() { ctr -a "$SOCK" -n k8s.io "$@"; }
kubectl_() { "$BIN/kubectl" --kubeconfig "$KUBECONFIG_ADMIN" "$@"; }

# ---------------------------------------------------------------- processes (by PID only)

pid_of() { local f="$PIDS/$1.pid"; [ -f "$f" ] && cat "$f" || true; }
running() { local p; p=$(pid_of "$1"); [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }

# start NAME CMD… runs CMD in its own session with its log in $LOGS/NAME.log.
start() {
  local name=$1; shift
  if running "$name"; then return 0; fi
  mkdir -p "$PIDS" "$LOGS"
  setsid "$@" >>"$LOGS/$name.log" 2>&1 < /dev/null &
  echo $! > "$PIDS/$name.pid"
  log "started $name (pid $!)"
}

# stop NAME: SIGTERM, then SIGKILL after a grace period; only the PID this script recorded.
stop() {
  local name=$1 grace=${2:-10} p
  p=$(pid_of "$name")
  if [ -n "$p" ] && kill -0 "$p" 2>/dev/null; then
    kill -TERM "$p" 2>/dev/null || true
    for _ in $(seq $((grace * 5))); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
    if kill -0 "$p" 2>/dev/null; then kill -KILL "$p" 2>/dev/null || true; fi
    log "stopped $name (pid $p)"
  fi
  rm -f "$PIDS/$name.pid"
}

# put FILE: writes stdin to FILE only when it differs (kube-proxy exits when its configuration
# file changes, so a second `up` must leave unchanged files alone).
put() {
  local tmp; tmp=$(mktemp "$1.XXXXXX")
  cat > "$tmp"
  if cmp -s "$tmp" "$1"; then rm -f "$tmp"; else mv "$tmp" "$1"; fi
}

wait_for() { # wait_for SECONDS WHAT CMD…
  local secs=$1 what=$2; shift 2
  local deadline=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    if [ $SECONDS -ge $deadline ]; then die "$what not ready after ${secs}s (logs: $LOGS)"; fi
    sleep 0.5
  done
}

# ---------------------------------------------------------------- preparation

packages() {
  local missing=()
  command -v containerd >/dev/null || missing+=(containerd)
  command -v runc >/dev/null || missing+=(runc)
  [ -x /usr/lib/cni/bridge ] || missing+=(containernetworking-plugins)
  command -v iptables >/dev/null || missing+=(iptables)
  command -v etcd >/dev/null || missing+=(etcd-server)
  command -v openssl >/dev/null || missing+=(openssl)
  command -v mosquitto >/dev/null || [ -x /usr/sbin/mosquitto ] || missing+=(mosquitto)
  [ ${#missing[@]} -gt 0 ] || return 0
  log "installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  local cleanup=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then # keep the packages' own services from starting
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; cleanup=1
  fi
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
  [ -z "$cleanup" ] || rm -f /usr/sbin/policy-rc.d
}

binaries() {
  "$root/hack/k8s-binaries.sh" kube-apiserver kubectl kubelet kube-scheduler kube-controller-manager kube-proxy >/dev/null
  COREDNS=$("$root/hack/coredns.sh")
  VERSITYGW=$("$root/hack/versitygw.sh")
  HELM=$("$root/hack/helm.sh")
  local t
  for t in images.env msgbench.tar mosquitto.tar pause.tar rabbitmq.tar artemis.tar; do
    if [ ! -f "$root/bin/images/$t" ]; then "$root/hack/images.sh" >/dev/null; break; fi
  done
  # shellcheck disable=SC1091
  . "$root/bin/images/images.env"
}

# Certificates, tokens and kubeconfigs, made once and cached in $PKI.
pki() {
  local stamp="$NODE_IP $SERVICE_CIDR"
  if [ -f "$PKI/stamp" ] && [ "$(cat "$PKI/stamp")" = "$stamp" ]; then return 0; fi
  log "creating certificates and tokens in $PKI"
  rm -rf "$PKI"; mkdir -p "$PKI"; chmod 700 "$PKI"
  (
    cd "$PKI"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3650 -subj "/CN=msgbench-e2e-ca" 2>/dev/null
    cert() { # cert NAME SUBJECT [SANS]
      openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "$2" 2>/dev/null
      local ext=""
      if [ -n "${3:-}" ]; then printf 'subjectAltName=%s\n' "$3" > "$1.ext"; ext="-extfile $1.ext"; fi
      # shellcheck disable=SC2086
      openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -out "$1.crt" -days 3650 $ext 2>/dev/null
      rm -f "$1.csr" "$1.ext"
    }
    cert apiserver "/CN=kube-apiserver" "IP:$NODE_IP,IP:$API_SERVICE_IP,IP:127.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost"
    cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client"
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    : > tokens.csv
    # kubeconfig file, user, group: static tokens (--token-auth-file) for the control plane,
    # the kubelet (the Node authorizer's system:node:<name>), kube-proxy, CoreDNS and the admin.
    while read -r file user group; do
      token=$(openssl rand -hex 24)
      echo "$token,$user,$user,\"${group#-}\"" >> tokens.csv
      cat > "$file.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: $NODE_NAME
  cluster:
    server: https://$NODE_IP:$API_PORT
    certificate-authority: $PKI/ca.crt
users:
- name: $file
  user:
    token: $token
contexts:
- name: $file@$NODE_NAME
  context: {cluster: $NODE_NAME, user: $file}
current-context: $file@$NODE_NAME
EOF
    done <<EOF
admin msgbench-e2e-admin system:masters
kubelet system:node:$NODE_NAME system:nodes
controller-manager system:kube-controller-manager -
scheduler system:kube-scheduler -
kube-proxy system:kube-proxy -
coredns system:coredns -
EOF
    chmod 600 ./*.key tokens.csv ./*.kubeconfig
  )
  cp "$PKI/admin.kubeconfig" "$KUBECONFIG_ADMIN"
  echo "$stamp" > "$PKI/stamp"
}

network() {
  if ! ip link show "$DUMMY" >/dev/null 2>&1; then
    # A dummy interface, or where the kernel has no dummy driver a bridge without ports: both
    # only hold the node's address (the kubelet's InternalIP must not be a loopback address).
    ip link add "$DUMMY" type dummy 2>/dev/null || ip link add "$DUMMY" type bridge
    log "created interface $DUMMY ($NODE_IP, the node's address)"
  fi
  ip addr replace "$NODE_IP/32" dev "$DUMMY"
  ip link set "$DUMMY" up
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link add "$BRIDGE" type bridge
    log "created bridge $BRIDGE ($POD_GW/24, the pods' gateway)"
  fi
  ip addr replace "$POD_GW/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  # Pods reach Services (DNAT by kube-proxy) and each other through this bridge: forwarding on
  # packets that arrive on it, without touching the global net.ipv4.ip_forward.
  echo 1 > "/proc/sys/net/ipv4/conf/$BRIDGE/forwarding"
  # Service traffic between two pods of the bridge passes iptables only with br_netfilter.
  if [ -f /proc/sys/net/bridge/bridge-nf-call-iptables ] && [ "$(cat /proc/sys/net/bridge/bridge-nf-call-iptables)" != 1 ]; then
    die "net.bridge.bridge-nf-call-iptables is 0: ClusterIP Services between pods would not work (set it to 1)"
  fi
  mkdir -p "$STATE/cni/net.d" "$STATE/cni/ipam"
  put "$STATE/cni/net.d/10-msgbench-e2e.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "msgbench-e2e",
  "plugins": [{
    "type": "bridge",
    "bridge": "$BRIDGE",
    "isGateway": false,
    "ipMasq": false,
    "hairpinMode": true,
    "ipam": {
      "type": "host-local",
      "dataDir": "$STATE/cni/ipam",
      "ranges": [[{"subnet": "$POD_CIDR", "gateway": "$POD_GW"}]],
      "routes": [{"dst": "0.0.0.0/0", "gw": "$POD_GW"}]
    }
  }]
}
EOF
}

containerd_up() {
  mkdir -p "$RUN/containerd" "$STATE/containerd"
  put "$STATE/containerd.toml" <<EOF
version = 2
root = "$STATE/containerd"
state = "$RUN/containerd/state"
[grpc]
  address = "$SOCK"
[ttrpc]
  address = "$RUN/containerd/ttrpc.sock"
[plugins."io.containerd.internal.v1.opt"]
  path = "$STATE/containerd-opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  # without it every sandbox fails: runc cannot write /proc/self/oom_score_adj here
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$STATE/cni/net.d"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "$(command -v runc)"
        SystemdCgroup = false
EOF
  start containerd containerd --config "$STATE/containerd.toml"
  wait_for 30 containerd ctr -a "$SOCK" version
}

images_import() {
  for t in pause msgbench mosquitto rabbitmq artemis; do
    ctr_ images import "$root/bin/images/$t.tar" >/dev/null
  done
  log "imported images: $PAUSE_IMAGE $MSGBENCH_IMAGE $MOSQUITTO_IMAGE $RABBITMQ_IMAGE $ARTEMIS_IMAGE"
}

control_plane() {
  if ! running etcd; then rm -rf "$RUN/etcd"; fi # a fresh cluster on every start (tmpfs)
  mkdir -p "$RUN/etcd"; chmod 700 "$RUN/etcd"
  start etcd etcd --name "$NODE_NAME" --data-dir "$RUN/etcd" \
    --listen-client-urls "http://$NODE_IP:2379" --advertise-client-urls "http://$NODE_IP:2379" \
    --listen-peer-urls "http://$NODE_IP:2380" --initial-advertise-peer-urls "http://$NODE_IP:2380" \
    --initial-cluster "$NODE_NAME=http://$NODE_IP:2380"
  start kube-apiserver "$BIN/kube-apiserver" \
    --etcd-servers "http://$NODE_IP:2379" \
    --bind-address "$NODE_IP" --advertise-address "$NODE_IP" --secure-port "$API_PORT" \
    --tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
    --client-ca-file "$PKI/ca.crt" --token-auth-file "$PKI/tokens.csv" \
    --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
    --service-cluster-ip-range "$SERVICE_CIDR" \
    --service-account-issuer "https://kubernetes.default.svc.cluster.local" \
    --service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
    --kubelet-client-certificate "$PKI/apiserver-kubelet-client.crt" --kubelet-client-key "$PKI/apiserver-kubelet-client.key" \
    --kubelet-preferred-address-types InternalIP \
    --profiling=false --v=1
  wait_for 90 kube-apiserver kubectl_ get --raw /readyz
  start kube-controller-manager "$BIN/kube-controller-manager" \
    --kubeconfig "$PKI/controller-manager.kubeconfig" \
    --authentication-kubeconfig "$PKI/controller-manager.kubeconfig" --authorization-kubeconfig "$PKI/controller-manager.kubeconfig" \
    --bind-address "$NODE_IP" --leader-elect=false \
    --use-service-account-credentials=true --service-account-private-key-file "$PKI/sa.key" --root-ca-file "$PKI/ca.crt" \
    --cluster-name "$NODE_NAME" --service-cluster-ip-range "$SERVICE_CIDR" --v=1
  start kube-scheduler "$BIN/kube-scheduler" \
    --kubeconfig "$PKI/scheduler.kubeconfig" \
    --authentication-kubeconfig "$PKI/scheduler.kubeconfig" --authorization-kubeconfig "$PKI/scheduler.kubeconfig" \
    --bind-address "$NODE_IP" --leader-elect=false --v=1
}

cluster_objects() {
  # CoreDNS reads Services, EndpointSlices, Namespaces and Pods (the upstream system:coredns role).
  kubectl_ apply --server-side --field-manager msgbench-e2e -f - >/dev/null <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "system:coredns"}
rules:
- apiGroups: [""]
  resources: [endpoints, services, pods, namespaces]
  verbs: [list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "system:coredns"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:coredns"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: "system:coredns"}]
---
# The object store (versitygw on the node) as an in-cluster Service: s3.objectstore.svc:9000.
apiVersion: v1
kind: Namespace
metadata: {name: objectstore}
---
apiVersion: v1
kind: Service
metadata: {name: s3, namespace: objectstore}
spec:
  ports: [{name: s3, port: $S3_PORT, targetPort: $S3_PORT, protocol: TCP}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: s3-node
  namespace: objectstore
  labels: {kubernetes.io/service-name: s3}
addressType: IPv4
ports: [{name: s3, port: $S3_PORT, protocol: TCP}]
endpoints: [{addresses: ["$NODE_IP"], conditions: {ready: true}}]
EOF
}

node_up() {
  mkdir -p "$STATE/kubelet" "$STATE/pod-logs"
  put "$STATE/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: $NODE_IP
healthzPort: 10248
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI/ca.crt}
authorization: {mode: Webhook}
containerRuntimeEndpoint: unix://$SOCK
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
clusterDNS: [$NODE_IP]
clusterDomain: cluster.local
podLogsDir: $STATE/pod-logs
serializeImagePulls: false
# never delete the imported images (they cannot be pulled again) and do not evict benchmark
# pods of a machine other people share
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 50Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
shutdownGracePeriod: 0s
EOF
  start kubelet "$BIN/kubelet" --config "$STATE/kubelet.yaml" --kubeconfig "$PKI/kubelet.kubeconfig" \
    --root-dir "$STATE/kubelet" --cert-dir "$STATE/kubelet/pki" \
    --hostname-override "$NODE_NAME" --node-ip "$NODE_IP" --v=1
  put "$STATE/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection: {kubeconfig: $PKI/kube-proxy.kubeconfig}
hostnameOverride: $NODE_NAME
bindAddress: $NODE_IP
healthzBindAddress: $NODE_IP:10256
metricsBindAddress: $NODE_IP:10249
clusterCIDR: $POD_CIDR
nodePortAddresses: ["$NODE_IP/32"]
# leave this machine's global conntrack and sysctl settings alone
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s, udpTimeout: 0s, udpStreamTimeout: 0s}
iptables: {localhostNodePorts: false, minSyncPeriod: 1s, syncPeriod: 30s}
EOF
  start kube-proxy "$BIN/kube-proxy" --config "$STATE/kube-proxy.yaml" --v=1
  put "$STATE/Corefile" <<EOF
.:53 {
    bind $NODE_IP
    ready $NODE_IP:8181
    errors
    loadbalance
    cache 5
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig $PKI/coredns.kubeconfig
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 5
    }
}
EOF
  start coredns "$COREDNS" -conf "$STATE/Corefile"
  mkdir -p "$STATE/s3/msgbench-results"
  start versitygw "$VERSITYGW" --access msgbench-e2e --secret msgbench-e2e-secret-key --port "$NODE_IP:$S3_PORT" \
    posix --nometa "$STATE/s3"
  wait_for 120 "node $NODE_NAME" node_ready
  wait_for 30 coredns curl -sf "http://$NODE_IP:8181/ready"
  wait_for 30 "kube-proxy" curl -sf "http://$NODE_IP:10256/healthz"
}

node_ready() {
  [ "$(kubectl_ get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]
}

msgbench_up() {
  kubectl_ create namespace "$RELEASE_NS" --dry-run=client -o yaml | kubectl_ apply -f - >/dev/null
  kubectl_ label namespace "$RELEASE_NS" --overwrite pod-security.kubernetes.io/enforce=restricted \
    pod-security.kubernetes.io/enforce-version=latest >/dev/null
  local tag=${MSGBENCH_IMAGE##*:}
  log "installing msgbench from charts/msgbench (image $MSGBENCH_IMAGE)"
  "$HELM" --kubeconfig "$KUBECONFIG_ADMIN" upgrade --install msgbench "$root/charts/msgbench" --namespace "$RELEASE_NS" \
    --set image.tag="$tag" --set image.pullPolicy=Never --set workloadImagePullPolicy=Never \
    --set mosquitto.image="$MOSQUITTO_IMAGE" \
    --set brokerImages.rabbitmq="$RABBITMQ_IMAGE" --set brokerImages.artemis="$ARTEMIS_IMAGE" \
    --set operator.networkInjectionTimeout=20s \
    --set-string "podAnnotations.msgbench\.io/image-sha256=$(sha256sum "$root/bin/images/msgbench.tar" | cut -c1-16)" \
    --wait --timeout 3m >/dev/null
  # (the annotation rolls the operator when a rebuilt image keeps its tag; no Chaos Mesh runs
  # here, so the test with only its CRD waits 20 s for an injection that never comes, not 2 min)
  kubectl_ -n "$RELEASE_NS" rollout status deployment/msgbench-operator --timeout 3m >&2
}

write_env() {
  cat > "$STATE/e2e.env" <<EOF
KUBECONFIG=$KUBECONFIG_ADMIN
E2E_NODE_NAME=$NODE_NAME
E2E_NODE_IP=$NODE_IP
E2E_RELEASE_NAMESPACE=$RELEASE_NS
E2E_S3_ENDPOINT=http://$NODE_IP:$S3_PORT
E2E_S3_CLUSTER_ENDPOINT=http://s3.objectstore.svc:$S3_PORT
E2E_S3_ACCESS_KEY=msgbench-e2e
E2E_S3_SECRET_KEY=msgbench-e2e-secret-key
E2E_S3_BUCKET=msgbench-results
E2E_S3_ROOT=$STATE/s3
E2E_MSGBENCH_IMAGE=$MSGBENCH_IMAGE
E2E_MOSQUITTO_IMAGE=$MOSQUITTO_IMAGE
E2E_RABBITMQ_IMAGE=$RABBITMQ_IMAGE
E2E_ARTEMIS_IMAGE=$ARTEMIS_IMAGE
E2E_HELM=$HELM
E2E_KUBECTL=$BIN/kubectl
E2E_LOGS=$LOGS
EOF
}

up() {
  local t0=$SECONDS
  if ! running kube-apiserver; then rm -rf "$LOGS"; fi # the previous run's logs
  mkdir -p "$STATE" "$RUN" "$LOGS"
  packages
  binaries
  pki
  network
  containerd_up
  images_import
  control_plane
  wait_for 60 "default ServiceAccount" kubectl_ get serviceaccount default -n default
  cluster_objects
  node_up
  msgbench_up
  write_env
  log "up in $((SECONDS - t0))s; node $NODE_NAME at $NODE_IP, pods $POD_CIDR, services $SERVICE_CIDR"
  echo "export KUBECONFIG=$KUBECONFIG_ADMIN"
}

# ---------------------------------------------------------------- teardown

down() {
  local purge=${1:-}
  if [ -f "$KUBECONFIG_ADMIN" ] && running kube-apiserver && running kubelet; then
    # Let the kubelet tear every pod down properly (CNI DEL, volumes unmounted): stop the
    # controllers that would recreate them, then delete the pods.
    stop kube-controller-manager
    kubectl_ cordon "$NODE_NAME" >/dev/null 2>&1 || true
    kubectl_ delete pods --all --all-namespaces --grace-period=2 --wait=false >/dev/null 2>&1 || true
    local deadline=$((SECONDS + 60))
    while [ $SECONDS -lt $deadline ]; do
      [ -z "$(kubectl_ get pods -A -o name 2>/dev/null)" ] && break
      sleep 1
    done
    sleep 2 # the kubelet stops the last sandboxes after the pod objects are gone
  fi
  for c in versitygw coredns kube-proxy kubelet kube-scheduler kube-controller-manager kube-apiserver etcd; do stop "$c"; done
  if running containerd; then
    # Whatever the kubelet did not clean up: kill the tasks, remove the containers and their
    # network namespaces (the veth pairs go with them).
    local netns=()
    for id in $(ctr_ containers ls -q 2>/dev/null); do
      local ns
      ns=$(ctr_ containers info "$id" 2>/dev/null | sed -n 's/.*"path": "\(\/var\/run\/netns\/cni-[^"]*\)".*/\1/p' | head -1)
      [ -n "$ns" ] && netns+=("$ns")
      ctr_ tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true
    done
    sleep 1
    for id in $(ctr_ containers ls -q 2>/dev/null); do
      ctr_ tasks delete -f "$id" >/dev/null 2>&1 || true
      ctr_ containers delete "$id" >/dev/null 2>&1 || true
    done
    for ns in "${netns[@]}"; do
      [ -e "$ns" ] && { ip netns delete "$(basename "$ns")" 2>/dev/null || true; }
    done
  fi
  stop containerd
  # Mounts the kubelet and containerd left behind (tmpfs volumes, rootfs overlays).
  { findmnt -rn -o TARGET | grep -E "^($STATE|$RUN)/" || true; } | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done
  if [ -x "$BIN/kube-proxy" ]; then "$BIN/kube-proxy" --cleanup >/dev/null 2>&1 || true; fi
  # Chains the kubelet and kube-proxy make outside kube-proxy's own cleanup.
  for ipt in iptables ip6tables; do
    command -v "$ipt" >/dev/null || continue
    for hook in INPUT OUTPUT; do
      while "$ipt" -t filter -D "$hook" -j KUBE-FIREWALL 2>/dev/null; do :; done
    done
    for table in mangle nat filter; do
      for chain in KUBE-FIREWALL KUBE-IPTABLES-HINT KUBE-KUBELET-CANARY; do
        "$ipt" -t "$table" -F "$chain" 2>/dev/null && "$ipt" -t "$table" -X "$chain" 2>/dev/null || true
      done
    done
  done
  # The kubelet's pod cgroups (cgroup v1: one tree per controller; v2: one tree).
  for base in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods /sys/fs/cgroup/kubepods.slice; do
    [ -d "$base" ] && find "$base" -depth -type d -exec rmdir {} \; 2>/dev/null || true
  done
  # /var/log/containers links into our pod-logs folder.
  find /var/log/containers -maxdepth 1 -type l -lname "$STATE/pod-logs/*" -delete 2>/dev/null || true
  ip link delete "$BRIDGE" 2>/dev/null && log "removed bridge $BRIDGE" || true
  ip link delete "$DUMMY" 2>/dev/null && log "removed interface $DUMMY" || true
  rm -rf "$RUN" "$STATE/cni/ipam" "$STATE/kubelet" "$STATE/pod-logs" "$STATE/s3" "$STATE/e2e.env"
  if [ "$purge" = --purge ]; then
    rm -rf "$STATE"
    log "purged $STATE"
  fi
  log "down"
}

status() {
  for c in containerd etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy coredns versitygw; do
    if running "$c"; then echo "$c running (pid $(pid_of "$c"))"; else echo "$c stopped"; fi
  done
  if running kube-apiserver; then kubectl_ get nodes,pods -A -o wide 2>/dev/null || true; fi
}

case "${1:-}" in
  up) up ;;
  down) down "${2:-}" ;;
  status) status ;;
  env) cat "$STATE/e2e.env" ;;
  *) echo "usage: $0 up|down [--purge]|status|env" >&2; exit 2 ;;
esac
