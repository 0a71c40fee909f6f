package loadgen_test

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"testing"
)

// TestMain runs up to 4 of this package's parallel tests at once (go test's default is
// GOMAXPROCS, 2 on the 2-core CI machine) unless -parallel is given. They are runs against a
// Mosquitto of their own that mostly wait on their warm-up, window and drain: together they use
// about half a core under -race (measured: 26 CPU-s in 47 s of wall time at -parallel 2), so
// more of them side by side shortens the package without starving one. The tests whose figures
// are the whole process's (TestMemoryPerConnectionHeld's Go memory per connection) are not
// parallel, and go test runs those before any parallel one starts.
func TestMain(m *testing.M) {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		_ = flag.Set("test.parallel", strconv.Itoa(max(4, runtime.GOMAXPROCS(0))))
	}
	os.Exit(m.Run())
}
