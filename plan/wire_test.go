package plan_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/msgbench/msgbench/internal/manifest"
	. "github.com/msgbench/msgbench/plan"
)

// Every sample's plan comes back from its wire form exactly as compiled: a worker runs what the
// operator (or msgbench run) compiled, field for field.
func TestWireFormRoundTripsEverySample(t *testing.T) {
	files, err := filepath.Glob("../config/samples/*.yaml")
	if err != nil || len(files) < 20 {
		t.Fatalf("samples: %d files, %v", len(files), err)
	}
	n := 0
	for _, f := range files {
		mb, err := manifest.ReadFile(f)
		if err != nil {
			continue // suites and other kinds
		}
		for _, target := range []Target{Local, Kubernetes} {
			p, err := Compile(&mb.Spec, target)
			if err != nil {
				continue // a sample for the other target
			}
			data, err := Marshal(p)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			back, err := Unmarshal(data)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if !reflect.DeepEqual(p, back) {
				t.Errorf("%s (%s): the plan read back differs:\n%+v\n%+v", f, target, p, back)
			}
			n++
		}
	}
	if n < 20 {
		t.Errorf("only %d plans compiled from the samples", n)
	}
}

func TestWireFormRefusesAnotherVersionAndUnknownFields(t *testing.T) {
	mb, err := manifest.ReadFile("../config/samples/mqtt-qos1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(&mb.Spec, Local)
	if err != nil {
		t.Fatal(err)
	}
	data, err := Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	other := strings.Replace(string(data), Version, "plan.msgbench.io/v0", 1)
	if _, err := Unmarshal([]byte(other)); err == nil || !strings.Contains(err.Error(), `version "plan.msgbench.io/v0"`) {
		t.Errorf("another version: %v", err)
	}
	unknown := strings.Replace(string(data), `"Workers":`, `"Shards": 3, "Workers":`, 1)
	if _, err := Unmarshal([]byte(unknown)); err == nil || !strings.Contains(err.Error(), "Shards") {
		t.Errorf("an unknown field: %v", err)
	}
	path := filepath.Join(t.TempDir(), FileName)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if back, err := ReadFile(path); err != nil || back.Groups[0].Protocol != p.Groups[0].Protocol {
		t.Errorf("ReadFile: %v", err)
	}
	if _, err := Unmarshal([]byte(`{"Version": "` + Version + `"}`)); err == nil {
		t.Error("an empty plan was read")
	}
}
