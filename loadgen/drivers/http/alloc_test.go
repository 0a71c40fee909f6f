package http_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/gateway"
	gwhttp "github.com/msgbench/msgbench/gateway/http"
	"github.com/msgbench/msgbench/internal/certs"
	"github.com/msgbench/msgbench/internal/proc"
	"github.com/msgbench/msgbench/loadgen/drivers"
	"github.com/msgbench/msgbench/loadgen/drivers/driverstest"
	httpdrv "github.com/msgbench/msgbench/loadgen/drivers/http"
	"github.com/msgbench/msgbench/plan"
)

// TestMain lets this test binary be the gateway of the allocation tests: in a process of its
// own, its allocations are not counted with the client's.
func TestMain(m *testing.M) {
	if os.Getenv("MSGBENCH_TEST_GATEWAY") != "" {
		if err := serveGateway(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// serveGateway runs a Mosquitto and a cleartext and a TLS HTTP gateway in front of it, prints
// "plain-address secure-address" and the CA as one line of hex, and serves until killed.
func serveGateway() error {
	ctx := context.Background()
	b, err := mosquitto.Start(ctx, mosquitto.Options{MaxInflight: 20})
	if err != nil {
		return err
	}
	defer func() { _ = b.Stop() }()
	bundle, err := certs.New("gw", []string{"127.0.0.1"}, time.Hour)
	if err != nil {
		return err
	}
	srv, err := bundle.ServerTLS()
	if err != nil {
		return err
	}
	p, err := plan.Compile(spec(v1alpha1.HTTP11, false, true, 1), plan.Admitted)
	if err != nil {
		return err
	}
	gs := p.GatewayGroups("http")
	plain, err := gwhttp.Start(ctx, gateway.Options{Listen: "127.0.0.1:0", Broker: b.Addr, Groups: gs}, gwhttp.Limits{})
	if err != nil {
		return err
	}
	secure, err := gwhttp.Start(ctx, gateway.Options{Listen: "127.0.0.1:0", Broker: b.Addr, Groups: gs, TLS: srv}, gwhttp.Limits{})
	if err != nil {
		return err
	}
	fmt.Printf("%s %s %x\n", plain.Addr(), secure.Addr(), bundle.CACert)
	select {}
}

// childGateway starts the gateway process and returns the loadgen-side options for a spec.
func childGateway(t testing.TB) func(s *v1alpha1.MessagingBenchmarkSpec) drivers.Config {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "MSGBENCH_TEST_GATEWAY=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proc.Stop(cmd, 5*time.Second) })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("gateway process: %v", err)
	}
	var plain, secure string
	var ca []byte
	if _, err := fmt.Sscanf(strings.TrimSpace(line), "%s %s %x", &plain, &secure, &ca); err != nil {
		t.Fatalf("gateway process said %q: %v", line, err)
	}
	clientTLS, err := certs.ClientTLS(ca, "127.0.0.1", "1.3")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	return func(s *v1alpha1.MessagingBenchmarkSpec) drivers.Config {
		cfg := drivers.Config{Group: driverstest.Group(t, s), Address: plain, Now: func() int64 { return int64(time.Since(start)) }}
		if s.HTTP.Version == v1alpha1.HTTP3 || (s.TLS != nil && s.TLS.Enabled) {
			cfg.Address, cfg.TLS = secure, clientTLS
		}
		return cfg
	}
}

// TestPublishAllocatesNothing: a publisher's steady state — Publish, the request's frames, the
// response parsed and Completed — allocates nothing in msgbench's HTTP/1.1 and HTTP/2 clients,
// closed loop with one request in flight and with 16. In HTTP/3 each request's QUIC stream costs
// quic-go 25–27 allocations (docs/benchmarks-http.md §1b), so there a memory profile of the
// steady state must attribute none to msgbench's code. The gateway runs in another process, so
// every allocation counted here is the client's.
func TestPublishAllocatesNothing(t *testing.T) {
	config := childGateway(t)
	for _, c := range []struct {
		version  v1alpha1.HTTPVersion
		tls      bool
		inflight int32
	}{{v1alpha1.HTTP11, false, 1}, {v1alpha1.HTTP2, false, 1}, {v1alpha1.HTTP2, false, 16}, {v1alpha1.HTTP2, true, 16},
		{v1alpha1.HTTP3, true, 1}, {v1alpha1.HTTP3, true, 16}} {
		name := fmt.Sprintf("http%s/tls=%v/inflight%d", c.version, c.tls, c.inflight)
		t.Run(name, func(t *testing.T) {
			s := spec(c.version, c.tls, true, 1)
			s.MQTT.Inflight = c.inflight
			drv, err := httpdrv.New(config(s), httpdrv.Options{})
			if err != nil {
				t.Fatal(err)
			}
			h := &counting{}
			sess, err := drv.Connect(context.Background(), drivers.Client{ID: "allocs", Role: drivers.Publisher, Topic: "allocs/t"}, h)
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			payload := make([]byte, 256)
			publish := func() {
				if err := sess.Publish(payload, c.inflight == 1); err != nil {
					t.Fatal(err)
				}
			}
			for range 2000 { // buffers, maps and the HPACK tables grow to their steady size
				publish()
			}
			want := 2000 + 2001
			if c.version == v1alpha1.HTTP3 {
				ours := allocatedBy(t, "github.com/msgbench/msgbench/loadgen/drivers/http.", func() {
					for range 2000 {
						publish()
					}
				})
				want += 2000
				if len(ours) > 0 {
					t.Errorf("msgbench's HTTP/3 client allocated in its steady state:\n%s", strings.Join(ours, "\n"))
				}
			}
			allocs := testing.AllocsPerRun(2000, publish)
			if err := sess.Drain(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := h.ok.Load(); got != int64(want) {
				t.Fatalf("%d of %d responses were 2xx", got, want)
			}
			t.Logf("%.2f allocations per publish", allocs)
			if c.version != v1alpha1.HTTP3 && allocs > 0.01 {
				t.Errorf("%.3f allocations per publish, want 0", allocs)
			}
		})
	}
}

// allocatedBy runs fn with every allocation profiled and returns where code in the package with
// the given prefix allocated: each allocation is charged to the first function on its stack that
// is neither the runtime's nor the standard library's internals (an allocation quic-go makes
// when msgbench calls it is quic-go's), except the runtime's own refills of its waiter cache.
func allocatedBy(t *testing.T, prefix string, fn func()) []string {
	t.Helper()
	defer func(rate int) { runtime.MemProfileRate = rate }(runtime.MemProfileRate)
	runtime.MemProfileRate = 1
	count := func() map[string]int64 {
		runtime.GC() // the profile is as of the last completed collection
		runtime.GC()
		n, _ := runtime.MemProfile(nil, true)
		records := make([]runtime.MemProfileRecord, n+64)
		n, _ = runtime.MemProfile(records, true)
		by := map[string]int64{}
		for _, r := range records[:n] {
			frames := runtime.CallersFrames(r.Stack())
			inner := ""
			for {
				f, more := frames.Next()
				if inner == "" || strings.HasPrefix(inner, "runtime.mallocgc") || strings.HasPrefix(inner, "runtime.newobject") {
					inner = f.Function
				}
				if !strings.HasPrefix(f.Function, "runtime.") && !strings.HasPrefix(f.Function, "internal/") {
					// The runtime refills its cache of channel waiters after each collection
					// (quic-go's garbage brings them on): that is not the code's allocation.
					if strings.HasPrefix(f.Function, prefix) && inner != "runtime.acquireSudog" {
						by[fmt.Sprintf("%s (%s:%d) via %s", f.Function, f.File, f.Line, inner)] += r.AllocObjects
					}
					break
				}
				if !more {
					break
				}
			}
		}
		return by
	}
	before := count()
	fn()
	var out []string
	for where, n := range count() {
		if d := n - before[where]; d > 0 {
			out = append(out, fmt.Sprintf("%d× %s", d, where))
		}
	}
	return out
}
