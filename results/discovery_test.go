package results

import (
	"reflect"
	"testing"
)

// Discovery figures merge exactly: counts and the total summed, min and max over the parts, the
// mean recomputed from them, addresses united.
func TestDiscoveryMerge(t *testing.T) {
	var a, b Discovery
	a.Add("10.0.0.255:1885", "gateway 1 at 10.0.0.5:1885", 1, 300)
	a.Add("10.0.0.255:1885", "gateway 1 at 10.0.0.5:1885", 2, 5300)
	b.Add("10.0.0.255:1885", "gateway 2 at 10.0.0.6:1885", 1, 100)
	parts := []*Result{{Environment: Environment{Discovery: &a}}, {Environment: Environment{}}, {Environment: Environment{Discovery: &b}}}
	got := mergeEnvironment(parts).Discovery
	want := &Discovery{Searched: []string{"10.0.0.255:1885"}, Gateways: []string{"gateway 1 at 10.0.0.5:1885", "gateway 2 at 10.0.0.6:1885"},
		Found: 3, Searches: 4, MinMicros: 100, MeanMicros: 1900, MaxMicros: 5300, TotalMicros: 5700}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("merged %+v, want %+v", got, want)
	}
	if a.Found != 2 || len(a.Gateways) != 1 {
		t.Errorf("the merge changed a part: %+v", a)
	}
	if d := mergeEnvironment(parts[1:2]).Discovery; d != nil {
		t.Errorf("no part searched, merged %+v", d)
	}
}
