package loadgen

import (
	"runtime"
	"runtime/metrics"
)

// goMemoryHeld is the Go memory this process holds after a garbage collection: the live heap
// and the goroutine stacks, which is what idle connections cost (a reader goroutine, buffers,
// the client's state). Resident memory adds the heap's collection headroom and what the
// runtime has not returned to the system yet, so it depends on when it is read; this does not.
// The collection takes milliseconds; it runs before the first connect and after the drain,
// outside the measured window.
func goMemoryHeld() int64 {
	runtime.GC()
	samples := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/stacks:bytes"}}
	metrics.Read(samples)
	var n int64
	for _, s := range samples {
		if s.Value.Kind() == metrics.KindUint64 {
			n += int64(s.Value.Uint64())
		}
	}
	return n
}
