package mqttsn_test

import (
	"net"
	"net/netip"
	"sort"
	"sync"
	"testing"

	"github.com/msgbench/msgbench/api/v1alpha1"
	sn "github.com/msgbench/msgbench/internal/mqttsn"
)

// TestDiscoveryThroughAnotherClientsGWINFO: the search address is not a gateway but a device
// that answers SEARCHGW for one (MQTT-SN 1.2 §6.1: a client's GWINFO carries the gateway's
// address, GwAdd), first with an ADVERTISE of another gateway, which a searching client does not
// take. Each client connects to the gateway GwAdd names, from its own spec.mqttsn.sourcePort,
// the port it searched from; every message arrives; the environment names the gateway and
// counts one SEARCHGW per client; the run never touches the address it was given (port 9).
func TestDiscoveryThroughAnotherClientsGWINFO(t *testing.T) {
	b := startBroker(t)
	s := spec(1, v1alpha1.TopicIDNormal, v1alpha1.GatewayTransparent)
	g := startGateway(t, b.Addr, "127.0.0.1:0", s)
	gwAddr := g.Addr().(*net.UDPAddr).AddrPort()

	answerer, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer answerer.Close()
	var mu sync.Mutex
	var from []int
	go func() {
		buf := make([]byte, 512)
		a := gwAddr.Addr().As4()
		gwAdd := append(a[:], byte(gwAddr.Port()>>8), byte(gwAddr.Port()))
		for {
			n, client, err := answerer.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			if typ, _, err := sn.ReadHeader(buf[:n]); err != nil || typ != sn.SEARCHGW {
				continue
			}
			mu.Lock()
			from = append(from, int(client.Port()))
			mu.Unlock()
			adv, _ := (&sn.Advertise{GatewayID: 3, Duration: 900}).Append(nil)
			info, _ := (&sn.GWInfo{GatewayID: 7, GatewayAddress: gwAdd}).Append(nil)
			_, _ = answerer.WriteToUDPAddrPort(adv, client)
			_, _ = answerer.WriteToUDPAddrPort(info, client)
		}
	}()

	port := freePorts(t, 4)
	p := int32(port)
	s.MQTTSN.SourcePort = &p
	s.MQTTSN.Discovery = &v1alpha1.MQTTSNDiscoverySpec{Address: answerer.LocalAddr().String()}
	res := run(t, s, "127.0.0.1:9")
	if *res.Lost != 0 || res.Received != res.Expected+*res.Duplicates || res.Acked != res.Sent {
		t.Errorf("lost %d, received %d of %d, acked %d of %d", *res.Lost, res.Received, res.Expected, res.Acked, res.Sent)
	}
	d := res.Environment.Discovery
	if d == nil {
		t.Fatal("no environment.mqttsnDiscovery")
	}
	t.Logf("discovery %+v", *d)
	want := "gateway 7 at " + netip.AddrPortFrom(gwAddr.Addr(), gwAddr.Port()).String()
	if d.Found != 4 || d.Searches != 4 || len(d.Gateways) != 1 || d.Gateways[0] != want || len(d.Searched) != 1 || d.Searched[0] != answerer.LocalAddr().String() {
		t.Errorf("discovery %+v, want 4 found with 4 SEARCHGW, %q, searched at %s", *d, want, answerer.LocalAddr())
	}
	mu.Lock()
	sort.Ints(from)
	mu.Unlock()
	if len(from) != 4 || from[0] != port || from[3] != port+3 {
		t.Errorf("SEARCHGW came from ports %v, want %d to %d (spec.mqttsn.sourcePort)", from, port, port+3)
	}
}

// freePorts finds n consecutive UDP ports free on 127.0.0.1 and returns the first.
func freePorts(t *testing.T, n int) int {
	t.Helper()
	for try := 0; try < 50; try++ {
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		first := c.LocalAddr().(*net.UDPAddr).Port
		_ = c.Close()
		if first+n > 65535 {
			continue
		}
		ok := true
		for i := range n {
			c, err := net.ListenUDP("udp4", &net.UDPAddr{Port: first + i})
			if err != nil {
				ok = false
				break
			}
			_ = c.Close()
		}
		if ok {
			return first
		}
	}
	t.Fatal("no free ports")
	return 0
}
