package results

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestNetworkTimelineMerge: the merged network.timeline has each step once, at the latest time a
// part saw it take effect, sorted by plan; it survives a JSON round trip next to the link's
// description, and the parts' shared network map is not changed.
func TestNetworkTimelineMerge(t *testing.T) {
	zero, one := 0, 1
	shared := map[string]any{"profile": "none"}
	a := &Result{Name: "b", Phase: "Succeeded", Network: shared}
	a.SetNetworkTimeline([]NetworkStepMark{
		{At: 3.01, Planned: 3, Step: &one, Description: "profile lte"},
		{At: 1.002, Planned: 1, Step: &zero, Description: "outage"},
	})
	b := &Result{Name: "b", Phase: "Succeeded", Network: shared}
	b.SetNetworkTimeline([]NetworkStepMark{{At: 1.004, Planned: 1, Step: &zero, Description: "outage"}})
	c := &Result{Name: "b", Phase: "Succeeded", Network: shared}
	if _, ok := shared["timeline"]; ok {
		t.Fatal("SetNetworkTimeline changed the shared network map")
	}
	m, err := Merge([]*Result{a, b, c})
	if err != nil {
		t.Fatal(err)
	}
	want := []NetworkStepMark{
		{At: 1.004, Planned: 1, Step: &zero, Description: "outage"},
		{At: 3.01, Planned: 3, Step: &one, Description: "profile lte"},
	}
	if got := m.NetworkTimeline(); !reflect.DeepEqual(got, want) {
		t.Fatalf("merged timeline = %+v, want %+v", got, want)
	}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if got := back.NetworkTimeline(); !reflect.DeepEqual(got, want) {
		t.Fatalf("after JSON: %+v", got)
	}
	if back.Network.(map[string]any)["profile"] != "none" {
		t.Errorf("network lost its profile: %v", back.Network)
	}
	if (&Result{}).NetworkTimeline() != nil {
		t.Error("a result without network has a timeline")
	}
}
