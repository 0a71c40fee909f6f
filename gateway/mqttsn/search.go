package mqttsn

import (
	"errors"
	"net"
	"net/netip"
	"strconv"

	sn "github.com/msgbench/msgbench/internal/mqttsn"
)

// Answering SEARCHGW sent to a broadcast address (Config.AnswerBroadcast).
//
// A socket bound to one unicast address, as the gateway's is, receives nothing sent to a
// broadcast address. So a gateway whose clients search by broadcast (spec.mqttsn.discovery)
// also listens, at its port, on 255.255.255.255 and on the broadcast address of its own
// address's subnet; a SEARCHGW arriving there is answered from the gateway's own socket, so
// the GWINFO comes from its unicast address, which the client then connects to. Nothing else is
// accepted there. A gateway listening on every address (0.0.0.0) receives broadcasts on its own
// socket already, and answers them from the address the route to the client chooses; one on
// loopback or IPv6 (which has no broadcast) opens nothing more.

// listenBroadcast opens the broadcast sockets and starts their readers.
func (g *Gateway) listenBroadcast() error {
	la, ok := g.pc.LocalAddr().(*net.UDPAddr)
	if !ok {
		return nil
	}
	ap := la.AddrPort()
	ip := ap.Addr().Unmap()
	if !ip.Is4() || ip.IsUnspecified() || ip.IsLoopback() {
		return nil
	}
	addrs := []netip.Addr{netip.AddrFrom4([4]byte{255, 255, 255, 255})}
	var sub netip.Addr
	var found bool
	if err := g.raw.Control(func(fd uintptr) { sub, found = subnetBroadcast(fd, ip) }); err == nil && found {
		addrs = append(addrs, sub)
	}
	for _, a := range addrs {
		address := net.JoinHostPort(a.String(), strconv.Itoa(int(ap.Port())))
		pc, err := g.o.ListenUDPOrDefault(g.ctx, address)
		if err != nil {
			return err
		}
		g.o.Log("mqtt-sn gateway: answering SEARCHGW sent to %s", address)
		g.broadcast = append(g.broadcast, pc)
		g.wg.Add(1)
		go g.readBroadcast(pc)
	}
	return nil
}

// readBroadcast answers the SEARCHGWs arriving on a broadcast socket until it closes.
func (g *Gateway) readBroadcast(pc net.PacketConn) {
	defer g.wg.Done()
	buf := make([]byte, 512)
	var reply []byte
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) || g.ctx.Err() != nil {
				return
			}
			continue
		}
		g.st.datagramsIn.Add(1)
		g.st.bytesIn.Add(uint64(n))
		t, body, err := sn.ReadHeader(buf[:n])
		var m sn.SearchGW
		if err != nil || t != sn.SEARCHGW || m.Decode(body) != nil {
			g.st.drop(DropUnexpected) // only a search is broadcast to a gateway
			continue
		}
		ua, ok := from.(*net.UDPAddr)
		if !ok {
			continue
		}
		reply, _ = (&sn.GWInfo{GatewayID: g.cfg.GatewayID}).Append(reply[:0])
		g.send(ua.AddrPort(), reply)
	}
}
