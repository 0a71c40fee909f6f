package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/internal/manifest"
	"github.com/msgbench/msgbench/internal/testbin"
	"github.com/msgbench/msgbench/internal/testenv"
	"github.com/msgbench/msgbench/loadgen/drivers"
	"github.com/msgbench/msgbench/netem"
	"github.com/msgbench/msgbench/plan"
	"github.com/msgbench/msgbench/results"
	"github.com/msgbench/msgbench/results/report"
	"github.com/msgbench/msgbench/suite"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Remove()
	os.Exit(code)
}

// runnable reports whether this build can run a sample locally, and why not.
func runnable(mb *v1alpha1.MessagingBenchmark) (bool, string) {
	if mb.Spec.Broker.Type == v1alpha1.BrokerExternal {
		return false, "external broker address is a placeholder"
	}
	if mb.Spec.HTTP.Endpoint != nil {
		return false, "the HTTP endpoint's URL is a placeholder (TestHTTPEndpointOfYourOwn runs one)"
	}
	if !mb.Spec.Broker.Type.Local() {
		return false, string(mb.Spec.Broker.Type) + " runs on Kubernetes only (TestLocalBrokersRefuse checks the refusal)"
	}
	known := map[string]bool{}
	for _, p := range drivers.Protocols() {
		known[p] = true
	}
	if !known[string(mb.Spec.Protocol)] {
		return false, "no driver for " + string(mb.Spec.Protocol) + " in this build"
	}
	return true, ""
}

// TestEverySampleRunsLocally runs each top-level and network sample, and one point of every
// study suite (every point with MSGBENCH_ALL_SAMPLES=1: 124 runs more), through `msgbench run` with
// short overrides and checks the result: schema, received > 0, and no loss where the QoS and
// transport guarantee it.
func TestEverySampleRunsLocally(t *testing.T) {
	var files []string
	for _, dir := range []string{repo("config", "samples"), repo("config", "samples", "network"), repo("config", "samples", "fleets")} {
		fs, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
		files = append(files, fs...)
	}
	// Each reference study's suite: its quickest point (every point with MSGBENCH_ALL_SAMPLES=1),
	// written out as the MessagingBenchmark the suite would run.
	studies, _ := filepath.Glob(repo("config", "samples", "studies", "*.yaml"))
	for _, f := range studies {
		files = append(files, studyPoints(t, f, os.Getenv("MSGBENCH_ALL_SAMPLES") != "")...)
	}
	ran := 0
	// The samples the API server refuses by design must run here.
	localOnly := map[string]bool{}
	for name := range testenv.LocalOnlySamples {
		localOnly[name] = true
	}
	var runs []sampleRun
	for _, f := range files {
		if data, err := os.ReadFile(f); err == nil && manifest.Kind(data) == "MessagingBenchmarkSuite" {
			continue // a suite (broker-comparison.yaml): internal/manifest.TestSuiteSamples compiles its runs
		}
		mb, err := manifest.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ok, why := runnable(mb)
		if !ok {
			t.Logf("%s: skipped: %s", filepath.Base(f), why)
			continue
		}
		rel, _ := filepath.Rel(repo("config", "samples"), f)
		if strings.HasPrefix(rel, "..") { // a study suite's point, written out by studyPoints
			rel = "studies/" + filepath.Base(f)
		}
		runs = append(runs, sampleRun{name: rel, file: f, mb: mb, args: quickArgs(t, mb), weight: sampleWeight(mb)})
		ran++
		delete(localOnly, filepath.Base(f))
	}
	// The runs go side by side, each a process of its own (msgbenchProcess: a run's guardian is
	// one per process), most of them waiting on their schedule, warm-up or emulated link rather
	// than computing: at most 4 weights at a time, a JVM broker (Kafka, RabbitMQ, Artemis)
	// weighing 2, and the heaviest and longest started first. One after another they took over
	// 300 s of the package's time.
	sort.SliceStable(runs, func(i, j int) bool {
		if runs[i].weight != runs[j].weight {
			return runs[i].weight > runs[j].weight
		}
		return runs[i].mb.Spec.Impaired() && !runs[j].mb.Spec.Impaired() // seconds of connecting and warm-up
	})
	var tests []subtest
	for _, sr := range runs {
		tests = append(tests, subtest{sr.name, sr.weight, sr.run})
	}
	runSubtests(t, 4, tests)
	for name := range localOnly {
		t.Errorf("%s is local-only (internal/testenv.LocalOnlySamples) but did not run here", name)
	}
	if ran < 5 {
		t.Errorf("only %d samples ran", ran)
	}
}

// sampleRun is one run of TestEverySampleRunsLocally.
type sampleRun struct {
	name, file string
	mb         *v1alpha1.MessagingBenchmark
	args       []string // after "run -f file --out dir"
	weight     int
}

// sampleWeight is how much of the machine a sample's run takes: a JVM broker booting (Kafka,
// RabbitMQ, Artemis) keeps both cores busy for seconds; a run on Mosquitto or behind an emulated
// link mostly waits.
func sampleWeight(mb *v1alpha1.MessagingBenchmark) int {
	switch {
	case mb.Spec.Protocol == v1alpha1.ProtocolKafka, mb.Spec.Broker.Type == v1alpha1.BrokerRabbitMQ, mb.Spec.Broker.Type == v1alpha1.BrokerArtemis:
		return 2
	}
	return 1
}

// quickArgs are the overrides that make sample mb a quick run, the sample's point kept.
func quickArgs(t *testing.T, mb *v1alpha1.MessagingBenchmark) []string {
	t.Helper()
	// A hang fails this run with spec.timeout's message, not the whole package at go
	// test's deadline.
	args := []string{"-q", "--set", "timeout=5m"}
	w := mb.Spec.Workload
	if len(mb.Spec.Groups) > 0 {
		// A fleet's load is its groups': its window shortened, its groups' shape kept (a group
		// that joins late, a broadcast ending the run, still do).
		if w.Warmup.Duration > 0 {
			args = append(args, "--set", "workload.warmup=1s")
		}
		return append(args, "--set", "workload.duration=3s")
	}
	switch {
	case w.Messages > 0 && mb.Spec.Impaired():
		// Study 2 on NB-IoT (60/30 kbit/s): one message a publisher, and its one-a-second connect
		// ramp kept, since QUIC handshakes started together queue behind each other on
		// the slow downlink until their timers give up. At most two publishers, subscribers
		// and topics: each handshake takes seconds on that downlink (5 + 5 clients took
		// 45 s to connect, 2 + 2 take 13 s), and two of each still fan in and out.
		for field, n := range map[string]int32{"publishers": w.Publishers, "subscribers": w.Subscribers, "topics": w.Topics} {
			if n > 2 {
				args = append(args, "--set", "workload."+field+"=2")
			}
		}
		args = append(args, "--set", "workload.messages="+strconv.Itoa(int(min(w.Messages, int64(min(w.Publishers, 2))))))
	case w.Messages > 0:
		args = append(args, "--set", "workload.messages="+strconv.Itoa(int(min(w.Messages, 40))))
	case mb.Spec.Impaired():
		// Long links (NB-IoT: 600 ms RTT) take seconds to connect before publishing; short
		// ones (wifi, lte, 5g: RTT up to 100 ms) connect in a few hundred ms, and 3 s of
		// warm-up there was 2 s of waiting. Timelines and radio states keep 3 s: their
		// steps are timed from the start.
		args = append(args, "--set", "workload.warmup="+warmupFor(t, mb).String(), "--set", "workload.duration=2s")
	case w.DutyCycle != nil: // a wake of every device, then the next
		args = append(args, "--set", "workload.warmup=0s", "--set", "workload.duration="+(w.DutyCycle.Period.Duration+time.Second/2).String())
	case w.ReconnectStorm != nil: // the storm inside the shortened run
		args = append(args, "--set", "workload.warmup=500ms", "--set", "workload.duration=2s", "--set", "workload.reconnectStorm.at=1s")
	default:
		args = append(args, "--set", "workload.warmup=200ms", "--set", "workload.duration=1s")
	}
	if n := mb.Spec.Workload.Subscribers; n > 100 {
		// study 3's 1,000 clients stay in the study; a quick run keeps the shape with fewer
		args = append(args, "--set", "workload.subscribers=100")
	}
	switch {
	case lossyRetransmitting(t, mb) && mb.Spec.Workload.Rate > 0 && mb.Spec.Workload.Messages == 0:
		// On a lossy link a QoS 1/2 sender waits out a retransmission timer for each lost
		// packet (cell-edge: 1 s on a 120 ms link), so within this test's 2 s window one
		// loss near its end leaves a publisher's next messages unsent and the open-loop
		// rate "not sustained" — a true verdict, in roughly a third of the runs (CI saw it).
		// The sample's point here, nothing lost through the retransmissions, holds in a
		// closed loop, which has no schedule to miss.
		args = append(args, "--set", "workload.rate=0")
	case w.DutyCycle != nil:
		// the duty cycle sets the rate (workload.rate is refused with it)
	case mb.Spec.Impaired() && mb.Spec.Workload.Rate > 0:
		// the sample's rate is what its link carries; more would be refused as not sustained
	case mb.Spec.Workload.Rate > 0 || mb.Spec.Workload.Messages == 0:
		// At most 500 msg/s: with this quick run's 200 ms warm-up a JVM broker is still
		// cold (broker-artemis at its 2,000 msg/s QoS 2 sent 961 of 2,000 in CI, Failed
		// now that a slow acknowledgement no longer widens the unsent allowance); the
		// sample's own rate is for its own 5 s warm-up.
		// A JVM broker (Artemis, RabbitMQ) at most 200 msg/s: cold, on a busy machine,
		// broker-artemis's QoS 2 sent 334 and 210 of 500 in 1 s (Failed, not sustained), alone
		// and beside other runs; this run checks the sample runs and delivers, not the rate.
		limit := int32(500)
		if bt := mb.Spec.Broker.Type; bt == v1alpha1.BrokerArtemis || bt == v1alpha1.BrokerRabbitMQ {
			limit = 200
		}
		args = append(args, "--set", "workload.rate="+strconv.Itoa(int(min(max(mb.Spec.Workload.Rate, 50), limit))))
	}
	return args
}

// run runs the sample through `msgbench run` and checks its result.
func (sr sampleRun) run(t *testing.T) {
	out := t.TempDir()
	args := append([]string{"run", "-f", sr.file, "--out", out}, sr.args...)
	var env []string
	if os := sr.mb.Spec.Results.ObjectStore; os != nil && strings.HasPrefix(os.URL, "s3://") {
		// The sample's endpoint is a cluster Service, refused locally: a local S3 server
		// with the sample's bucket stands in, and the upload must succeed.
		bucket, _, _ := strings.Cut(strings.TrimPrefix(os.URL, "s3://"), "/")
		s3 := startS3(t, bucket)
		args = append(args, "--set", "results.objectStore.endpoint="+s3.Endpoint)
		env = s3Env(s3)
	}
	// Past spec.timeout (5 m) the run ends itself; this is for a run that cannot.
	output, err := msgbenchProcess(t, 6*time.Minute, env, args...)
	if err != nil {
		t.Fatalf("%v\n%s", err, output)
	}
	r, err := results.ReadFile(filepath.Join(out, sr.mb.Name, "latest", "result.json"))
	if err != nil {
		t.Fatalf("%v\n%s", err, output)
	}
	checkSanity(t, r)
	if _, err := os.Stat(filepath.Join(out, sr.mb.Name, "latest", "report.html")); err != nil {
		t.Error(err)
	}
	if t.Failed() {
		t.Logf("msgbench's output:\n%s", output)
	}
}

// warmupFor is the quick run's warm-up on mb's emulated link: 1 s where the round trip is at
// most 100 ms and the link stays as it is, 3 s otherwise.
func warmupFor(t *testing.T, mb *v1alpha1.MessagingBenchmark) time.Duration {
	t.Helper()
	link, err := netem.Resolve(mb.Spec.Network)
	if err != nil {
		t.Fatal(err)
	}
	rtt := link.Up.Delay + link.Up.Jitter + link.Down.Delay + link.Down.Jitter
	if rtt > 100*time.Millisecond || len(mb.Spec.Network.Timeline) > 0 || mb.Spec.Network.Radio != nil {
		return 3 * time.Second
	}
	return time.Second
}

// lossyRetransmitting reports whether mb's emulated link drops packets and its QoS retransmits
// them.
func lossyRetransmitting(t *testing.T, mb *v1alpha1.MessagingBenchmark) bool {
	t.Helper()
	if !mb.Spec.Impaired() || mb.Spec.QoS < 1 {
		return false
	}
	link, err := netem.Resolve(mb.Spec.Network)
	if err != nil {
		t.Fatal(err)
	}
	return link.Up.Loss > 0 || link.Down.Loss > 0
}

// studyPoints writes a study suite's points as MessagingBenchmark files: all of them, or only
// the one that moves the fewest bytes (the smallest payload, then the fewest clients), so the
// quick test of a study stays quick on its link.
func studyPoints(t *testing.T, file string, all bool) []string {
	t.Helper()
	doc, err := manifest.ReadSuiteDoc(file)
	if err != nil {
		t.Fatal(err)
	}
	points, err := suite.Expand(doc.Suite, doc.Template)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var files []string
	best, bestKey := "", [2]int32{}
	for _, p := range points {
		mb, err := suite.Benchmark(doc.Suite, doc.Template, p, 1)
		if err != nil {
			t.Fatal(err)
		}
		obj, _ := suite.Manifest(doc.Suite, doc.Template, p, 1)
		data, err := yaml.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, mb.Name+".yaml")
		if err := os.WriteFile(f, data, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		w := mb.Spec.Workload
		key := [2]int32{w.PayloadBytes, w.Publishers + w.Subscribers}
		// Ties go to the name first in order (as the old one-file-per-point glob did): study 2's
		// HTTP/3 point before MQTT over QUIC, whose connects on NB-IoT with 2 % loss sometimes
		// fail under -race: the gateway closes a session whose stream has not come in 30 s).
		if best == "" || key[0] < bestKey[0] || (key[0] == bestKey[0] && (key[1] < bestKey[1] || (key[1] == bestKey[1] && f < best))) {
			best, bestKey = f, key
		}
	}
	if all {
		return files
	}
	return []string{best}
}

func checkSanity(t *testing.T, r *results.Result) {
	t.Helper()
	if r.Kind != results.Kind || r.APIVersion != results.APIVersion || r.Spec == nil || r.Phase != "Succeeded" || r.Environment.Mode != "local" {
		t.Errorf("result header: %+v", r)
	}
	if r.Received == 0 || r.Sent == 0 || r.MeasuredSeconds <= 0 || r.Environment.Broker == "" {
		t.Errorf("nothing measured: sent %d received %d measured %v broker %q", r.Sent, r.Received, r.MeasuredSeconds, r.Environment.Broker)
	}
	// The environment says on what it ran and what was spoken, TLS as negotiated (MQTT-SN's
	// clients speak plain UDP to the gateway).
	e := r.Environment
	compiled, err := plan.Compile(r.Spec, plan.Admitted)
	if err != nil {
		t.Fatalf("the result's spec: %v", err)
	}
	want := compiled.Groups[0].ProtocolLabel()
	if e.Protocol != want || e.CPUModel == "" || e.Kernel == "" || e.CPUs == 0 || e.MsgbenchCommit == "" {
		t.Errorf("environment %+v: want protocol %q and the machine and build", e, want)
	}
	encrypted := r.Spec.Protocol != v1alpha1.ProtocolMQTTSN && (r.Spec.BrokerTLS() || (r.Spec.GatewayMode() != "" && r.Spec.GatewayTLS()))
	if wantVersion := "TLS " + r.Spec.ClientTLSVersion(); encrypted && (e.TLSVersion != wantVersion || e.TLSGroup == "") || !encrypted && e.TLSVersion != "" {
		t.Errorf("TLS recorded %q %q; encrypted %v, want %s", e.TLSVersion, e.TLSGroup, encrypted, wantVersion)
	}
	tcp := r.Spec.Protocol != v1alpha1.ProtocolMQTTSN
	guaranteed := r.Spec.QoS >= 1 || (tcp && !r.Spec.Impaired())
	if guaranteed && (r.Lost == nil || *r.Lost != 0) {
		t.Errorf("lost %v at QoS %d over %s", r.Lost, r.Spec.QoS, r.Spec.Protocol)
	}
	if r.Spec.QoS == 2 && r.Duplicates != nil && *r.Duplicates != 0 {
		t.Errorf("%d duplicates at QoS 2", *r.Duplicates)
	}
	var tl int64
	for _, p := range r.Timeline {
		tl += p.Received
	}
	if tl != r.Received {
		t.Errorf("timeline sums to %d, received %d", tl, r.Received)
	}
}

// TestRunFailsClearly: each failure ends with a message naming the cause and a non-zero exit,
// and leaves no broker process behind.
func TestRunFailsClearly(t *testing.T) {
	bin := testbin.Msgbench(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	port := busy.Addr().(*net.TCPAddr).Port
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	_ = os.WriteFile(bad, []byte("apiVersion: msgbench.io/v1alpha1\nkind: MessagingBenchmark\nmetadata: {name: bad}\nspec: {protocol: mqtt, qos: 5}\n"), 0o644)
	sample := repo("config", "samples", "mqtt-qos0.yaml")
	for _, tc := range []struct {
		name string
		args []string
		env  []string
		want string
	}{
		{"malformed manifest", []string{"run", "-f", bad}, nil, "spec.qos"},
		{"missing file", []string{"run", "-f", "/nonexistent/x.yaml"}, nil, "/nonexistent/x.yaml"},
		{"no broker, no fallback", []string{"run", "-f", sample, "--no-embedded-broker"}, []string{mosquitto.BinaryEnv + "=/nonexistent/mosquitto"}, "mosquitto is not installed"},
		{"port busy", []string{"run", "-f", sample, "--broker-port", strconv.Itoa(port)}, nil, fmt.Sprintf("port %d is busy", port)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := brokerProcesses(t)
			cmd := exec.Command(bin, append(tc.args, "-q", "--out", t.TempDir(), "--set", "workload.duration=1s")...)
			cmd.Env = append(os.Environ(), tc.env...)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("exit 0, want failure:\n%s", out)
			}
			if !strings.Contains(string(out), tc.want) {
				t.Errorf("output lacks %q:\n%s", tc.want, out)
			}
			if after := brokerProcesses(t); after > before {
				t.Errorf("%d broker processes left behind", after-before)
			}
		})
	}
}

// TestEmbeddedBrokerFallback runs without Mosquitto: the embedded broker serves, and the
// result names it.
func TestEmbeddedBrokerFallback(t *testing.T) {
	t.Setenv(mosquitto.BinaryEnv, "/nonexistent/mosquitto")
	out := t.TempDir()
	if _, err := msgbench(t, "run", "-f", repo("config", "samples", "mqtt-qos2.yaml"), "--out", out, "-q", "--set", "workload.duration=1s", "--set", "workload.warmup=0s"); err != nil {
		t.Fatal(err)
	}
	r, err := results.ReadFile(filepath.Join(out, "mqtt-qos2", "latest", "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Environment.Broker, "embedded mochi-mqtt") {
		t.Errorf("broker %q does not say it is the embedded one", r.Environment.Broker)
	}
	checkSanity(t, r)
}

// TestInterruptLeavesNothingBehind sends SIGINT in the middle of a run.
func TestInterruptLeavesNothingBehind(t *testing.T) {
	bin := testbin.Msgbench(t)
	cmd := exec.Command(bin, "run", "-f", repo("config", "samples", "mqtt-qos1.yaml"), "--out", t.TempDir(), "--set", "workload.duration=30s")
	var stderr bytes.Buffer
	pr, pw, _ := os.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	pidRe := regexp.MustCompile(`\(pid (\d+)\)`)
	brokerPID := 0
	sc := bufio.NewScanner(pr)
	deadline := time.AfterFunc(20*time.Second, func() { _ = cmd.Process.Kill() })
	defer deadline.Stop()
	for sc.Scan() {
		line := sc.Text()
		stderr.WriteString(line + "\n")
		if m := pidRe.FindStringSubmatch(line); m != nil {
			brokerPID, _ = strconv.Atoi(m[1])
		}
		if strings.Contains(line, "Measuring") || strings.Contains(line, "Warmup") {
			break
		}
	}
	if brokerPID == 0 {
		t.Fatalf("no broker pid in the log:\n%s", stderr.String())
	}
	time.Sleep(500 * time.Millisecond)
	_ = cmd.Process.Signal(os.Interrupt)
	go func() {
		for sc.Scan() {
			stderr.WriteString(sc.Text() + "\n")
		}
	}()
	err := cmd.Wait()
	if err == nil {
		t.Fatal("exit 0 after SIGINT")
	}
	time.Sleep(100 * time.Millisecond)
	if syscall.Kill(brokerPID, 0) == nil {
		t.Errorf("broker pid %d still runs after the interrupt", brokerPID)
	}
}

// brokerProcesses counts Mosquitto processes this package's runs started (their config lives in
// a msgbench-mosquitto- folder).
func brokerProcesses(t *testing.T) int {
	t.Helper()
	out, _ := exec.Command("pgrep", "-f", "msgbench-mosquitto-").Output()
	return len(strings.Fields(string(out)))
}

// TestReportInHeadlessBrowser opens a run's report.html in Debian's Chromium: it must load
// without console errors, and a screenshot must show the charts (coloured lines and bars).
func TestReportInHeadlessBrowser(t *testing.T) {
	out := t.TempDir()
	if _, err := msgbench(t, "run", "-f", repo("config", "samples", "mqtt-qos1.yaml"), "--out", out, "-q", "--set", "workload.duration=2s", "--set", "workload.warmup=0s"); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(out, "mqtt-qos1", "latest", "report.html")
	browse(t, page)
	data, _ := os.ReadFile(page)
	for _, id := range []string{`id="throughput"`, `id="latency"`, `id="delivery"`, `id="wire"`, "<svg"} {
		if !bytes.Contains(data, []byte(id)) {
			t.Errorf("report lacks %s", id)
		}
	}
}

// browse opens page in Debian's Chromium at 1400 px: it must load without console errors, and a
// screenshot must show the figures (coloured lines and bars).
func browse(t *testing.T, page string) {
	t.Helper()
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium not installed: run hack/apt-packages.sh (Debian package chromium)")
	}
	shot := filepath.Join(t.TempDir(), "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--user-data-dir="+t.TempDir(),
		"--enable-logging=stderr", "--v=0", "--window-size=1400,3000", "--screenshot="+shot, "file://"+page)
	logs, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, logs)
	}
	for _, line := range strings.Split(string(logs), "\n") {
		if strings.Contains(line, "CONSOLE") && (strings.Contains(line, "Uncaught") || strings.Contains(line, "Error")) {
			t.Errorf("browser console: %s", line)
		}
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	// Figures are drawn in colour; text and tables are grey. Count strongly coloured pixels.
	colored := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			hi, lo := max(r, g, bl)>>8, min(r, g, bl)>>8
			if hi-lo > 80 {
				colored++
			}
		}
	}
	if colored < 2000 {
		t.Errorf("screenshot has %d coloured pixels: the figures did not render", colored)
	}
}

// TestReportComparesRuns runs a small grid (clients × QoS) and compares it: the page has the
// study charts and every chart is written as PNG and SVG.
func TestReportComparesRuns(t *testing.T) {
	out := t.TempDir()
	// The four runs side by side, each a process of its own (msgbenchProcess), each into its
	// own folder: the comparison reads their results, not when they ran.
	var runs []subtest
	for _, pubs := range []string{"1", "2"} {
		for _, qos := range []string{"0", "1"} {
			runs = append(runs, subtest{name: "p" + pubs + "q" + qos, f: func(t *testing.T) {
				output, err := msgbenchProcess(t, 2*time.Minute, nil, "run", "-f", repo("config", "samples", "mqtt-qos0.yaml"), "--out", filepath.Join(out, "p"+pubs+"q"+qos), "-q",
					"--set", "workload.duration=1s", "--set", "workload.warmup=0s", "--set", "workload.rate=200",
					"--set", "qos="+qos, "--set", "workload.publishers="+pubs, "--set", "workload.subscribers="+pubs, "--set", "workload.topics="+pubs)
				if err != nil {
					t.Fatalf("%v\n%s", err, output)
				}
			}})
		}
	}
	runSubtests(t, 4, runs)
	if t.Failed() {
		t.FailNow()
	}
	dir := filepath.Join(t.TempDir(), "cmp")
	stdout, err := msgbench(t, "report", out, "--out", dir, "--images")
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="receivedPerSecond-by-clients"`, `class="study"`, "QoS 0", "QoS 1", "Latency percentiles", "<details><summary>Spec of "} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("comparison lacks %s", want)
		}
	}
	for _, ext := range []string{"png", "svg", "pdf", "csv"} {
		if _, err := os.Stat(filepath.Join(dir, "receivedPerSecond-by-clients."+ext)); err != nil {
			t.Errorf("%v (written: %s)", err, stdout)
		}
	}
	f, err := os.Open(filepath.Join(dir, "receivedPerSecond-by-clients.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if img, err := png.Decode(f); err != nil || img.Bounds().Dx() < 400 {
		t.Errorf("PNG figure: %v", err)
	}
	csv, _ := os.ReadFile(filepath.Join(dir, "receivedPerSecond-by-clients.csv"))
	if lines := strings.Split(strings.TrimSpace(string(csv)), "\n"); len(lines) != 5 || !strings.HasPrefix(lines[1], "QoS 0,1,") || !strings.HasPrefix(lines[2], "QoS 0,2,") {
		t.Errorf("CSV:\n%s\nwant a header and QoS 0 at 1 and 2 clients, then QoS 1", csv)
	}
	browse(t, filepath.Join(dir, "report.html"))
}

// TestReportBaselineCatchesASlowerBroker: a run whose broker answers 40 ms later (the same
// benchmark behind an emulated link) is a regression against the plain run: exit status 3 and
// the latency named; the plain run against itself passes.
func TestReportBaselineCatchesASlowerBroker(t *testing.T) {
	out := t.TempDir()
	// Both runs side by side, each a process of its own (msgbenchProcess): 40 ms of round trip
	// against well under a millisecond on a quiet loopback leaves the other run's load far from
	// the 10 % threshold.
	run := func(name string, set ...string) subtest {
		return subtest{name: name, f: func(t *testing.T) {
			args := append([]string{"run", "-f", repo("config", "samples", "mqtt-qos1.yaml"), "--out", out, "-q", "--name", name,
				"--set", "workload.duration=2s", "--set", "workload.warmup=0s", "--set", "workload.rate=100"}, set...)
			if output, err := msgbenchProcess(t, 2*time.Minute, nil, args...); err != nil {
				t.Fatalf("%v\n%s", err, output)
			}
		}}
	}
	runSubtests(t, 2, []subtest{run("base"), run("slow", "--set", "network.profile=custom", "--set", "network.delay=20ms")})
	if t.Failed() {
		t.FailNow()
	}
	base, slow := filepath.Join(out, "base", "latest"), filepath.Join(out, "slow", "latest")
	rdir := filepath.Join(t.TempDir(), "r")
	stdout, err := msgbench(t, "report", slow, "--baseline", base, "--threshold", "10%", "--out", rdir)
	var exit interface{ ExitCode() int }
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("slower broker: %v, want exit status 3\n%s", err, stdout)
	}
	if !strings.Contains(stdout, "latency.endToEnd.p50") || !strings.Contains(stdout, "REGRESSION") || !strings.Contains(stdout, "no test (1 and 1 runs)") {
		t.Errorf("output does not name the regression and say no test was possible:\n%s", stdout)
	}
	var cmp report.Comparison
	if data, err := os.ReadFile(filepath.Join(rdir, "comparison.json")); err != nil || json.Unmarshal(data, &cmp) != nil || cmp.Regressions() == 0 || cmp.Baseline != base {
		t.Errorf("comparison.json: %v, %+v", err, cmp)
	}
	if stdout, err := msgbench(t, "report", base, "--baseline", base, "--out", filepath.Join(t.TempDir(), "r")); err != nil {
		t.Errorf("a run against itself: %v\n%s", err, stdout)
	}
	if _, err := msgbench(t, "report", base, "--baseline", base, "--threshold", "ten"); err == nil {
		t.Error("--threshold ten accepted")
	}
}

// localS3 starts a local S3 server with bucket for one test and points the AWS credentials
// variables (read by msgbench run) at it.
func localS3(t *testing.T, bucket string) *testenv.S3 {
	t.Helper()
	s3 := startS3(t, bucket)
	for _, kv := range s3Env(s3) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	return s3
}

// startS3 starts a local S3 server with bucket for one test.
func startS3(t *testing.T, bucket string) *testenv.S3 {
	t.Helper()
	s3, err := testenv.StartS3(bucket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s3.Stop() })
	return s3
}

// s3Env is the environment that gives msgbench run the credentials of s3.
func s3Env(s3 *testenv.S3) []string {
	return []string{"AWS_ACCESS_KEY_ID=" + s3.AccessKeyID, "AWS_SECRET_ACCESS_KEY=" + s3.SecretAccessKey}
}
