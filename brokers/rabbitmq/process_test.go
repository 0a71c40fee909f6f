package rabbitmq

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/msgbench/msgbench/internal/certs"
	"github.com/msgbench/msgbench/internal/mqtt"
)

// start starts a broker for a test, logs how long it took, and stops it at the end.
func startBroker(t *testing.T, o Options) *Process {
	t.Helper()
	t0 := time.Now()
	p, err := Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop() })
	t.Logf("RabbitMQ %s ready in %s (plain %s, tls %s)", p.Version, time.Since(t0).Round(time.Millisecond), p.Addr, p.TLSAddr)
	return p
}

func connect(t *testing.T, addr string, tc *tls.Config, id string, onPublish func(*mqtt.Publish)) *mqtt.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if tc != nil {
		nc = tls.Client(nc, tc)
	}
	c, err := mqtt.Connect(ctx, nc, mqtt.Options{
		Connect:   mqtt.ConnectOptions{Version: mqtt.V311, ClientID: id, CleanSession: true},
		Inflight:  20,
		OnPublish: onPublish,
	})
	if err != nil {
		t.Fatalf("CONNECT to %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// roundTrip subscribes at qos, publishes n numbered messages at qos and returns how often each
// number arrived once the publisher's acknowledgements are in and deliveries stopped.
func roundTrip(t *testing.T, addr string, tc *tls.Config, topic string, qos byte, n int) []int {
	t.Helper()
	counts := make([]int, n)
	var mu sync.Mutex
	var got atomic.Int64
	sub := connect(t, addr, tc, "sub-"+topic, func(p *mqtt.Publish) {
		i, err := strconv.Atoi(string(p.Payload))
		if err != nil || i < 0 || i >= n {
			t.Errorf("payload %q", p.Payload)
			return
		}
		mu.Lock()
		counts[i]++
		mu.Unlock()
		got.Add(1)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	granted, err := sub.Subscribe(ctx, mqtt.Subscription{Filter: topic, QoS: qos})
	if err != nil || len(granted) != 1 || granted[0] != qos {
		t.Fatalf("SUBSCRIBE %s at QoS %d: granted %v, %v", topic, qos, granted, err)
	}
	pub := connect(t, addr, tc, "pub-"+topic, nil)
	for i := range n {
		if _, err := pub.Publish(topic, []byte(strconv.Itoa(i)), qos, false, true); err != nil {
			t.Fatal(err)
		}
	}
	if err := pub.WaitInflight(ctx); err != nil {
		t.Fatal(err)
	}
	// Deliveries are done when the count reaches n and stays there (duplicates would follow).
	last := int64(-1)
	for ctx.Err() == nil {
		now := got.Load()
		if now >= int64(n) && now == last {
			break
		}
		last = now
		time.Sleep(200 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	return append([]int(nil), counts...)
}

// TestBroker: a plain broker serves MQTT 3.1.1 at QoS 0 and 1, grants QoS 1 to a QoS 2
// subscription, refuses MQTT 5, and leaves no process or file behind after Stop.
func TestBroker(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	p := startBroker(t, Options{MaxInflight: 20})
	if p.Version != "3.10.8" {
		t.Errorf("version %q, want Debian bookworm's 3.10.8", p.Version)
	}
	if u, err := p.Usage(); err != nil || u.RSS == 0 {
		t.Errorf("usage %+v, %v", u, err)
	} else {
		t.Logf("idle broker: RSS %d MiB, CPU %s to start", u.RSS>>20, u.CPU)
	}
	procs := family(p.PID())
	procs = append(procs, p.EpmdPID())
	if len(procs) < 3 { // the VM, its erl_child_setup, epmd
		t.Errorf("processes %v: want the VM, its children and epmd", procs)
	}

	t.Run("QoS 0", func(t *testing.T) {
		counts := roundTrip(t, p.Addr, nil, "qos0", 0, 100)
		for i, c := range counts {
			if c > 1 {
				t.Errorf("message %d arrived %d times at QoS 0", i, c)
			}
		}
		if sum(counts) == 0 {
			t.Error("no QoS 0 message arrived")
		}
	})
	t.Run("QoS 1 delivers every message exactly once on a clean run", func(t *testing.T) {
		for i, c := range roundTrip(t, p.Addr, nil, "qos1", 1, 1000) {
			if c != 1 {
				t.Errorf("message %d arrived %d times", i, c)
			}
		}
	})
	t.Run("QoS 2 subscription is granted QoS 1", func(t *testing.T) {
		c := connect(t, p.Addr, nil, "qos2", nil)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		granted, err := c.Subscribe(ctx, mqtt.Subscription{Filter: "qos2", QoS: 2})
		if err != nil || !bytes.Equal(granted, []byte{1}) {
			t.Errorf("SUBACK for QoS 2: %v, %v; want granted QoS 1", granted, err)
		}
	})
	t.Run("MQTT 5 CONNECT refused", func(t *testing.T) {
		// 3.10 knows protocol levels 3 and 4 only: its frame parser fails on MQTT 5's properties,
		// and it closes the connection without a CONNACK (no reason code to read).
		if got := rawConnect(t, p.Addr, mqtt.V5); len(got) != 0 {
			t.Errorf("answer to an MQTT 5 CONNECT: % x, want none", got)
		}
		deadline := time.Now().Add(5 * time.Second)
		for !strings.Contains(p.Log(), "MQTT cannot parse a frame") && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if !strings.Contains(p.Log(), "MQTT cannot parse a frame") {
			t.Errorf("the broker did not log why it closed the MQTT 5 connection: %s", p.Log())
		}
	})

	dir, epmdAddr := p.Dir, net.JoinHostPort("127.0.0.1", strconv.Itoa(epmdPort(t, p.EpmdPID())))
	t0 := time.Now()
	if err := p.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
	t.Logf("stopped in %s", time.Since(t0).Round(time.Millisecond))
	assertGone(t, procs, dir)
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("folder %s left behind (%v)", dir, err)
	}
	if c, err := net.DialTimeout("tcp", epmdAddr, time.Second); err == nil {
		_ = c.Close()
		t.Errorf("epmd still listens on %s", epmdAddr)
	}
}

// TestTwoTLSBrokersAtOnce: two brokers run side by side, one serving TLS 1.2 and one TLS 1.3 with
// their generated CAs; each refuses the other version, and both serve plain MQTT too.
func TestTwoTLSBrokersAtOnce(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	versions := []string{"1.2", "1.3"}
	brokers := make([]*Process, len(versions))
	errs := make([]error, len(versions))
	var wg sync.WaitGroup
	t0 := time.Now()
	for i, v := range versions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			brokers[i], errs[i] = Start(context.Background(), Options{TLS: true, TLSVersion: v, MaxInflight: 20})
		}()
	}
	wg.Wait()
	for i, b := range brokers {
		if b != nil {
			t.Cleanup(func() { _ = b.Stop() })
		}
		if errs[i] != nil {
			t.Fatalf("TLS %s: %v", versions[i], errs[i])
		}
	}
	t.Logf("two brokers ready in %s", time.Since(t0).Round(time.Millisecond))
	if brokers[0].EpmdPID() == brokers[1].EpmdPID() || brokers[0].Dir == brokers[1].Dir {
		t.Fatal("the brokers share an epmd or a folder")
	}
	for i, b := range brokers {
		t.Run("TLS "+versions[i], func(t *testing.T) {
			tc, err := certs.ClientTLS(b.CA, "127.0.0.1", versions[i])
			if err != nil {
				t.Fatal(err)
			}
			for j, c := range roundTrip(t, b.TLSAddr, tc, "tls", 1, 100) {
				if c != 1 {
					t.Errorf("message %d arrived %d times over TLS", j, c)
				}
			}
			c := connect(t, b.TLSAddr, tc, "version-check", nil)
			if got := c.NetConn().(*tls.Conn).ConnectionState().Version; got != tc.MinVersion {
				t.Errorf("negotiated %s", tls.VersionName(got))
			}
			other, _ := certs.ClientTLS(b.CA, "127.0.0.1", versions[1-i])
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := mqtt.Probe(ctx, nil, b.TLSAddr, other); err == nil || !strings.Contains(err.Error(), "TLS handshake") {
				t.Errorf("TLS %s listener with a TLS %s client: %v, want a failed handshake", versions[i], versions[1-i], err)
			}
			untrusted := &tls.Config{ServerName: "127.0.0.1", MinVersion: tc.MinVersion, MaxVersion: tc.MaxVersion}
			if err := mqtt.Probe(ctx, nil, b.TLSAddr, untrusted); err == nil {
				t.Error("a client without the generated CA trusted the broker")
			}
			if err := mqtt.Probe(ctx, nil, b.Addr, nil); err != nil {
				t.Errorf("plain listener beside TLS: %v", err)
			}
		})
	}
}

// TestBrokerDiesWithMsgbench: when the process that started the broker is killed (SIGKILL, no
// Stop), the VM, its children and its epmd end with it.
func TestBrokerDiesWithMsgbench(t *testing.T) {
	if os.Getenv("MSGBENCH_RABBITMQ_HELPER") == "1" {
		p, err := Start(context.Background(), Options{})
		if err != nil {
			fmt.Println("ERROR", err)
			os.Exit(1)
		}
		procs := append(family(p.PID()), p.EpmdPID())
		fmt.Println("BROKER", p.Dir, strings.Trim(fmt.Sprint(procs), "[]"))
		time.Sleep(time.Hour)
		return
	}
	tmp := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestBrokerDiesWithMsgbench$")
	cmd.Env = append(os.Environ(), "MSGBENCH_RABBITMQ_HELPER=1", "TMPDIR="+tmp)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := bufio.NewScanner(out)
	var dir string
	var procs []int
	for lines.Scan() {
		f := strings.Fields(lines.Text())
		if len(f) > 0 && f[0] == "ERROR" {
			t.Fatal(lines.Text())
		}
		if len(f) > 2 && f[0] == "BROKER" {
			dir = f[1]
			for _, s := range f[2:] {
				pid, _ := strconv.Atoi(s)
				procs = append(procs, pid)
			}
			break
		}
	}
	if dir == "" {
		t.Fatal("the helper printed no broker")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	assertGone(t, procs, dir)
}

// rawConnect sends a clean CONNECT of the given protocol level and returns every byte the broker
// sends before it closes the connection.
func rawConnect(t *testing.T, addr string, version byte) []byte {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(mqtt.AppendConnect(nil, &mqtt.ConnectOptions{Version: version, ClientID: "raw", CleanSession: true})); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(c)
	if err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("read after CONNECT: %v (got % x; the broker should close the connection)", err, got)
	}
	return got
}

// family is pid and its descendants, from /proc.
func family(pid int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pp := ppid(p); pp > 0 {
			children[pp] = append(children[pp], p)
		}
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

func ppid(pid int) int {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(stat, ')')
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

// alive: the process exists and is not a zombie waiting for its parent.
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i > 0 && len(stat) > i+2 && stat[i+2] != 'Z'
}

// assertGone waits up to 10 s for procs to end, then checks that no process anywhere still runs
// with dir in its command line or environment (an epmd daemon the node started would).
func assertGone(t *testing.T, procs []int, dir string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range procs {
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if alive(pid) {
			cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			t.Errorf("process %d (%s) still runs", pid, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))
		}
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() || !alive(pid) {
			continue
		}
		for _, f := range []string{"cmdline", "environ"} {
			data, _ := os.ReadFile(filepath.Join("/proc", e.Name(), f))
			if bytes.Contains(data, []byte(dir)) {
				cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
				t.Errorf("process %d (%s) of the broker in %s still runs", pid, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}), dir)
				break
			}
		}
	}
}

// epmdPort reads the port an epmd was told to listen on from its command line.
func epmdPort(t *testing.T, pid int) int {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Split(string(cmdline), "\x00")
	for i, a := range args {
		if a == "-port" && i+1 < len(args) {
			n, _ := strconv.Atoi(args[i+1])
			return n
		}
	}
	t.Fatalf("epmd %d: no -port in %q", pid, args)
	return 0
}

func sum(xs []int) (n int) {
	for _, x := range xs {
		n += x
	}
	return n
}
