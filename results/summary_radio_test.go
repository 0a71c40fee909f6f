package results

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestNetworkSummaryRadio: the summary's network row names the radio states and what they did,
// from the run's own map and from a result read back from JSON alike.
func TestNetworkSummaryRadio(t *testing.T) {
	r := &Result{Network: map[string]any{"profile": "nb-iot", "rttMillis": 600.0}}
	r.SetNetworkRadio(map[string]any{"inactivityTimer": "2s", "promotionDelay": "1s", "pagingCycle": "2.56s", "psmAfter": "0s",
		"promotions": uint64(68), "pagings": uint64(22), "psmWakeups": uint64(0), "heldPackets": uint64(77), "holdMillis": 85394.2})
	want := "radio: idle after 2s, promotion 1s, paging every 2.56s; 68 promotions (22 pagings, 0 PSM wake-ups), 77 packets held 85.4 s in all"
	if got := r.NetworkSummary(); !strings.HasSuffix(got, want) {
		t.Errorf("summary %q, want it to end with %q", got, want)
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if got := back.NetworkSummary(); !strings.HasSuffix(got, want) {
		t.Errorf("read back: summary %q, want it to end with %q", got, want)
	}
}
