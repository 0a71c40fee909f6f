# The msgbench image for users with a container engine: the same content as `make images`
# (hack/images.sh) builds without one — the static binary at /msgbench as the entrypoint, user
# nonroot 65532, CA certificates, no shell.
#
#   docker build -t ghcr.io/msgbench/msgbench:dev --build-arg VERSION=dev .
#
# ko gives the same image without a Dockerfile (see docs/install.md):
#   KO_DOCKER_REPO=ghcr.io/msgbench ko build --bare ./cmd/msgbench
ARG GO_VERSION=1.26

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG COMMIT=unknown
ARG TARGETOS=linux
ARG TARGETARCH
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath \
      -ldflags "-s -w -X github.com/msgbench/msgbench/internal/version.Version=${VERSION} -X github.com/msgbench/msgbench/internal/version.Commit=${COMMIT}" \
      -o /out/msgbench ./cmd/msgbench

# distroless static: /etc/passwd with nonroot (65532), CA certificates, tzdata, no shell.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/msgbench /msgbench
USER 65532:65532
ENTRYPOINT ["/msgbench"]
