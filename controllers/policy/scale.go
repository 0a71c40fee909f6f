package policy

import (
	"fmt"
	"strings"
	"time"
)

// ControlConcurrency bounds the control calls the operator has in flight at once, one per
// worker: a thousand workers are asked in waves of this many, not over a thousand sockets at once.
const ControlConcurrency = 32

// StartWave is the time budgeted per wave of ControlConcurrency workers before the start: each
// worker gets GET /status and POST /start, two round trips within the cluster (milliseconds
// when all is well; this leaves room for a slow node).
const StartWave = 250 * time.Millisecond

// StartLead is how far ahead of now the agreed start time is set for n workers: base (the
// operator's StartDelay, which covers the status write and the first wave of calls) and
// StartWave for every further wave. A start too close for the last workers would not fail the
// run — they start late, and their startSkewMicros say by how much — but it spreads the start.
func StartLead(base time.Duration, workers int) time.Duration {
	waves := (workers + ControlConcurrency - 1) / ControlConcurrency
	if waves <= 1 {
		return base
	}
	return base + time.Duration(waves-1)*StartWave
}

// StartAt is the agreed start time for n workers: StartLead ahead of now, rounded up to a whole
// second. The status keeps times to the second (metav1.Time), and the operator sends the time it
// reads back from there: rounded down, a lead of 1 s could shrink to nothing.
func StartAt(now time.Time, base time.Duration, workers int) time.Time {
	at := now.Add(StartLead(base, workers))
	if t := at.Truncate(time.Second); !t.Equal(at) {
		return t.Add(time.Second)
	}
	return at
}

// Few joins items for a status message: all of them up to n, else the first n and how many
// more, so that a message about a thousand workers stays a line.
func Few(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}
