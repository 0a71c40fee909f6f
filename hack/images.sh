#!/usr/bin/env bash
# Builds msgbench's container images as docker-archive tarballs in bin/images/, with no container
# engine and no registry (hack/imagebuild, on github.com/google/go-containerregistry):
#
#   msgbench.tar    ghcr.io/msgbench/msgbench:$VERSION   the static binary (CGO_ENABLED=0) at
#                   /msgbench, user 65532, CA certificates, no shell
#   mosquitto.tar   ghcr.io/msgbench/mosquitto:<Debian's mosquitto version>   Debian's mosquitto
#                   with the shared libraries ldd lists, user 1883, read-only root works
#   pause.tar       localhost/msgbench/pause:1   the pod sandbox image of the e2e node
#
# and bin/images/images.env naming them (MSGBENCH_IMAGE=… MOSQUITTO_IMAGE=… PAUSE_IMAGE=…).
# Load them with `docker load -i`, `kind load image-archive` or `ctr -n k8s.io images import`.
#
#   hack/images.sh                 VERSION and COMMIT default to `git describe` and HEAD
#   GOARCH=arm64 hack/images.sh    another architecture (Mosquitto needs that arch's libraries:
#                                  only the host's architecture is supported for it)
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

cat > "$out/images.env" <<EOF
MSGBENCH_IMAGE=$msgbench_image
MOSQUITTO_IMAGE=$mosquitto_image
PAUSE_IMAGE=$pause_image
EOF
cat "$out/images.env"
