# msgbench — see README.md. Every target works on a fresh machine: hack/ scripts install or build
# what a target needs and cache it under bin/ (git-ignored).

SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS := -s -w -X github.com/msgbench/msgbench/internal/version.Version=$(VERSION) \
	-X github.com/msgbench/msgbench/internal/version.Commit=$(COMMIT)

TOOLS := $(CURDIR)/bin/tools
CONTROLLER_GEN_VERSION := v0.23.0
GOLANGCI_LINT_VERSION := v2.15.0
CONTROLLER_GEN := $(TOOLS)/controller-gen-$(CONTROLLER_GEN_VERSION)
GOLANGCI_LINT := $(TOOLS)/golangci-lint-$(GOLANGCI_LINT_VERSION)

# Packages whose tests need no API server, broker or privileges run in `make test` too; this
# only sets the timeout for the whole run.
TEST_TIMEOUT ?= 30m

.PHONY: all
all: build

##@ Build

.PHONY: build
build: ## Build bin/msgbench.
	CGO_ENABLED=0 go build -trimpath -ldflags "$(LDFLAGS)" -o bin/msgbench ./cmd/msgbench

.PHONY: demo
demo: ## Install Mosquitto (where possible), build, and run a real benchmark locally.
	hack/demo.sh

##@ Code generation

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate deepcopy code.
	$(CONTROLLER_GEN) object:headerFile="" paths="./api/..."

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate the CRD and RBAC manifests from the Go markers.
	$(CONTROLLER_GEN) crd paths="./api/..." output:crd:artifacts:config=config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=msgbench-operator paths="./..." output:rbac:artifacts:config=config/rbac

.PHONY: verify-generated
verify-generated: ## Fail when a generated file is stale (regenerates it, so the fix is to commit).
	hack/verify-generated.sh

##@ Quality

.PHONY: fmt
fmt: ## gofmt every Go file.
	gofmt -s -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## go vet.
	go vet ./...

.PHONY: lint
lint: $(GOLANGCI_LINT) ## golangci-lint (pinned, built from the Go module proxy).
	$(GOLANGCI_LINT) run ./...

##@ Test

.PHONY: setup
setup: ## Install the Debian packages and build the Kubernetes binaries and tools the tests need.
	hack/apt-packages.sh
	hack/envtest-assets.sh >/dev/null
	hack/versitygw.sh >/dev/null
	hack/kafka.sh >/dev/null
	hack/artemis.sh >/dev/null
	hack/aioquic.sh >/dev/null
	hack/aedes.sh >/dev/null
	hack/mqttsn-python.sh >/dev/null
	hack/bisquitt.sh >/dev/null

# Tests that time round trips through emulated links run last and alone (-p 1): other test
# packages running beside them on a 2-core machine add scheduling delay to what they measure.
# They run without the race detector, which slows the code it instruments several times and would
# bend the delays they measure.
TIMING_PKGS := ./netem/emulator/ ./loadgen/drivers/http/roundtrip/

# Every other package runs under the race detector (-race), one package at a time (-p 1).
# Measured on the 2-core CI machine (docs/benchmarks.md#the-test-suite-under--race): one at a
# time, -race adds 29 % to the sum of the packages' wall times (683 s -> 880 s), so no package is
# left out for its cost. Two at a time (go test's default here) took 7 min instead of 14 but
# failed runs whose open-loop rate is checked as sustained (cmd/msgbench's cell-edge sample,
# controllers' and loadgen/drivers/kafka's Kafka runs: 8 of 10, 198 of 200, 492 of 500 msg/s),
# which each package passes alone under -race.
RACE_PKGS = $$(go list ./... | grep -v -e /netem/emulator -e /loadgen/drivers/http/roundtrip)
#
# The accepted-spec matrix (internal/manifest TestEveryAcceptedSpecRuns: every spec admission
# accepts must compile, deal its workers and render) is CPU-bound on every core: 170 s under -race
# against 30 s without. The -race pass checks every 8th spec (the race detector sees the decisions
# side by side); MATRIX_TEST checks them all without -race after it.
MATRIX_TEST := -run '^TestEveryAcceptedSpecRuns$$' ./internal/manifest/
#
# The packages and their tests are compiled first, two at a time, with `go list -export` (compile
# only: `go test -exec /bin/true` also linked every test binary, which the run links again, 29 s of
# 66 packages on the warm 2-core machine against 2.5 s). Compile errors show again in the run's
# log. The run leaves out go test's vet (-vet=off): `make vet`, a prerequisite of test, ran go vet's
# full set of analyzers (go test's is a subset) over the same files (none is built only with -race).

.PHONY: test
test: setup verify-generated vet lint ## The full test suite CI runs: generated files, vet, lint, go test -race with a real API server, brokers and browser.
	export KUBEBUILDER_ASSETS="$$(hack/envtest-assets.sh)"; \
	echo "compiling the tests (-race), two packages at a time; -p 1 would compile one at a time too"; \
	{ go list -export -test -deps -race $(RACE_PKGS) >/dev/null || true; } && \
	mkdir -p bin; \
	go test -race -vet=off -p 1 -count=1 -timeout $(TEST_TIMEOUT) $(RACE_PKGS) 2>&1 | tee bin/test.log && \
	go test -count=1 -timeout $(TEST_TIMEOUT) $(MATRIX_TEST) 2>&1 | tee -a bin/test.log && \
	go test -count=1 -p 1 -timeout $(TEST_TIMEOUT) $(TIMING_PKGS) 2>&1 | tee -a bin/test.log || \
	{ rc=$$?; hack/test-failures.sh bin/test.log; exit $$rc; }

# The inner loop leaves out the packages that need an API server (envtest), Kafka, Chromium or a
# quiet machine (the timing packages); cmd/msgbench needs several of them and takes 4-6 minutes.
# A package's tests that need an API server live in a package of their own, listed here
# (controllers/resources/serverside), so that the inner loop passes with no KUBEBUILDER_ASSETS and
# make test still runs them (RACE_PKGS is every package).
# What is left needs only Mosquitto (make setup installs it); tests that need root skip without it.
# hack/imagebuild builds broker images (a minute under -race). -short leaves out what make test
# covers at length: the honest-runs sweep, the radio and HTTP end-to-end runs, the TLS and
# wire-size figure runs, and all but every 8th spec of the accepted-spec matrix.
# Three packages at a time (UNIT_P): two at a time the inner loop used 1.1 of the 2 cores
# (223 CPU-s in 198 s; its packages mostly wait on runs against real brokers), three at a time
# 1.5 and 147-151 s instead of 190-198 s (docs/benchmarks.md). UNIT_P=2 is go test's default on
# 2 cores.
UNIT_FLAGS ?= -race -short
UNIT_P ?= 3
UNIT_EXCLUDE := /api/v1alpha1$$ /cmd/msgbench$$ /controllers$$ /test/chart$$ /results/store$$ /netem$$ \
	/netem/emulator$$ /loadgen/drivers/http/roundtrip$$ /loadgen/drivers/kafka$$ /brokers/kafka$$ \
	/brokers/rabbitmq$$ /brokers/artemis$$ /controllers/resources/serverside$$ /hack/imagebuild$$

.PHONY: test-unit
test-unit: ## The inner loop (no API server; 2 min 54 s measured on a 2-core machine beside other work, docs/benchmarks.md): the packages that need none, under -race -short. make test runs everything.
	go test $(UNIT_FLAGS) -p $(UNIT_P) -count=1 -timeout 10m $$(go list ./... | grep -v $(foreach p,$(UNIT_EXCLUDE),-e '$(p)'))

.PHONY: sweep
sweep: ## Every combination of the honest-runs sweep (protocol x network profile x connect ramp x stalled broker; root; ~4 min). go test runs a pairwise subset.
	MSGBENCH_SWEEP=full go test -race -count=1 -timeout 20m -run 'TestHonestRunsSweep' -v ./localrun/

.PHONY: bench
bench: ## Performance runs (not part of make test); numbers go to docs/benchmarks.md.
	go test -count=1 -run '^$$' -bench . -benchtime 1x -timeout 60m ./loadgen/
	go test -count=1 -run '^$$' -bench IdleConnectionMemory -benchtime 1x ./loadgen/drivers/mqtt/
	MSGBENCH_COMPARE=1 go test -count=1 -run TestCompareWithDirectMQTT -v -timeout 30m ./loadgen/drivers/mqttsn/
	hack/bench-metrics.sh
	hack/bench-brokers.sh
	hack/bench-fleet.sh
	$(MAKE) bench-http

.PHONY: bench-http
bench-http: ## msgbench's http driver side by side with wrk and h2load (HTTP/1.1), h2load (HTTP/2) and hack/h3load (HTTP/3) (docs/benchmarks-http.md).
	hack/bench-http.sh 8 10 256 1
	VERSION=2 hack/bench-http.sh 4 5 256 1
	VERSION=3 hack/bench-http.sh 4 5 256 1

.PHONY: bench-fleet
bench-fleet: ## The largest fleet of idle MQTT clients one local Mosquitto holds here, and a size series (docs/benchmarks.md, "Fleets").
	hack/bench-fleet.sh

##@ Packaging

.PHONY: images
images: ## Container images as docker-archive tarballs in bin/images/ (no engine or registry needed).
	VERSION=$(VERSION) COMMIT=$(COMMIT) hack/images.sh

.PHONY: helm-sync
helm-sync: ## Copy the generated CRD and ClusterRole rules into charts/msgbench (after make manifests).
	rm -f charts/msgbench/crds/*.yaml
	cp config/crd/bases/*.yaml charts/msgbench/crds/
	cp config/rbac/role.yaml charts/msgbench/files/role.yaml

.PHONY: helm-lint
helm-lint: ## helm lint and helm template of charts/msgbench (helm pinned, built from the Go module proxy).
	helm=$$(hack/helm.sh); $$helm lint --strict charts/msgbench && $$helm template msgbench charts/msgbench --namespace msgbench-system >/dev/null

.PHONY: helm-test
helm-test: ## Chart tests: in sync with config/, lint, schema, server-side dry run on a real API server, same as kustomize.
	export KUBEBUILDER_ASSETS="$$(hack/envtest-assets.sh)"; \
	go test -count=1 -v ./test/chart/

.PHONY: helm-package
helm-package: helm-sync ## Package the chart into bin/charts/.
	mkdir -p bin/charts
	helm=$$(hack/helm.sh); $$helm package charts/msgbench --destination bin/charts

##@ End to end

.PHONY: e2e
e2e: images ## Real single-node Kubernetes from package registries, msgbench from the chart, every sample and the fault runs (root; see docs/e2e.md).
	VERSION=$(VERSION) hack/e2e.sh

.PHONY: e2e-up
e2e-up: images ## Start the e2e node with msgbench installed and leave it running (hack/e2e-node.sh down stops it).
	hack/e2e-node.sh up

.PHONY: e2e-down
e2e-down: ## Stop the e2e node and clean up after it.
	hack/e2e-node.sh down

##@ Tools

$(CONTROLLER_GEN):
	mkdir -p $(TOOLS)
	GOBIN=$(TOOLS) go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)
	mv $(TOOLS)/controller-gen $@

$(GOLANGCI_LINT):
	mkdir -p $(TOOLS)
	GOBIN=$(TOOLS) go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(TOOLS)/golangci-lint $@

.PHONY: help
help: ## Show the targets.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z0-9_-]+:.*?##/ { printf "  %-18s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)
