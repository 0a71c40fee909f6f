package main

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/msgbench/msgbench/results"
)

// TestRunChecksBeforeStarting: what can be checked is checked before anything starts, so a long
// run is not lost at its end (--out /proc/nope used to fail after the run; a cluster-only
// object-store endpoint was looked up through this machine's resolver after it, and its failure
// printed as a log line under "Succeeded").
func TestRunChecksBeforeStarting(t *testing.T) {
	sample := repo("config", "samples", "mqtt-qos1.yaml")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unwritable out", []string{"-f", sample, "--out", "/proc/nope"}, "--out /proc/nope"},
		{"cluster-only endpoint", []string{"-f", repo("config", "samples", "mqtt-two-workers-objectstore.yaml")}, "minio.minio.svc is a Kubernetes Service name"},
		{"cluster-only broker", []string{"-f", repo("config", "samples", "mqtt-external-broker.yaml")}, "spec.broker.external.address: mosquitto.mqtt.svc.cluster.local is a Kubernetes Service name"},
		{"remote endpoint", []string{"-f", sample, "--set", "results.objectStore.url=s3://bucket/x", "--set", "results.objectStore.endpoint=https://s3.example.com"}, "not a name of this machine"},
		{"external broker behind an emulated link", []string{"-f", repo("config", "samples", "mqtt-external-broker.yaml"), "--set", "broker.external.address=127.0.0.1:1",
			"--set", "network.profile=lte", "--set", "network.direction=to"}, "reach only what it starts"},
		{"kafka replicas", []string{"-f", repo("config", "samples", "kafka-acks1.yaml"), "--set", "kafka.replicas=3"}, "spec.kafka.replicas"},
		{"AWS S3", []string{"-f", sample, "--set", "results.objectStore.url=s3://bucket/x"}, "which means AWS S3"},
		{"no S3 server", []string{"-f", sample, "--set", "results.objectStore.url=s3://bucket/x", "--set", "results.objectStore.endpoint=http://127.0.0.1:1"}, "connection refused"},
		{"unwritable file store", []string{"-f", sample, "--set", "results.objectStore.url=file:///proc/nope"}, "spec.results.objectStore.url"},
		{"bad run id", []string{"-f", sample, "--run-id", "a/b"}, "--run-id"},
		{"bad name", []string{"-f", sample, "--name", "Not_A_Name"}, "--name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			args := append([]string{"run", "-q", "--set", "workload.duration=30s"}, tc.args...)
			if !contains(tc.args, "--out") {
				args = append(args, "--out", t.TempDir())
			}
			_, err := msgbench(t, args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v; want one naming %q", err, tc.want)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("refused after %s: the run started first", took)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestRunsAreKept: a second run of a sample gets its own folder (it used to overwrite
// results/<name>/), latest points at the newest, --name and --run-id name them, and a --run-id
// that exists is refused unless --force.
func TestRunsAreKept(t *testing.T) {
	out := t.TempDir()
	quick := []string{"-q", "--out", out, "--set", "workload.duration=1s", "--set", "workload.warmup=0s", "-f", repo("config", "samples", "mqtt-qos0.yaml")}
	run := func(extra ...string) error {
		_, err := msgbench(t, append(append([]string{"run"}, quick...), extra...)...)
		return err
	}
	if err := run("--name", "kept", "--run-id", "one"); err != nil {
		t.Fatal(err)
	}
	if err := run("--name", "kept"); err != nil {
		t.Fatal(err)
	}
	runs, _ := filepath.Glob(filepath.Join(out, "kept", "*", "result.json"))
	if len(runs) != 3 { // one, the timestamped run, and latest
		t.Fatalf("result files %v; want two runs and latest", runs)
	}
	first, err := results.ReadFile(filepath.Join(out, "kept", "one", "result.json"))
	if err != nil || first.Name != "kept" || first.RunID != "one" {
		t.Fatalf("first run: %+v, %v", first, err)
	}
	latest, _ := os.Readlink(filepath.Join(out, "kept", "latest"))
	if latest == "one" || latest == "" {
		t.Errorf("latest -> %q; want the second run", latest)
	}
	if err := run("--name", "kept", "--run-id", "one"); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("re-using --run-id one: %v; want a refusal mentioning --force", err)
	}
	if err := run("--name", "kept", "--run-id", "one", "--force"); err != nil {
		t.Errorf("--force: %v", err)
	}
}

// TestUploadFailureFailsTheRun: results that were asked to be stored and were not make the run
// end non-zero, the local files kept (it printed the failure as a log line and exited 0).
func TestUploadFailureFailsTheRun(t *testing.T) {
	// One try per upload inside minio-go (its default, 10 with backoff, made each of msgbench's 4
	// attempts take seconds against the stopped server): msgbench's own retries are what this
	// test is about.
	saved := minio.MaxRetry
	minio.MaxRetry = 1
	t.Cleanup(func() { minio.MaxRetry = saved })
	s3 := localS3(t, "results")
	out := t.TempDir()
	args := []string{"run", "-q", "--out", out, "-f", repo("config", "samples", "mqtt-qos0.yaml"), "--set", "workload.warmup=0s",
		"--set", "results.objectStore.url=s3://results/runs", "--set", "results.objectStore.endpoint=" + s3.Endpoint}
	// Stored: exit 0, the object in the bucket.
	if _, err := msgbench(t, append(args, "--set", "workload.duration=1s", "--run-id", "stored")...); err != nil {
		t.Fatal(err)
	}
	if _, err := s3.Object(t.Context(), "results", "runs/local/mqtt-qos0/stored/result.json"); err != nil {
		t.Fatalf("uploaded object: %v", err)
	}
	// The server goes away during the run: the check passed, the upload fails, the run fails.
	go func() {
		time.Sleep(time.Second)
		_ = s3.Stop()
	}()
	_, err := msgbench(t, append(args, "--set", "workload.duration=2s", "--run-id", "lost")...)
	if err == nil || !strings.Contains(err.Error(), "results not stored") {
		t.Fatalf("error %v; want the run to fail with results not stored", err)
	}
	if _, err := results.ReadFile(filepath.Join(out, "mqtt-qos0", "lost", "result.json")); err != nil {
		t.Errorf("the local result was not kept: %v", err)
	}
}

// TestAFailedRunKeepsItsFolder: a run that fails once started — here its external broker
// refuses every connection — keeps its folder with a result.json that says Failed and why
// (it used to delete the folder), and latest points at it.
func TestAFailedRunKeepsItsFolder(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close() // nothing listens there now: connections are refused
	out := t.TempDir()
	_, runErr := msgbench(t, "run", "-q", "--out", out, "--run-id", "refused", "-f", repo("config", "samples", "mqtt-external-broker.yaml"),
		"--set", "broker.external.address="+addr, "--set", "workload.duration=2s")
	if runErr == nil {
		t.Fatal("the run succeeded against a closed port")
	}
	data, err := os.ReadFile(filepath.Join(out, "mqtt-external-broker", "latest", "result.json"))
	if err != nil {
		t.Fatalf("no result.json kept (run error: %v): %v", runErr, err)
	}
	var res results.Result
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	if res.Phase != "Failed" || res.Message != runErr.Error() || res.RunID != "refused" || res.Spec == nil {
		t.Errorf("result.json: phase %q, message %q, run %q; want Failed with the run's error %q", res.Phase, res.Message, res.RunID, runErr)
	}
	t.Logf("kept: %s", res.Message)
}
