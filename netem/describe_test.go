package netem

import (
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
