package mqttsn_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/msgbench/msgbench/api/v1alpha1"
	"github.com/msgbench/msgbench/brokers/mosquitto"
	"github.com/msgbench/msgbench/gateway"
	gw "github.com/msgbench/msgbench/gateway/mqttsn"
	"github.com/msgbench/msgbench/loadgen"
	"github.com/msgbench/msgbench/loadgen/drivers"
	"github.com/msgbench/msgbench/loadgen/drivers/driverstest"
	_ "github.com/msgbench/msgbench/loadgen/drivers/mqttsn"
	"github.com/msgbench/msgbench/plan"
	"github.com/msgbench/msgbench/results"
)

// spec is a defaulted mqtt-sn spec, as manifest parsing would produce it.
func spec(qos int32, idType v1alpha1.MQTTSNTopicIDType, mode v1alpha1.MQTTSNGatewayMode) *v1alpha1.MessagingBenchmarkSpec {
	return &v1alpha1.MessagingBenchmarkSpec{
		Protocol: v1alpha1.ProtocolMQTTSN,
		QoS:      qos,
		MQTT:     v1alpha1.MQTTSpec{Version: v1alpha1.MQTT311, Inflight: 20},
		MQTTSN: v1alpha1.MQTTSNSpec{TopicIDType: idType, GatewayMode: mode,
			RetryInterval: metav1.Duration{Duration: 100 * time.Millisecond}, MaxRetries: ptr.To[int32](10)},
		Broker:  v1alpha1.BrokerSpec{Type: v1alpha1.BrokerMosquitto},
		Workers: v1alpha1.WorkersSpec{Replicas: 1},
		Workload: v1alpha1.WorkloadSpec{
			Publishers: 2, Subscribers: 2, Topics: 2, TopicPrefix: "sn-", PayloadBytes: 64, Rate: 400,
			Duration: metav1.Duration{Duration: time.Second}, Warmup: metav1.Duration{Duration: 200 * time.Millisecond},
			TimelineInterval: metav1.Duration{Duration: 100 * time.Millisecond},
		},
	}
}

func startBroker(t testing.TB) *mosquitto.Process {
	t.Helper()
	b, err := mosquitto.Start(context.Background(), mosquitto.Options{MaxInflight: 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Stop() })
	return b
}

// startGateway starts the registered mqtt-sn gateway mode, configured from the spec's plan.
func startGateway(t testing.TB, broker, listen string, s *v1alpha1.MessagingBenchmarkSpec) *gw.Gateway {
	t.Helper()
	g, err := gateway.Start(context.Background(), "mqtt-sn", gateway.Options{Listen: listen, Broker: broker, Groups: gatewayGroups(t, s, "mqtt-sn")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	return g.(*gw.Gateway)
}

// gatewayGroups are the groups of s's compiled plan that the gateway of mode serves.
func gatewayGroups(t testing.TB, s *v1alpha1.MessagingBenchmarkSpec, mode string) []plan.Group {
	t.Helper()
	p, err := plan.Compile(s, plan.Admitted)
	if err != nil {
		t.Fatal(err)
	}
	return p.GatewayGroups(mode)
}

func run(t testing.TB, s *v1alpha1.MessagingBenchmarkSpec, addr string) *results.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := loadgen.Run(ctx, loadgen.Options{Name: "mqttsn", Spec: s, Address: addr})
	if err != nil {
		t.Fatal(err)
	}
	if res.Phase != "Succeeded" {
		t.Fatalf("phase %s: %s", res.Phase, res.Message)
	}
	return res
}

// TestEngineThroughGateway runs the load generator with protocol mqtt-sn through the gateway
// to a real Mosquitto, for every QoS and topic id type and both gateway modes: every message
// arrives on a loss-free link, QoS 1/2 publishes are acknowledged, and the wire counters count
// UDP datagrams.
func TestEngineThroughGateway(t *testing.T) {
	b := startBroker(t)
	tests := []struct {
		qos    int32
		idType v1alpha1.MQTTSNTopicIDType
		mode   v1alpha1.MQTTSNGatewayMode
		listen string
	}{
		{-1, v1alpha1.TopicIDPredefined, v1alpha1.GatewayTransparent, "127.0.0.1:0"},
		{-1, v1alpha1.TopicIDShort, v1alpha1.GatewayAggregating, "127.0.0.1:0"},
		{0, v1alpha1.TopicIDNormal, v1alpha1.GatewayTransparent, "127.0.0.1:0"},
		{1, v1alpha1.TopicIDNormal, v1alpha1.GatewayTransparent, "[::1]:0"},
		{1, v1alpha1.TopicIDPredefined, v1alpha1.GatewayAggregating, "127.0.0.1:0"},
		{2, v1alpha1.TopicIDShort, v1alpha1.GatewayTransparent, "127.0.0.1:0"},
		{2, v1alpha1.TopicIDNormal, v1alpha1.GatewayAggregating, "[::1]:0"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("qos%d/%s/%s/%s", tt.qos, tt.idType, tt.mode, tt.listen), func(t *testing.T) {
			s := spec(tt.qos, tt.idType, tt.mode)
			g := startGateway(t, b.Addr, tt.listen, s)
			res := run(t, s, g.Addr().String())
			t.Logf("sent %d received %d expected %d lost %d dups %d acked %d, connect p50 %dµs, %d datagrams out", res.Sent, res.Received, res.Expected, *res.Lost, *res.Duplicates, res.Acked, res.Latency.Connect.P50Micros, *res.Wire.DatagramsSent)
			if res.Sent < 300 || res.Received == 0 {
				t.Fatalf("sent %d, received %d", res.Sent, res.Received)
			}
			// QoS 1 may deliver a retransmitted message twice when a busy machine delays an
			// acknowledgement past T_retry; every other QoS must deliver exactly once here.
			if *res.Lost != 0 || (tt.qos != 1 && *res.Duplicates != 0) || res.Received != res.Expected+*res.Duplicates {
				t.Errorf("lost %d, duplicates %d, received %d of %d", *res.Lost, *res.Duplicates, res.Received, res.Expected)
			}
			if tt.qos > 0 && res.Acked != res.Sent {
				t.Errorf("acked %d of %d", res.Acked, res.Sent)
			}
			if res.Wire.DatagramsSent == nil || *res.Wire.DatagramsSent < res.Sent {
				t.Errorf("datagrams sent %v < messages %d", res.Wire.DatagramsSent, res.Sent)
			}
			// A 64-byte payload is a 71-byte PUBLISH: the publishers' steady-state uplink cost
			// is exactly that (plus, at QoS 2, the 4-byte PUBREL).
			want := map[int32]float64{-1: 71, 0: 71, 1: 71, 2: 75}[tt.qos]
			if got := res.Wire.PublishBytesPerMessage; got == nil || *got < want-0.1 || *got > want+1 { // the last PUBRELs may follow the count
				t.Errorf("publish bytes per message %.2f, want %.0f", *got, want)
			}
			if st := g.Stats(); st.DropTotal() != 0 {
				t.Errorf("gateway dropped: %v", st.Drops)
			}
		})
	}
}

// lossyProxy relays UDP between clients and the gateway, dropping a fixed fraction of the
// datagrams in each direction with a seeded RNG. Each client gets its own upstream socket, so the
// gateway still tells clients apart by address.
type lossyProxy struct {
	ln      *net.UDPConn
	gateway *net.UDPAddr
	loss    float64
	mu      sync.Mutex
	rng     *rand.Rand
	peers   map[netip.AddrPort]*net.UDPConn
	dropped int
	passed  int
}

func newLossyProxy(t testing.TB, gateway net.Addr, loss float64, seed uint64) *lossyProxy {
	t.Helper()
	ln, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	p := &lossyProxy{ln: ln, gateway: gateway.(*net.UDPAddr), loss: loss, rng: rand.New(rand.NewPCG(seed, 1)), peers: map[netip.AddrPort]*net.UDPConn{}}
	t.Cleanup(p.close)
	go p.fromClients()
	return p
}

func (p *lossyProxy) drop() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rng.Float64() < p.loss {
		p.dropped++
		return true
	}
	p.passed++
	return false
}

func (p *lossyProxy) fromClients() {
	buf := make([]byte, 65536)
	for {
		n, from, err := p.ln.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		p.mu.Lock()
		up := p.peers[from]
		if up == nil {
			if up, err = net.DialUDP("udp", nil, p.gateway); err != nil {
				p.mu.Unlock()
				return
			}
			p.peers[from] = up
			go p.toClient(up, from)
		}
		p.mu.Unlock()
		if !p.drop() {
			_, _ = up.Write(buf[:n])
		}
	}
}

func (p *lossyProxy) toClient(up *net.UDPConn, client netip.AddrPort) {
	buf := make([]byte, 65536)
	for {
		n, err := up.Read(buf)
		if err != nil {
			return
		}
		if !p.drop() {
			_, _ = p.ln.WriteToUDPAddrPort(buf[:n], client)
		}
	}
}

func (p *lossyProxy) close() {
	_ = p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.peers {
		_ = c.Close()
	}
}

// TestLossyLink drops 10 % of the datagrams in each direction between the clients and the
// gateway: QoS 1 and 2 still deliver every message (QoS 2 without duplicates), thanks to
// retransmission on both sides; QoS 0 loses about what two lossy hops lose, 1 − 0.9² = 19 %.
func TestLossyLink(t *testing.T) {
	b := startBroker(t)
	for _, qos := range []int32{0, 1, 2} {
		t.Run(fmt.Sprintf("qos%d", qos), func(t *testing.T) {
			s := spec(qos, v1alpha1.TopicIDNormal, v1alpha1.GatewayTransparent)
			s.MQTTSN.RetryInterval.Duration = 30 * time.Millisecond
			s.MQTTSN.MaxRetries = ptr.To[int32](30)
			// A rate each QoS sustains through 10 % loss and 30 ms retries (QoS 2 needs four
			// datagrams a message; beyond it the run fails as not sustained, which is not what
			// this test is about).
			s.Workload.Rate = []int32{300, 120, 50}[qos]
			s.Workload.Duration.Duration = 1500 * time.Millisecond
			g := startGateway(t, b.Addr, "127.0.0.1:0", s)
			p := newLossyProxy(t, g.Addr(), 0.10, uint64(qos)+42)
			res := run(t, s, p.ln.LocalAddr().String())
			lossRate := float64(*res.Lost) / float64(res.Expected)
			p.mu.Lock() // the proxy still relays (keep-alives, DISCONNECTs)
			dropped, passed := p.dropped, p.passed
			p.mu.Unlock()
			t.Logf("qos %d: sent %d received %d expected %d lost %d (%.1f%%) dups %d; proxy dropped %d of %d datagrams; gateway retransmitted %d",
				qos, res.Sent, res.Received, res.Expected, *res.Lost, 100*lossRate, *res.Duplicates, dropped, dropped+passed, g.Stats().Retransmissions)
			if want := int64(float64(s.Workload.Rate) * 1.5 * 0.9); res.Sent < want {
				t.Fatalf("sent only %d, want at least %d", res.Sent, want)
			}
			switch qos {
			case 0:
				if lossRate < 0.12 || lossRate > 0.26 {
					t.Errorf("QoS 0 lost %.1f%%, want about 19%%", 100*lossRate)
				}
			case 1:
				if *res.Lost != 0 {
					t.Errorf("QoS 1 lost %d", *res.Lost)
				}
			case 2:
				if *res.Lost != 0 || *res.Duplicates != 0 {
					t.Errorf("QoS 2 lost %d, duplicated %d", *res.Lost, *res.Duplicates)
				}
			}
		})
	}
}

// slowCompletions is a drivers.Handler whose Completed takes a while.
type slowCompletions struct{ completed atomic.Int32 }

func (h *slowCompletions) Message([]byte) {}
func (h *slowCompletions) Completed(int64, bool) {
	time.Sleep(50 * time.Millisecond)
	h.completed.Add(1)
}

// TestDrainWaitsForCompleted: Drain returns only after the handler has heard of the last
// acknowledgement. The driver used to free the window slot first, so a run that counted
// acknowledgements right after Drain could be one short.
func TestDrainWaitsForCompleted(t *testing.T) {
	b := startBroker(t)
	s := spec(1, v1alpha1.TopicIDPredefined, v1alpha1.GatewayTransparent)
	g := startGateway(t, b.Addr, "127.0.0.1:0", s)
	d, err := drivers.New("mqtt-sn", drivers.Config{Group: driverstest.Group(t, s), Address: g.Addr().String(), Now: func() int64 { return time.Now().UnixNano() }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h := &slowCompletions{}
	sess, err := d.Connect(ctx, drivers.Client{ID: "drain-pub", Role: drivers.Publisher, Topic: s.Workload.TopicName(0)}, h)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close() //nolint:errcheck // end of test
	for range 3 {
		if err := sess.Publish([]byte("x"), true); err != nil {
			t.Fatal(err)
		}
	}
	if err := sess.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if n := h.completed.Load(); n != 3 {
		t.Fatalf("Drain returned with %d of 3 acknowledgements handled", n)
	}
}
