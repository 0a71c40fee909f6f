package results

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/msgbench/msgbench/netem"
)

// TestSummaryNetworkModelsAndSteps: the summary names a Gilbert-Elliott loss model (a direction
// whose lossPercent is 0 but which loses in bursts) and each timeline step as it took effect,
// from the run's own result and from one read back from JSON alike.
func TestSummaryNetworkModelsAndSteps(t *testing.T) {
	pct := func(s string) netem.Fraction { f, _ := netem.ParsePercent(s); return f }
	link := netem.Link{Down: netem.Impairment{GilbertElliott: netem.GilbertElliott{P: pct("1"), R: pct("25"), LossInBad: pct("100")}}}
	r := &Result{Name: "x", Network: netem.Describe("custom", link, "test")}
	r.SetNetworkPackets(map[string]any{"up": map[string]any{"packets": uint64(900), "lost": uint64(0)},
		"down": map[string]any{"packets": uint64(1000), "lost": uint64(40), "lostPercent": 4.0, "meanLossBurst": 4.0}})
	zero := 0
	r.SetNetworkTimeline([]NetworkStepMark{{At: 1.002, Planned: 1, Step: &zero, Description: "outage"}, {At: 1.8, Planned: 1.8, Description: "end of timeline[0]: back to spec.network"}})
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	for name, res := range map[string]*Result{"own": r, "read back": &back} {
		var buf bytes.Buffer
		if err := WriteSummary(&buf, res); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{
			"up unimpaired; down Gilbert-Elliott loss 3.85% on average (p 1%, r 25%), lost 4% of 1000 packets in bursts of 4; MTU 1500",
			"network steps  1.00 s outage; 1.80 s end of timeline[0]: back to spec.network",
		} {
			if !strings.Contains(buf.String(), want) {
				t.Errorf("%s: summary lacks %q:\n%s", name, want, buf.String())
			}
		}
	}
}
