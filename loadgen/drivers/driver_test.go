package drivers_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/msgbench/msgbench/loadgen/drivers"
)

func TestDrainError(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{
		{1, "1 publish still unacknowledged: context deadline exceeded"},
		{59, "59 publishes still unacknowledged: context deadline exceeded"},
	} {
		err := fmt.Errorf("publisher 3: %w", &drivers.DrainError{Unacknowledged: c.n, Err: context.DeadlineExceeded})
		var de *drivers.DrainError
		if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &de) || de.Unacknowledged != c.n {
			t.Errorf("%v: not a DrainError of %d wrapping the deadline", err, c.n)
		}
		if got := de.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
}

// TestGateWaitsAndRefuses: Close waits for a call in progress, and no call is allowed after it.
func TestGateWaitsAndRefuses(t *testing.T) {
	var g drivers.Gate
	var mu sync.Mutex
	inCall, closed, late := false, false, 0
	if !g.Enter() {
		t.Fatal("Enter refused on an open gate")
	}
	mu.Lock()
	inCall = true
	mu.Unlock()
	go func() {
		time.Sleep(50 * time.Millisecond)
		mu.Lock()
		inCall = false
		mu.Unlock()
		g.Leave()
	}()
	g.Close()
	mu.Lock()
	if inCall {
		t.Error("Close returned while a call was in progress")
	}
	closed = true
	mu.Unlock()
	if g.Enter() {
		late++
		g.Leave()
	}
	if !closed || late != 0 {
		t.Errorf("%d calls allowed after Close", late)
	}
}
