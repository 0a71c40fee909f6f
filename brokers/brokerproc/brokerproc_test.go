package brokerproc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLifecycle: the folder is the broker's until Stop removes it, the log is kept, Stop ends
// the process by SIGINT, and a process that ignores SIGINT is killed after the grace period.
func TestLifecycle(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	for _, tc := range []struct {
		name, script string
		killed       bool
	}{
		{"stops on SIGINT", "echo started >&2; exec sleep 60", false},
		{"killed after the grace period", "trap '' INT; echo started >&2; exec sleep 60", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New("test", "", 300*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(p.Dir, os.Getenv("TMPDIR")) || !strings.Contains(p.Dir, "msgbench-test-") {
				t.Fatalf("folder %s", p.Dir)
			}
			if err := p.Start(exec.Command("sh", "-c", tc.script), nil); err != nil {
				t.Fatal(err)
			}
			err = p.WaitReady(context.Background(), 5*time.Second, 10*time.Millisecond, "say started", func(context.Context) error {
				if !strings.Contains(p.Log(), "started") {
					return errors.New("not yet")
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if u, err := p.Usage(); err != nil || u.PeakRSS == 0 {
				t.Errorf("usage %+v, %v", u, err)
			}
			pid := p.PID()
			err = p.Stop()
			if tc.killed != (err != nil && strings.Contains(err.Error(), "killed")) {
				t.Errorf("Stop: %v (killed: want %v)", err, tc.killed)
			}
			if syscall.Kill(pid, 0) == nil {
				t.Errorf("process %d still runs", pid)
			}
			if _, err := os.Stat(p.Dir); !os.IsNotExist(err) {
				t.Errorf("folder %s left behind (%v)", p.Dir, err)
			}
		})
	}
}

// TestWaitReadyFailsWhenTheBrokerExits: a broker that dies at start fails the wait at once with
// what it wrote, not after the timeout.
func TestWaitReadyFailsWhenTheBrokerExits(t *testing.T) {
	dir := t.TempDir()
	p, err := New("test", dir, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(exec.Command("sh", "-c", "echo 'Address already in use' >&2; exit 1"), nil); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = p.WaitReady(context.Background(), time.Minute, 10*time.Millisecond, "listen", func(context.Context) error { return errors.New("refused") })
	if !errors.Is(err, ErrExited) || !strings.Contains(err.Error(), "Address already in use") || time.Since(start) > 5*time.Second {
		t.Errorf("after %s: %v", time.Since(start), err)
	}
	if err := p.Stop(); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("a folder the caller gave was removed: %v", err)
	}
}

func TestFreePortsDiffer(t *testing.T) {
	ports, err := FreePorts(nil, "127.0.0.1", 5)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p == 0 || seen[p] {
			t.Fatalf("ports %v", ports)
		}
		seen[p] = true
	}
}

func TestLogIsBounded(t *testing.T) {
	var l logBuffer
	chunk := strings.Repeat("x", 64<<10)
	for range 40 {
		_, _ = l.Write([]byte(chunk))
	}
	if n := len(l.String()); n > 1<<20+len(chunk) {
		t.Errorf("log kept %d bytes", n)
	}
}

// StartOnFreePorts retries only a start that lost its free port to someone else, and never a
// pinned port: that one does not become free by retrying.
func TestStartOnFreePorts(t *testing.T) {
	inUse := errors.New("listen tcp 127.0.0.1:4000: bind: address already in use")
	for _, tc := range []struct {
		name   string
		port   int
		errs   []error
		calls  int
		wantOK bool
	}{
		{"first try", 0, []error{nil}, 1, true},
		{"port taken, then free", 0, []error{inUse, nil}, 2, true},
		{"erlang's word for it", 0, []error{errors.New("{error,eaddrinuse}"), nil}, 2, true},
		{"taken three times", 0, []error{inUse, inUse, inUse, nil}, 3, false},
		{"pinned port", 1883, []error{inUse, nil}, 1, false},
		{"another failure", 0, []error{errors.New("exited at start"), nil}, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			p, err := StartOnFreePorts(Options{Port: tc.port}, func(o Options) (*int, error) {
				if o.Host != "127.0.0.1" {
					t.Errorf("host %q, want the default 127.0.0.1", o.Host)
				}
				err := tc.errs[calls]
				calls++
				if err != nil {
					return nil, err
				}
				return &calls, nil
			})
			if calls != tc.calls || (err == nil) != tc.wantOK || (p != nil) != tc.wantOK {
				t.Errorf("%d calls, error %v, process %v; want %d calls, ok %v", calls, err, p, tc.calls, tc.wantOK)
			}
		})
	}
}

// Ports: the plain listener gets the pinned port, the others free ones, all distinct.
func TestPorts(t *testing.T) {
	ports, err := Ports(Options{Host: "127.0.0.1"}, 3)
	if err != nil || len(ports) != 3 || ports[0] == ports[1] || ports[1] == ports[2] || ports[0] == ports[2] {
		t.Fatalf("free ports %v, %v", ports, err)
	}
	pinned, err := Ports(Options{Host: "127.0.0.1", Port: 1}, 2)
	if err != nil || pinned[0] != 1 || pinned[1] == 1 {
		t.Fatalf("pinned port 1: %v, %v", pinned, err)
	}
}
