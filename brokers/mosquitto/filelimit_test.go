package mosquitto

import (
	"context"
	"errors"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// A shell's soft limit of 1024 must not reach the broker: Mosquitto would stop accepting at
// about the 1,000th client (issue 22's i/o timeouts at the 900th connection).
func TestBrokerGetsHardFileLimit(t *testing.T) {
	if _, err := Binary(); errors.Is(err, ErrNotInstalled) {
		t.Skip(err)
	}
	var orig syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &orig); err != nil {
		t.Fatal(err)
	}
	if orig.Max <= 1024 {
		t.Skipf("hard open-files limit %d: nothing to raise", orig.Max)
	}
	// As started from a shell with `ulimit -Sn 1024`: children inherit 1024.
	low := orig
	low.Cur = 1024
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &orig) })

	p, err := Start(context.Background(), Options{Host: "127.0.0.1", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop() //nolint:errcheck
	var lim unix.Rlimit
	if err := unix.Prlimit(p.PID(), unix.RLIMIT_NOFILE, nil, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur != orig.Max {
		t.Fatalf("broker's soft open-files limit = %d, want the hard limit %d", lim.Cur, orig.Max)
	}
}
