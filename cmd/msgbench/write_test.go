package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
