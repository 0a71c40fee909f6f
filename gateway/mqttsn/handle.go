package mqttsn

import (
	"net/netip"
	"time"

	sn "github.com/msgbench/msgbench/internal/mqttsn"
)

// handle processes one datagram on the reader goroutine. Nothing here blocks on the broker: a
// broker round trip (connect, subscribe) runs on its own goroutine, and a PUBLISH goes to the
// broker connection's buffer.
func (g *Gateway) handle(from netip.AddrPort, b []byte) {
	g.st.datagramsIn.Add(1)
	g.st.bytesIn.Add(uint64(len(b)))
	t, body, err := sn.ReadHeader(b)
	if err != nil {
		g.st.drop(DropMalformed)
		return
	}
	g.mu.RLock()
	c := g.byAddr[from]
	g.mu.RUnlock()
	if c != nil {
		c.lastRx.Store(time.Now().UnixNano())
	}
	switch t {
	case sn.PUBLISH:
		p := &g.pub
		if p.Decode(body) != nil {
			g.st.drop(DropMalformed)
			return
		}
		if p.Flags.QoS() == -1 {
			g.publishNoSession(c, p)
			return
		}
		if c == nil {
			g.st.drop(DropNotConnected)
			return
		}
		c.onPublish(p)
	case sn.PUBACK, sn.PUBREC, sn.PUBCOMP:
		if c == nil {
			g.st.drop(DropNotConnected)
			return
		}
		c.onDownstreamAck(t, body)
	case sn.PUBREL:
		var a sn.Ack
		a.T = t
		if a.Decode(body) != nil {
			g.st.drop(DropMalformed)
			return
		}
		if c == nil {
			g.st.drop(DropNotConnected)
			return
		}
		c.onPubrel(a.MsgID)
	case sn.CONNECT:
		var m sn.Connect
		if m.Decode(body) != nil {
			g.st.drop(DropMalformed)
			return
		}
		g.onConnect(from, c, &m)
	case sn.WILLTOPIC, sn.WILLMSG, sn.WILLTOPICUPD, sn.WILLMSGUPD:
		if c == nil {
			g.st.drop(DropNotConnected)
			return
		}
		c.onWill(t, body)
	case sn.REGISTER:
		var m sn.Register
		if m.Decode(body) != nil {
			g.st.drop(DropMalformed)
			return
		}
		if c == nil {
			g.st.drop(DropNotConnected)
			return
		}
		c.onRegister(&m)
	case sn.REGACK:
		m := sn.IDAck{T: t}
		if m.Decode(body) != nil {
			g.st.drop(DropMalformed)
			return
		}
		if c == nil {
			g.st.drop(DropNotConnected)
			return
		}
		c.onRegack(&m)
	case sn.SUBSCRIBE, sn.UNSUBSCRIBE:
		m := sn.Subscribe{T: t}
		if m.Decode(body) != nil {
			g.st.drop(DropMalformed)
			return
		}
		if c == nil {
			g.st.drop(DropNotConnected)
			return
		}
		c.onSubscribe(&m)
	case sn.PINGREQ:
		var m sn.Pingreq
		_ = m.Decode(body)
		g.onPingreq(from, c, &m)
	case sn.DISCONNECT:
		var m sn.Disconnect
		if m.Decode(body) != nil {
			g.st.drop(DropMalformed)
			return
		}
		if c == nil {
			// Answer anyway: a client whose DISCONNECT reply was lost retransmits it.
			g.reply, _ = (&sn.Disconnect{}).Append(g.reply[:0])
			g.send(from, g.reply)
			return
		}
		c.onDisconnect(&m)
	case sn.SEARCHGW:
		var m sn.SearchGW
		if m.Decode(body) != nil {
			g.st.drop(DropMalformed)
			return
		}
		g.reply, _ = (&sn.GWInfo{GatewayID: g.cfg.GatewayID}).Append(g.reply[:0])
		g.send(from, g.reply)
	case sn.ADVERTISE, sn.GWINFO:
		// Another gateway's announcement, or a client answering SEARCHGW for us: nothing to do.
		g.st.drop(DropUnexpected)
	default:
		if t.Known() { // a gateway-to-client message sent to the gateway
			g.st.drop(DropUnexpected)
		} else {
			g.st.drop(DropMalformed)
		}
	}
}
