package loadgen

import "testing"

func TestTracker(t *testing.T) {
	var tr tracker
	type obs struct {
		seq      uint32
		dup, ooo bool
	}
	for i, o := range []obs{{0, false, false}, {1, false, false}, {3, false, false}, {2, false, true}, {2, true, false},
		{1, true, false}, {4, false, false}, {10000, false, false}, {5, true, false}, {9999, false, true}, {10000, true, false}} {
		dup, ooo := tr.observe(o.seq)
		if dup != o.dup || ooo != o.ooo {
			t.Errorf("step %d seq %d: dup %t ooo %t, want %t %t", i, o.seq, dup, ooo, o.dup, o.ooo)
		}
	}
}
