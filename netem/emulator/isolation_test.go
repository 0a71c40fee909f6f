//go:build linux

package emulator

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// TestIsolated: a server inside that binds every address is reachable from inside on 127.0.0.1
// and from nowhere on the host's addresses; the namespace has lo only; Close ends what runs
// inside and releases every descriptor.
func TestIsolated(t *testing.T) {
	if err := CheckPrivileges(); err != nil {
		t.Skipf("needs root: %v", err)
	}
	fds := fdCount(t)
	iso, err := Isolated()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = iso.Close() }()
	if a := iso.Addrs(); len(a) == 0 || a[0].String() != "127.0.0.1" {
		t.Errorf("Addrs() = %v, want 127.0.0.1 first", a)
	}
	var ifnames []string
	if err := iso.Do(func() error {
		ifs, err := net.Interfaces()
		for _, i := range ifs {
			ifnames = append(ifnames, i.Name)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(ifnames) != 1 || ifnames[0] != "lo" {
		t.Errorf("interfaces inside %v, want [lo]", ifnames)
	}

	ctx := context.Background()
	ln, err := iso.Listen(ctx, "tcp", ":0") // every address, as Mosquitto's websockets listener
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	port := ln.Addr().(*net.TCPAddr).Port
	if on, err := iso.TCPListening(port); err != nil || !on {
		t.Fatalf("TCPListening(%d) inside = %v, %v", port, on, err)
	}

	// From the host's namespace, every address of the machine: none of these may reach ln (a
	// host process that happens to listen on the port may answer; ln must not see it).
	hostAddrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range hostAddrs {
		ip, _, _ := net.ParseCIDR(a.String())
		if ip.IsLinkLocalUnicast() {
			continue // needs a zone; not where a server is reached from
		}
		if c, err := net.DialTimeout("tcp", net.JoinHostPort(ip.String(), strconv.Itoa(port)), time.Second); err == nil {
			_ = c.Close()
		}
	}
	inside, err := iso.DialContext(ctx, "tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatalf("dial 127.0.0.1:%d from inside: %v", port, err)
	}
	defer func() { _ = inside.Close() }()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	if c.RemoteAddr().String() != inside.LocalAddr().String() {
		t.Errorf("the first connection came from %v, want the inside dial from %v: the host reached the isolated listener", c.RemoteAddr(), inside.LocalAddr())
	}
	_ = c.Close()
	_ = ln.(*net.TCPListener).SetDeadline(time.Now().Add(200 * time.Millisecond))
	if c, err := ln.Accept(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("a second connection reached the isolated listener: %v, %v", c, err)
	}

	child := exec.Command("sleep", "60")
	if err := iso.Start(child); err != nil {
		t.Fatal(err)
	}
	self, _ := os.Readlink("/proc/self/ns/net")
	if ns, err := os.Readlink("/proc/" + strconv.Itoa(child.Process.Pid) + "/ns/net"); err != nil || ns == self {
		t.Errorf("the child's network namespace %q (%v) is this process's %q", ns, err, self)
	}
	_ = ln.Close()
	_ = inside.Close()
	if err := iso.Close(); err != nil {
		t.Fatal(err)
	}
	if err := iso.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	state, _ := child.Process.Wait()
	if state == nil || state.Exited() {
		t.Errorf("the child ended with %v, want killed by Close", state)
	}
	if got := fdCount(t); got > fds {
		t.Errorf("%d descriptors open after Close, %d before Isolated", got, fds)
	}
}
