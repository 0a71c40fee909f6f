package keepalive

import (
	"testing"
	"time"
)

func TestNext(t *testing.T) {
	const s = time.Second
	for _, c := range []struct {
		last, now time.Duration
		ping      bool
		wait      time.Duration
	}{
		{0, 10 * s, true, 10 * s},           // nothing sent for the period: ping, look again a period later
		{0, 11 * s, true, 10 * s},           // a late timer pings at once
		{4 * s, 10 * s, false, 4 * s},       // sent 6 s ago: ping 10 s after that write
		{10 * s, 10 * s, false, 10 * s},     // sent just now
		{9999 * s, 10 * s, false, 9999 * s}, // (a write stamped after now: wait a period past it)
	} {
		ping, wait := Next(c.last, c.now, 10*s)
		if ping != c.ping || wait != c.wait {
			t.Errorf("Next(last %v, now %v, 10s) = %v, %v; want %v, %v", c.last, c.now, ping, wait, c.ping, c.wait)
		}
	}
}
