package netem

import (
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// durationPattern is the MessagingBenchmark API's pattern for durations: no sign, at least one
// unit.
var durationPattern = regexp.MustCompile(`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`)

// MaxDelay bounds delays and jitters: a packet held longer than this is no longer a slow
// network but a broken one, and the emulator's queues would only fill up.
const MaxDelay = time.Hour

// ParseDuration parses a non-negative duration the way the MessagingBenchmark API accepts it
// ("200ms", "1.5s", "1m30s") and bounds it by MaxDelay.
func ParseDuration(s string) (time.Duration, error) {
	if !durationPattern.MatchString(s) {
		return 0, fmt.Errorf("%q is not a duration: write a number and a unit (ns, us, ms, s, m, h), like \"200ms\"", s)
	}
	d, err := time.ParseDuration(s)
	if err != nil || d > MaxDelay {
		return 0, fmt.Errorf("%q is above the maximum of %v", s, MaxDelay)
	}
	return d, nil
}

// FormatDuration formats d in one integer unit (ms, us or ns, the largest that divides it), the
// form Chaos Mesh's latency and jitter fields take ("^[0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h)$"), which
// time.Duration.String ("1m30s", "µs") does not match.
func FormatDuration(d time.Duration) string {
	switch {
	case d%time.Millisecond == 0:
		return strconv.FormatInt(int64(d/time.Millisecond), 10) + "ms"
	case d%time.Microsecond == 0:
		return strconv.FormatInt(int64(d/time.Microsecond), 10) + "us"
	default:
		return strconv.FormatInt(int64(d), 10) + "ns"
	}
}
