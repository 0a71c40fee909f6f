package results

import "testing"

// Workers ramp side by side: their connections add up over the slowest one's time.
func TestMergeConnectRamps(t *testing.T) {
	parts := []*Result{
		{ConnectRamp: NewConnectRamp(9000, 1.8, 5000)},
		{ConnectRamp: NewConnectRamp(9000, 2.0, 5000)},
		{},
	}
	got := mergeConnectRamps(parts)
	if got.Connections != 18000 || got.Seconds != 2.0 || got.PerSecond != 9000 || got.TargetPerSecond != 10000 {
		t.Fatalf("merged %+v, want 18000 connections in 2 s (9000/s) of a 10000/s target", *got)
	}
	if mergeConnectRamps([]*Result{{}}) != nil {
		t.Fatal("no ramp in any part: want nil")
	}
}
