package loadgen

import (
	"context"
	"time"

	"golang.org/x/sys/unix"
)

// Go's timers wake up to a millisecond late on many Linux machines (seen here: p50 1 ms late
// for a 50 µs sleep), which would add a millisecond of the tool's own lateness to every
// open-loop latency. A publisher therefore sleeps on a timer only until coarseMargin before its
// intended send time and spends the rest in nanosleep(2), which wakes within ~50 µs. nanosleep
// holds an OS thread, so at most preciseSleepers do it at once; the others fall back to a
// timer and their lateness shows in the publish-delay figure.
const (
	coarseMargin    = 2 * time.Millisecond
	preciseSleepers = 64
)

var preciseSlots = make(chan struct{}, preciseSleepers)

// waitUntil blocks until engine time intended (now is the engine clock), or ctx ends (false).
func waitUntil(ctx context.Context, timer **time.Timer, now func() int64, intended int64) bool {
	d := time.Duration(intended - now())
	if d > coarseMargin {
		if !timerSleep(ctx, timer, d-coarseMargin) {
			return false
		}
		d = time.Duration(intended - now())
	}
	if d < 20*time.Microsecond {
		return ctx.Err() == nil
	}
	select {
	case preciseSlots <- struct{}{}:
		ts := unix.NsecToTimespec(int64(d))
		for unix.Nanosleep(&ts, &ts) == unix.EINTR {
		}
		<-preciseSlots
		return ctx.Err() == nil
	default:
		return timerSleep(ctx, timer, d)
	}
}

func timerSleep(ctx context.Context, timer **time.Timer, d time.Duration) bool {
	if *timer == nil {
		*timer = time.NewTimer(d)
	} else {
		(*timer).Reset(d)
	}
	select {
	case <-(*timer).C:
		return true
	case <-ctx.Done():
		return false
	}
}
