#!/usr/bin/env bash
# Builds msgbench's container images as docker-archive tarballs in bin/images/, with no container
# engine and no registry (hack/imagebuild, on github.com/google/go-containerregistry):
#
#   msgbench.tar    ghcr.io/msgbench/msgbench:$VERSION   the static binary (CGO_ENABLED=0) at
#                   /msgbench, user 65532, CA certificates, no shell
#   mosquitto.tar   ghcr.io/msgbench/mosquitto:<Debian's mosquitto version>   Debian's mosquitto
#                   with the shared libraries ldd lists, user 1883, read-only root works
#   pause.tar       localhost/msgbench/pause:1   the pod sandbox image of the e2e node
#   rabbitmq.tar    ghcr.io/msgbench/rabbitmq:<Debian's rabbitmq-server version>   Debian's
#                   rabbitmq-server and erlang-* packages, their libraries, sh and the few tools
#                   its scripts run; rabbitmq-server on PATH, user 999 (docs/e2e.md)
#   artemis.tar     ghcr.io/msgbench/artemis:2.40.0   Debian's openjdk-17-jre-headless and Apache
#                   Artemis (hack/artemis.sh) at /opt/activemq-artemis, user 1001, no shell
#
# and bin/images/images.env naming them (MSGBENCH_IMAGE=… MOSQUITTO_IMAGE=… PAUSE_IMAGE=…
# RABBITMQ_IMAGE=… ARTEMIS_IMAGE=…). The two broker images are rebuilt only when their inputs
# change (package versions, the Artemis version, hack/imagebuild and internal/image).
# Load them with `docker load -i`, `kind load image-archive` or `ctr -n k8s.io images import`.
#
#   hack/images.sh                 VERSION and COMMIT default to `git describe` and HEAD
#   GOARCH=arm64 hack/images.sh    another architecture (Mosquitto, RabbitMQ and Artemis need that
#                                  arch's libraries: only the host's architecture is supported for them)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
COMMIT=${COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
GOARCH=${GOARCH:-$(go env GOARCH)}
out="$root/bin/images"
work="$root/bin/images/.build"
mkdir -p "$out" "$work"

ldflags="-s -w -X github.com/msgbench/msgbench/internal/version.Version=$VERSION -X github.com/msgbench/msgbench/internal/version.Commit=$COMMIT"
echo "images: building msgbench $VERSION ($GOARCH, CGO_ENABLED=0)" >&2
CGO_ENABLED=0 GOOS=linux GOARCH=$GOARCH go build -trimpath -ldflags "$ldflags" -o "$work/msgbench" ./cmd/msgbench
CGO_ENABLED=0 GOOS=linux GOARCH=$GOARCH go build -trimpath -ldflags "-s -w" -o "$work/pause" ./images/pause
go build -o "$work/imagebuild" ./hack/imagebuild

msgbench_image="ghcr.io/msgbench/msgbench:$VERSION"
"$work/imagebuild" msgbench --binary "$work/msgbench" --tag "$msgbench_image" --out "$out/msgbench.tar" \
  --version "$VERSION" --revision "$COMMIT" >&2

pause_image="localhost/msgbench/pause:1"
"$work/imagebuild" pause --binary "$work/pause" --tag "$pause_image" --out "$out/pause.tar" >&2

"$root/hack/apt-packages.sh" mosquitto
mosquitto=/usr/sbin/mosquitto
[ -x "$mosquitto" ] || { echo "images: $mosquitto not found (Debian package mosquitto)" >&2; exit 1; }
if [ "$GOARCH" != "$(go env GOHOSTARCH)" ]; then
  echo "images: the Mosquitto image is built from this machine's $(go env GOHOSTARCH) package; skipped for $GOARCH" >&2
  mosquitto_image=""
else
  mv=$(dpkg-query -W -f '${Version}' mosquitto 2>/dev/null || echo unknown)
  mv=${mv#*:}; mv=${mv%%-*}; mv=${mv%%+*}
  mosquitto_image="ghcr.io/msgbench/mosquitto:$mv"
  "$work/imagebuild" mosquitto --binary "$mosquitto" --tag "$mosquitto_image" --out "$out/mosquitto.tar" \
    --version "$mv" >&2
fi

# cached NAME STAMP: true when bin/images/NAME.tar was built from inputs with this stamp.
cached() { [ -f "$out/$1.tar" ] && [ -f "$work/$1.stamp" ] && [ "$(cat "$work/$1.stamp")" = "$2" ]; }
builder_sum=$(cat hack/imagebuild/*.go internal/image/*.go | sha256sum | cut -c1-16)

rabbitmq_image="" artemis_image=""
if [ "$GOARCH" != "$(go env GOHOSTARCH)" ]; then
  echo "images: the RabbitMQ and Artemis images are built from this machine's $(go env GOHOSTARCH) packages; skipped for $GOARCH" >&2
else
  "$root/hack/apt-packages.sh" rabbitmq-server openjdk-17-jre-headless maven
  rv=$(dpkg-query -W -f '${Version}' rabbitmq-server)
  rv=${rv#*:}; rv=${rv%%-*}; rv=${rv%%+*}
  rabbitmq_image="ghcr.io/msgbench/rabbitmq:$rv"
  stamp="$rabbitmq_image $builder_sum $(dpkg-query -W -f '${Package}=${Version} ' rabbitmq-server 'erlang-*' 2>/dev/null)"
  if cached rabbitmq "$stamp"; then
    echo "images: $rabbitmq_image unchanged" >&2
  else
    "$work/imagebuild" rabbitmq --tag "$rabbitmq_image" --out "$out/rabbitmq.tar" --version "$rv" >&2
    echo "$stamp" > "$work/rabbitmq.stamp"
  fi

  artemis_home=$("$root/hack/artemis.sh")
  av=${artemis_home##*apache-artemis-}
  artemis_image="ghcr.io/msgbench/artemis:$av"
  stamp="$artemis_image $builder_sum $(dpkg-query -W -f '${Package}=${Version}' openjdk-17-jre-headless)"
  if cached artemis "$stamp"; then
    echo "images: $artemis_image unchanged" >&2
  else
    "$work/imagebuild" artemis --artemis-home "$artemis_home" --tag "$artemis_image" --out "$out/artemis.tar" --version "$av" >&2
    echo "$stamp" > "$work/artemis.stamp"
  fi
fi

cat > "$out/images.env" <<EOF
MSGBENCH_IMAGE=$msgbench_image
MOSQUITTO_IMAGE=$mosquitto_image
PAUSE_IMAGE=$pause_image
RABBITMQ_IMAGE=$rabbitmq_image
ARTEMIS_IMAGE=$artemis_image
EOF
cat "$out/images.env"
