package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msgbench/msgbench/internal/atomicfile/fulldisk"
	"github.com/msgbench/msgbench/internal/testbin"
	"github.com/msgbench/msgbench/results"
)

// minimalResult is a small valid result document.
func minimalResult(name string) *results.Result {
	return &results.Result{APIVersion: results.APIVersion, Kind: results.Kind, Name: name, Phase: "Succeeded",
		Sent: 100, Received: 100, Expected: 100}
}

// TestReportRefusesATruncatedResult: a result.json cut short (a full disk, #31) is refused with
// the file's name and the JSON error, and a non-zero exit — alone, beside a good one, under a
// name folder or its latest link — not read as a folder of fewer runs.
func TestReportRefusesATruncatedResult(t *testing.T) {
	out := t.TempDir()
	r := minimalResult("bench")
	for i := range 200 { // as long as a real result
		r.Timeline = append(r.Timeline, results.TimelinePoint{Sent: int64(i), Received: int64(i)})
	}
	good, err := resultJSON(r)
	if err != nil || len(good) < 8192 {
		t.Fatalf("%d bytes, %v", len(good), err)
	}
	full := good
	bad := filepath.Join(out, "bench", "20261127-100001", "result.json")
	for _, f := range []struct {
		path string
		data []byte
	}{
		{filepath.Join(out, "bench", "20261127-100000", "result.json"), good},
		{bad, full[:4096]},
		{filepath.Join(out, "bench", "20261127-100001", "report.html"), []byte("<html></html>\n")},
	} {
		if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f.path, f.data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The run that failed to write did not become latest: the name folder must not quietly
	// report the run before it.
	if err := os.Symlink("20261127-100000", filepath.Join(out, "bench", "latest")); err != nil {
		t.Fatal(err)
	}
	for _, arg := range []string{filepath.Dir(bad), bad, filepath.Join(out, "bench"), out} {
		stdout, err := msgbench(t, "report", arg, "--out", t.TempDir())
		if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "unexpected end of JSON input") {
			t.Errorf("report %s: err %v, want a refusal naming %s and the JSON error\n%s", arg, err, bad, stdout)
		}
	}
	// The good run, named, is reported.
	if _, err := msgbench(t, "report", filepath.Join(out, "bench", "latest"), "--out", t.TempDir()); err != nil {
		t.Errorf("report of the good run: %v", err)
	}
	// And an empty result.json (a crash before the first byte).
	if err := os.WriteFile(bad, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := msgbench(t, "report", filepath.Dir(bad), "--out", t.TempDir()); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("an empty result.json: err %v", err)
	}
}

// TestOutOnAFullDisk runs a short benchmark through the real command into a tmpfs of 8 KB (#31:
// result.json was left cut at 4,096 bytes and no summary printed): the summary is printed, the
// output names each file that could not be written with the error, the exit status is non-zero,
// and no truncated file is left under a result's name. Root only (it mounts the tmpfs).
func TestOutOnAFullDisk(t *testing.T) {
	dir := fulldisk.Mount(t, 8192)
	fulldisk.Fill(t, dir, 4096) // room for 4,096 bytes, as in the issue
	bin := testbin.Msgbench(t)
	cmd := exec.Command(bin, "run", "-f", repo("config", "samples", "mqtt-qos1.yaml"), "--out", dir, "-q", "--name", "full",
		"--run-id", "r1", "--set", "workload.duration=1s", "--set", "workload.warmup=0s")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	t.Logf("%s\nstdout:\n%s\nstderr:\n%s", time.Since(start).Round(time.Millisecond), stdout.String(), stderr.String())
	if err == nil {
		t.Fatal("exit 0 with result.json not written")
	}
	run := filepath.Join(dir, "full", "r1")
	out := stdout.String()
	if !strings.Contains(out, "received") || !strings.Contains(out, "  not written    "+filepath.Join(run, "result.json")+": no space left on device") {
		t.Errorf("stdout lacks the summary or the file not written")
	}
	if !strings.Contains(out, "  not written    "+filepath.Join(run, "report.html")+": no space left on device") {
		t.Errorf("stdout does not say report.html was not written")
	}
	if !strings.Contains(stderr.String(), filepath.Join(run, "result.json")) {
		t.Errorf("the error does not name result.json")
	}
	// Nothing cut short under a result's name, and no temporary file.
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch name := d.Name(); {
		case name == "result.json":
			if _, err := results.ReadFile(p); err != nil {
				t.Errorf("left behind: %v", err)
			}
		case strings.Contains(name, ".tmp"):
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}

// TestSuiteThatRunsNothingIsRefused: a suite whose excludes remove every point is refused before
// anything starts, naming the excludes, and writes nothing (it exited 0 naming a report.html it
// never wrote, #31).
func TestSuiteThatRunsNothingIsRefused(t *testing.T) {
	out := t.TempDir()
	none := strings.Replace(localSuite, "    - {qos: 0, clients: 2}\n", "    - {qos: 0}\n    - {qos: 1}\n", 1)
	stdout, err := msgbench(t, "run", "-f", writeSuite(t, none), "--out", out, "-q")
	if err == nil || !strings.Contains(err.Error(), "spec.matrix.exclude") || !strings.Contains(err.Error(), "{qos: 0}, {qos: 1}") ||
		!strings.Contains(err.Error(), "nothing to run") {
		t.Errorf("err %v\n%s", err, stdout)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("%s holds %d entries after a refusal", out, len(entries))
	}
}

// TestSuiteOnAFullDisk: a suite whose run cannot be written stops after it, still prints its
// summary with the files not written, exits non-zero, and leaves no truncated file.
func TestSuiteOnAFullDisk(t *testing.T) {
	dir := fulldisk.Mount(t, 8192)
	fulldisk.Fill(t, dir, 4096)
	one := strings.Replace(localSuite, "values: [0, 1]", "values: [0]", 1)
	one = strings.Replace(one, "values: [1, 2]", "values: [1, 2, 4]", 1)
	stdout, err := msgbench(t, "run", "-f", writeSuite(t, one), "--out", dir, "-q", "--repetitions", "1", "--run-id", "s1")
	t.Logf("err %v\nstdout:\n%s", err, stdout)
	run := filepath.Join(dir, "local", "s1")
	if err == nil || !strings.Contains(err.Error(), "not written") {
		t.Errorf("err %v, want one naming the files not written", err)
	}
	if !strings.Contains(stdout, "suite local: 2 runs, 1 succeeded") || !strings.Contains(stdout, "  not written    "+filepath.Join(run, "qos0-clients1", "r1", "result.json")+": no space left on device") {
		t.Errorf("stdout lacks the summary (one run done of two, the second not started) or the file not written")
	}
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if strings.HasSuffix(p, ".json") {
			if data, _ := os.ReadFile(p); !json.Valid(data) {
				t.Errorf("left behind: %s, %d bytes of invalid JSON", p, len(data))
			}
		}
		if strings.Contains(d.Name(), ".tmp") {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}
