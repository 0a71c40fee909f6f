package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/msgbench/msgbench/internal/testbin"
	"github.com/msgbench/msgbench/results"
	"github.com/msgbench/msgbench/results/stats"
	"github.com/msgbench/msgbench/suite"
)

const localSuite = `apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmarkSuite
metadata:
  name: local
spec:
  template:
    protocol: mqtt
    workload: {payloadBytes: 64, rate: 100, duration: 1s, warmup: 0s}
  matrix:
    axes:
    - field: qos
      values: [0, 1]
    - name: clients
      fields: [workload.publishers, workload.subscribers, workload.topics]
      values: [1, 2]
    exclude:
    - {qos: 0, clients: 2}
  repetitions: 2
  order: interleaved
  seed: 7
  objectives: ["lost == 0", "latency.endToEnd.p99 <= 1s"]
`

func writeSuite(t *testing.T, text string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "suite.yaml")
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestSuiteRunsLocally runs a 3-point suite twice over: every run kept, in the seed's order,
// suite.json's statistics equal to those recomputed from the kept results, the verdict, and a
// missed objective making the exit status non-zero.
func TestSuiteRunsLocally(t *testing.T) {
	// The same objectives, one impossible, one repetition (--repetitions), QoS 0 only (one
	// point: the other two would be two more runs proving nothing more): the suite measures
	// correctly and exits non-zero. It runs beside the suite below, as a process of its own
	// (msgbenchProcess), into a folder of its own.
	missed := strings.Replace(localSuite, `"latency.endToEnd.p99 <= 1s"`, `"latency.endToEnd.p99 <= 1us"`, 1)
	missed = strings.Replace(missed, "values: [0, 1]", "values: [0]", 1)
	missedFile, missedOut := writeSuite(t, missed), t.TempDir()
	type outcome struct {
		output string
		err    error
	}
	missedDone := make(chan outcome, 1)
	go func() {
		output, err := msgbenchProcess(t, 3*time.Minute, nil, "run", "-f", missedFile, "--out", missedOut, "-q", "--repetitions", "1", "--json")
		missedDone <- outcome{output, err}
	}()
	checkMissed := func() {
		m := <-missedDone
		if m.err == nil || !strings.Contains(m.output, "missed its objectives") || !strings.Contains(m.output, `"verdict": "Missed"`) || !strings.Contains(m.output, `"total": 1`) {
			t.Errorf("a missed objective, one repetition: err %v\n%s", m.err, m.output)
		}
	}
	defer checkMissed()
	out := t.TempDir()
	stdout, err := msgbench(t, "run", "-f", writeSuite(t, localSuite), "--out", out, "-q")
	if err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	dir := filepath.Join(out, "local", "latest")
	data, err := os.ReadFile(filepath.Join(dir, "suite.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d suite.Document
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	if d.Runs.Total != 6 || d.Runs.Succeeded != 6 || d.Verdict != suite.VerdictPassed || d.Seed == nil || *d.Seed != 7 || len(d.Points) != 3 {
		t.Fatalf("suite.json: runs %+v verdict %s seed %v points %d", d.Runs, d.Verdict, d.Seed, len(d.Points))
	}
	for _, p := range d.Points {
		var kept []*results.Result
		for rep := 1; rep <= 2; rep++ {
			r, err := results.ReadFile(filepath.Join(dir, p.Name, "r"+strconv.Itoa(rep), "result.json"))
			if err != nil {
				t.Fatalf("point %s: %v", p.Name, err)
			}
			kept = append(kept, r)
		}
		// Recomputed from the kept results alone: the mean, and the p99 pooled from their histograms.
		var rates []float64
		for _, r := range kept {
			rates = append(rates, r.Throughput.ReceivedPerSecond)
		}
		want := stats.Point(kept)
		got := p.Stats.Figures["throughput.receivedPerSecond"]
		if p.Stats == nil || p.Stats.Runs != 2 || math.Abs(got.Mean-(rates[0]+rates[1])/2) > 1e-9 || got.N != 2 {
			t.Errorf("point %s: receivedPerSecond %+v, recomputed mean of %v", p.Name, got, rates)
		}
		if a, b := p.Stats.Figures["latency.endToEnd.p99"].Pooled, want.Figures["latency.endToEnd.p99"].Pooled; a == nil || b == nil || *a != *b {
			t.Errorf("point %s: pooled p99 %v, recomputed %v", p.Name, a, b)
		}
		if p.ObjectivesMet == nil || !*p.ObjectivesMet || len(p.Objectives) != 2 {
			t.Errorf("point %s: objectives %+v", p.Name, p.Objectives)
		}
	}
	if !strings.Contains(stdout, "verdict Passed") || !strings.Contains(stdout, "qos1-clients2") {
		t.Errorf("summary:\n%s", stdout)
	}
	// The suite's report: the study's figure (received/s by clients, a line per QoS) with its CSV.
	page, _ := os.ReadFile(filepath.Join(dir, "report.html"))
	csv, _ := os.ReadFile(filepath.Join(dir, "receivedPerSecond-by-clients.csv"))
	if !strings.Contains(string(page), `<figure id="receivedPerSecond-by-clients" class="study">`) || !strings.HasPrefix(string(csv), "series,clients (publishers = subscribers),") {
		t.Errorf("the suite's report lacks its figure, or its CSV:\n%s", csv)
	}
	browse(t, filepath.Join(dir, "report.html"))
}

// TestSuiteRefusesBeforeStarting: a point the template cannot take is refused before any run,
// naming the point, and nothing is written.
func TestSuiteRefusesBeforeStarting(t *testing.T) {
	out := t.TempDir()
	bad := strings.Replace(localSuite, "values: [0, 1]", "values: [0, -1]", 1)
	_, err := msgbench(t, "run", "-f", writeSuite(t, bad), "--out", out, "-q")
	if err == nil || !strings.Contains(err.Error(), "qos=-1") || !strings.Contains(err.Error(), "spec.qos") {
		t.Errorf("err %v", err)
	}
	for _, args := range [][]string{
		{"-f", writeSuite(t, localSuite), "--repetitions", "0"},
		{"-f", writeSuite(t, localSuite), "--repetitions", "1001"},
		{"-f", repo("config", "samples", "mqtt-qos1.yaml"), "--repetitions", "2"},
	} {
		if _, err := msgbench(t, append(append([]string{"run"}, args...), "--out", out, "-q")...); err == nil || !strings.Contains(err.Error(), "--repetitions") {
			t.Errorf("%v: %v, want a refusal naming --repetitions", args, err)
		}
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("%s holds %d entries after a refusal", out, len(entries))
	}
}

// TestSuiteInterruptKeepsFinishedRuns: Ctrl-C during the second run stops it and everything it
// started, exits non-zero, and suite.json keeps the first run, marked interrupted.
func TestSuiteInterruptKeepsFinishedRuns(t *testing.T) {
	bin := testbin.Msgbench(t)
	out := t.TempDir()
	// A first run of 1 s to keep, then one of 20 s to interrupt (a 20 s first run made the test
	// wait 20 s for nothing).
	f := writeSuite(t, `apiVersion: msgbench.io/v1alpha1
kind: MessagingBenchmarkSuite
metadata:
  name: local
spec:
  template:
    protocol: mqtt
    workload: {payloadBytes: 64, rate: 100, warmup: 0s}
  matrix:
    axes:
    - field: workload.duration
      values: [1s, 20s]
  order: sequential
`)
	cmd := exec.Command(bin, "run", "-f", f, "--out", out, "-q")
	pr, pw, _ := os.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	var log bytes.Buffer
	pidRe := regexp.MustCompile(`\(pid (\d+)\)`)
	brokerPID := 0
	sc := bufio.NewScanner(pr)
	deadline := time.AfterFunc(60*time.Second, func() { _ = cmd.Process.Kill() })
	defer deadline.Stop()
	for sc.Scan() {
		line := sc.Text()
		log.WriteString(line + "\n")
		if m := pidRe.FindStringSubmatch(line); m != nil && strings.Contains(log.String(), "[2/2 ") {
			brokerPID, _ = strconv.Atoi(m[1])
			break
		}
	}
	time.Sleep(time.Second)
	_ = cmd.Process.Signal(os.Interrupt)
	go func() {
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
		}
	}()
	if err := cmd.Wait(); err == nil {
		t.Fatalf("exit 0 after SIGINT:\n%s", log.String())
	}
	time.Sleep(100 * time.Millisecond)
	if brokerPID == 0 || syscall.Kill(brokerPID, 0) == nil {
		t.Errorf("the second run's broker (pid %d) still runs after the interrupt:\n%s", brokerPID, log.String())
	}
	data, err := os.ReadFile(filepath.Join(out, "local", "latest", "suite.json"))
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	var d suite.Document
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	if !d.Interrupted || d.Runs.Succeeded != 1 || d.Runs.Failed != 0 {
		t.Errorf("suite.json after the interrupt: interrupted %v runs %+v", d.Interrupted, d.Runs)
	}
}
