package loadgen

import "time"

// SetWallClockSkew makes the run's wall clock, as its message headers carry it, read d ahead of
// the machine's: a worker on another machine whose clock is off by d (split_test.go).
func SetWallClockSkew(o *Options, d time.Duration) { o.wallSkew = d }
