package mqttsn

import (
	"net"
	"testing"
	"time"

	sn "github.com/msgbench/msgbench/internal/mqttsn"
)

// A gateway answers SEARCHGW by broadcast when its clients search by an address of their own
// (spec.mqttsn.discovery.address), not when they search at the gateway's address or not at all.
// On loopback it opens nothing more (loopback has no broadcast) and still answers a unicast
// SEARCHGW with its id. (Broadcast itself: localrun's TestMQTTSNDiscovery/link-broadcast, in
// the emulator's namespaces.)
func TestAnswerBroadcast(t *testing.T) {
	for _, tc := range []struct {
		set  []string
		want bool
	}{
		{nil, false},
		{[]string{"mqttsn.discovery.radius=1"}, false},
		{[]string{`mqttsn.discovery.address="255.255.255.255"`}, true},
	} {
		c, err := ConfigFromGroups(sampleGroups(t, tc.set...))
		if err != nil || c.AnswerBroadcast != tc.want {
			t.Errorf("%v: AnswerBroadcast %v (%v), want %v", tc.set, c.AnswerBroadcast, err, tc.want)
		}
	}

	b := startBroker(t)
	g := startGateway(t, b.Addr, "127.0.0.1:0", Config{GatewayID: 4, AnswerBroadcast: true})
	if len(g.broadcast) != 0 {
		t.Errorf("a loopback gateway opened %d broadcast sockets", len(g.broadcast))
	}
	c, err := net.Dial("udp", g.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req, _ := (&sn.SearchGW{Radius: 1}).Append(nil)
	if _, err := c.Write(req); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	typ, body, _ := sn.ReadHeader(buf[:n])
	var gi sn.GWInfo
	if err != nil || typ != sn.GWINFO || gi.Decode(body) != nil || gi.GatewayID != 4 || len(gi.GatewayAddress) != 0 {
		t.Errorf("answer % x (%v), want GWINFO of gateway 4 without an address", buf[:n], err)
	}
}
