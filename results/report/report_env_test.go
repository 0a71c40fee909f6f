package report_test

import (
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/results"
	"github.com/msgbench/msgbench/results/report"
)

// TestSingleRunShowsItsEnvironment: a one-run report's summary says what was spoken and on what
// machine, as the terminal summary does.
func TestSingleRunShowsItsEnvironment(t *testing.T) {
	r := &results.Result{APIVersion: results.APIVersion, Kind: results.Kind, Name: "x", Phase: "Succeeded",
		Spec: &v1alpha1.MessagingBenchmarkSpec{Protocol: v1alpha1.ProtocolHTTP, HTTP: v1alpha1.HTTPSpec{Version: v1alpha1.HTTP3}},
		Environment: results.Environment{Protocol: "HTTP/3", TLSVersion: "TLS 1.3", TLSGroup: "X25519MLKEM768",
			CPUModel: "AMD EPYC 7B13", CPUs: 8, Kernel: "Linux 6.8.0", MsgbenchVersion: "dev", GoVersion: "go1.26.0"},
		Wire: results.Wire{BytesPerMessage: results.Float64(164.8), ConnectBytes: results.Float64(3423)}}
	dir := t.TempDir()
	if _, err := report.WriteFiles(dir, report.FromResults([]*results.Result{r}), report.Options{}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(string(data))
	for _, want := range []string{"<dt>protocol</dt><dd>HTTP/3 + TLS 1.3 (X25519MLKEM768)</dd>",
		"<dt>environment</dt><dd>AMD EPYC 7B13, 8 cores, Linux 6.8.0; msgbench dev, go1.26.0</dd>",
		"<dt>wire</dt><dd>164.8 bytes per message, 3423 bytes per connection set-up</dd>"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %s", want)
		}
	}
	if strings.Contains(page, "%!") {
		t.Error("the page has a formatting error (%!)")
	}
}

// TestFailedRunShowsWhy: a failed run's own report heads with its phase and message, and plots
// nothing: it did not measure what it was asked to.
func TestFailedRunShowsWhy(t *testing.T) {
	r := &results.Result{APIVersion: results.APIVersion, Kind: results.Kind, Name: "x", Phase: "Failed", Message: "broker unreachable",
		Spec: &v1alpha1.MessagingBenchmarkSpec{Protocol: v1alpha1.ProtocolMQTT}, Sent: 10, MeasuredSeconds: 1}
	var b strings.Builder
	if err := report.WriteHTML(&b, report.FromResults([]*results.Result{r}), nil); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{`<dd class="failed">Failed: broker unreachable</dd>`, "No figure: nothing was measured", "Runs not plotted"} {
		if !strings.Contains(page, want) {
			t.Errorf("a failed run's report lacks %s", want)
		}
	}
	if strings.Contains(page, "<svg") {
		t.Error("a failed run is plotted")
	}
}
