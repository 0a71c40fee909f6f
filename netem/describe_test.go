package netem

import (
	"strings"
	"testing"
	"time"
)

func TestDescribe(t *testing.T) {
	loss, _ := ParsePercent("2")
	l := Link{Up: Impairment{Delay: 200 * time.Millisecond, Loss: loss, RateBitsPerSecond: 60_000}}
	if got, want := l.String(), "up: delay 200ms, loss 2%, rate 60kbit; down: none; MTU "; got[:len(want)] != want {
		t.Errorf("String() = %q, want it to start %q", got, want)
	}
	d := Describe("custom", l, "test")
	up, _ := d["up"].(map[string]any)
	if d["profile"] != "custom" || d["emulator"] != "test" || d["rttMillis"] != 200.0 || up["lossPercent"] != "2" || up["bandwidth"] != "60kbit" {
		t.Errorf("Describe = %v", d)
	}
}

// A link whose only loss is a Gilbert-Elliott model, with correlations, says so in both forms:
// before, such a direction printed as an empty string and the result showed 0 % loss.
func TestDescribeLossModels(t *testing.T) {
	pct := func(s string) Fraction { f, _ := ParsePercent(s); return f }
	down := Impairment{
		Delay:          10 * time.Millisecond,
		GilbertElliott: GilbertElliott{P: pct("1"), R: pct("25"), LossInBad: pct("100")},
		Correlation:    Correlation{Delay: pct("25"), Duplicate: pct("50")},
	}
	l := Link{Down: down}
	want := "down: delay 10ms, Gilbert-Elliott loss (p 1%, r 25%, 1-h 100%, 1-k 0%; 3.85% on average), correlation delay 25%/duplicate 50%; MTU"
	if got := l.String(); !strings.Contains(got, want) {
		t.Errorf("String() = %q, want it to contain %q", got, want)
	}
	d, _ := Describe("custom", l, "test")["down"].(map[string]any)
	ge, _ := d["gilbertElliott"].(map[string]any)
	c, _ := d["correlation"].(map[string]any)
	if ge["badToGoodPercent"] != "25" || ge["stationaryLossPercent"].(float64) < 3.84 || ge["stationaryLossPercent"].(float64) > 3.85 || c["duplicatePercent"] != "50" {
		t.Errorf("Describe down = %v", d)
	}
	if up, _ := Describe("custom", l, "test")["up"].(map[string]any); up["gilbertElliott"] != nil || up["correlation"] != nil {
		t.Errorf("unimpaired up described with models: %v", up)
	}
}
