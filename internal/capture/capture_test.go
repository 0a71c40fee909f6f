package capture

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/msgbench/msgbench/internal/certs"
	"github.com/msgbench/msgbench/internal/certs/certstest"
)

// start starts a capture or skips the test where packet sockets are not permitted.
func start(t *testing.T, f Filter) *Capture {
	t.Helper()
	c, err := Start(f)
	if errors.Is(err, os.ErrPermission) {
		t.Skipf("no packet capture here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = c.Stop() })
	return c
}

func stop(t *testing.T, c *Capture) []Packet {
	t.Helper()
	pkts, err := c.Stop()
	if err != nil {
		t.Fatal(err)
	}
	st := c.Stats()
	// Loopback delivers every packet twice; the outgoing copy is kept, the incoming one counted.
	if st.Outgoing != len(pkts) || st.Incoming != st.Outgoing || st.Drops != 0 {
		t.Errorf("stats %+v for %d packets: want every packet once outgoing and once incoming, no drops", st, len(pkts))
	}
	for _, p := range pkts {
		t.Log(p)
	}
	return pkts
}

// packet is an Ethernet frame as lo carries it (zero addresses) with an IPv4 header of ihl
// words and a transport header of 20 bytes.
func packet(ethertype uint16, proto Proto, ihl int, frag uint16, src, dst uint16) []byte {
	b := make([]byte, ethHdr+ihl*4+20+10)
	binary.BigEndian.PutUint16(b[12:], ethertype)
	ip := b[ethHdr:]
	ip[0] = 0x40 | byte(ihl)
	binary.BigEndian.PutUint16(ip[2:], uint16(len(ip)))
	binary.BigEndian.PutUint16(ip[6:], frag)
	ip[9] = byte(proto)
	binary.BigEndian.PutUint16(ip[ihl*4:], src)
	binary.BigEndian.PutUint16(ip[ihl*4+2:], dst)
	return b
}

// TestFilter runs the kernel filter in x/net/bpf's VM: only IPv4 TCP or UDP packets (first
// fragments) from or to the chosen ports pass, truncated to the snap length.
func TestFilter(t *testing.T) {
	vm, err := bpf.NewVM(filter([]uint16{80, 4433}, 60))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		pkt  []byte
		want int
	}{
		{"TCP to 80", packet(0x0800, TCP, 5, 0, 40000, 80), 60},
		{"TCP from 4433", packet(0x0800, TCP, 5, 0x4000, 4433, 40000), 60}, // don't-fragment bit
		{"UDP to 4433", packet(0x0800, UDP, 5, 0, 40000, 4433), 60},
		{"UDP from 80, IP options", packet(0x0800, UDP, 7, 0, 80, 40000), 60},
		{"TCP between other ports", packet(0x0800, TCP, 5, 0, 40000, 81), 0},
		{"ICMP", packet(0x0800, 1, 5, 0, 40000, 80), 0},
		{"later fragment", packet(0x0800, UDP, 5, 0x0010, 40000, 80), 0},
		{"IPv6", packet(0x86dd, TCP, 5, 0, 40000, 80), 0},
	} {
		if got, err := vm.Run(c.pkt); err != nil || got != c.want {
			t.Errorf("%s: filter keeps %d bytes (%v), want %d", c.name, got, err, c.want)
		}
	}
}

// TestTCP: five writes with TCP_NODELAY and a pause between them are five data segments of the
// written sizes, in order; the handshake, the receiver's ACKs and the FINs carry no data.
func TestTCP(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	server := netip.MustParseAddrPort(ln.Addr().String())
	c := start(t, Filter{Ports: []uint16{server.Port()}, KeepPayload: 4})
	got := make(chan int64, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			got <- -1
			return
		}
		n, _ := io.Copy(io.Discard, conn)
		_ = conn.Close()
		got <- n
	}()
	conn, err := net.Dial("tcp4", server.String())
	if err != nil {
		t.Fatal(err)
	}
	client := netip.MustParseAddrPort(conn.LocalAddr().String())
	if err := conn.(*net.TCPConn).SetNoDelay(true); err != nil {
		t.Fatal(err)
	}
	sizes := []int{1, 100, 1000, 1500, 9000}
	total := 0
	for i, n := range sizes {
		// The pause lets each segment leave before the next write, which autocorking would
		// otherwise merge into a segment still queued.
		time.Sleep(5 * time.Millisecond)
		if _, err := conn.Write(bytes.Repeat([]byte{byte('a' + i)}, n)); err != nil {
			t.Fatal(err)
		}
		total += n
	}
	_ = conn.Close()
	if n := <-got; n != int64(total) {
		t.Fatalf("server read %d bytes, want %d", n, total)
	}
	pkts := stop(t, c)

	if data, bytes := Segments(pkts, client, server); data != len(sizes) || bytes != total {
		t.Errorf("client sent %d data segments, %d bytes; want %d, %d", data, bytes, len(sizes), total)
	}
	if data, _ := Segments(pkts, Port(server.Port()), Port(0)); data != 0 {
		t.Errorf("server sent %d data segments, want 0", data)
	}
	var seen []int
	for i, p := range Select(pkts, client, server) {
		if i == 0 && p.Flags != SYN {
			t.Errorf("first packet %v: want the SYN", p)
		}
		if p.Len == 0 {
			continue
		}
		if want := byte('a' + len(seen)); len(p.Payload) != min(4, p.Len) || p.Payload[0] != want || p.GSOSize != 0 {
			t.Errorf("segment %v payload %q: want %q…, no GSO", p, p.Payload, want)
		}
		seen = append(seen, p.Len)
	}
	if !equal(seen, sizes) {
		t.Errorf("segment sizes %v, want %v", seen, sizes)
	}
}

// TestUDP: three datagrams (one empty) are three; a datagram between other ports is not
// recorded; one GSO send of three segments counts as the three datagrams it becomes.
func TestUDP(t *testing.T) {
	rx, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer rx.Close()
	other, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	server := netip.MustParseAddrPort(rx.LocalAddr().String())
	c := start(t, Filter{Ports: []uint16{server.Port()}})
	tx, err := net.DialUDP("udp4", nil, rx.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	client := netip.MustParseAddrPort(tx.LocalAddr().String())
	sizes := []int{0, 300, 1400}
	for _, n := range sizes {
		if _, err := tx.Write(make([]byte, n)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tx.WriteTo(make([]byte, 100), other.LocalAddr()); err == nil {
		t.Fatal("a connected socket wrote to another address")
	}
	if _, err := other.WriteToUDP(make([]byte, 100), rx.LocalAddr().(*net.UDPAddr)); err != nil {
		t.Fatal(err) // to the filtered port: recorded, from other
	}
	noise, err := net.DialUDP("udp4", nil, other.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer noise.Close()
	if _, err := noise.Write(make([]byte, 100)); err != nil {
		t.Fatal(err) // between other ports: not recorded
	}
	gso := gsoWrite(t, tx, 3000, 1000)
	pkts := stop(t, c)

	want, wantBytes, wantPkts := len(sizes), 1700, len(sizes)+1 // +1: other's datagram to the port
	if gso {
		want, wantBytes, wantPkts = want+3, wantBytes+3000, wantPkts+1
	}
	if data, bytes := Segments(pkts, client, server); data != want || bytes != wantBytes {
		t.Errorf("client sent %d datagrams, %d bytes; want %d, %d", data, bytes, want, wantBytes)
	}
	if len(pkts) != wantPkts {
		t.Errorf("%d packets recorded; want the client's and other's to the port, nothing else", len(pkts))
	}
	for i, n := range sizes {
		if p := pkts[i]; p.Proto != UDP || p.Len != n || p.IPLen != 28+n {
			t.Errorf("datagram %d: %v, want %d bytes", i, p, n)
		}
	}
	if gso {
		p := pkts[len(pkts)-1]
		if p.Len != 3000 || (p.GSOSize != 1000 && p.GSOSize != 0) {
			t.Errorf("GSO send: %v, want 3000 bytes in segments of 1000", p)
		}
		t.Logf("GSO send recorded as one packet of %d bytes, gso size %d: %d datagrams", p.Len, p.GSOSize, p.Packets())
	}
}

// gsoWrite sends n bytes in one UDP GSO write of segments of size (UDP_SEGMENT); false where
// the kernel lacks UDP GSO.
func gsoWrite(t *testing.T, c *net.UDPConn, n, size int) bool {
	t.Helper()
	raw, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_UDP, unix.UDP_SEGMENT, size)
	}); err != nil {
		t.Fatal(err)
	}
	if errors.Is(serr, syscall.ENOPROTOOPT) {
		t.Logf("no UDP GSO: %v", serr)
		return false
	}
	if serr != nil {
		t.Fatal(serr)
	}
	if _, err := c.Write(make([]byte, n)); err != nil {
		t.Fatal(err)
	}
	return true
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestQUICKeys: the key derivation reproduces RFC 9001 §A.1's client Initial keys, and packet
// numbers decode as in RFC 9000 §A.3.
func TestQUICKeys(t *testing.T) {
	secret, _ := hex.DecodeString("c00cf151ca5be075ed0ebfb5c80323c42d6b7db67881289af4008f1f6c357aea")
	key, iv, hp, err := deriveQUIC(secret)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want []byte
	}{
		{"key", key, unhex("1f369613dd76d5467730efcbe3b1a22d")},
		{"iv", iv, unhex("fa044b2f42a3fd3b46fb255c")},
		{"hp", hp, unhex("9f50449e04a0e810283a1e9933adedd2")},
	} {
		if !bytes.Equal(c.got, c.want) {
			t.Errorf("%s %x, want %x", c.name, c.got, c.want)
		}
	}
	for _, c := range []struct {
		largest   int64
		truncated uint64
		bits      int
		want      int64
	}{
		{0xa82f30ea, 0x9b32, 16, 0xa82f9b32}, // RFC 9000 §A.3
		{-1, 0, 16, 0},
		{250, 3, 8, 259},
		{300, 0xff, 8, 255},
	} {
		if got := decodePacketNumber(c.largest, c.truncated, c.bits); got != c.want {
			t.Errorf("decodePacketNumber(%#x, %#x, %d) = %#x, want %#x", c.largest, c.truncated, c.bits, got, c.want)
		}
	}
}

func unhex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// TestQUIC opens what a quic-go client sends on loopback with the traffic secret it logged: a
// stream's data and FIN in one 1-RTT packet, and the client's ACK-only packets told apart.
func TestQUIC(t *testing.T) {
	bundle, srvTLS := certstest.Loopback(t)
	srvTLS = srvTLS.Clone()
	srvTLS.NextProtos = []string{"capture"}
	ln, err := quic.ListenAddr("127.0.0.1:0", srvTLS, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	server := netip.MustParseAddrPort(ln.Addr().String())
	got := make(chan []byte, 1)
	go func() {
		conn, err := ln.Accept(context.Background())
		if err != nil {
			got <- nil
			return
		}
		s, err := conn.AcceptStream(context.Background())
		if err != nil {
			got <- nil
			return
		}
		b, _ := io.ReadAll(s)
		got <- b
		_, _ = s.Write([]byte("ok"))
		_ = s.Close()
	}()
	cliTLS, err := certs.ClientTLS(bundle.CACert, "127.0.0.1", "1.3")
	if err != nil {
		t.Fatal(err)
	}
	var keyLog bytes.Buffer
	cliTLS.NextProtos, cliTLS.KeyLogWriter = []string{"capture"}, &keyLog
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := quic.DialAddr(ctx, server.String(), cliTLS, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.CloseWithError(0, "") }()
	<-conn.HandshakeComplete()
	time.Sleep(50 * time.Millisecond) // the handshake's last packets and their ACKs

	c := start(t, Filter{Ports: []uint16{server.Port()}, KeepPayload: 2048})
	s, err := conn.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	msg := []byte("hello capture")
	if _, err := s.Write(msg); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	if b := <-got; !bytes.Equal(b, msg) {
		t.Fatalf("server read %q", b)
	}
	if b, err := io.ReadAll(s); err != nil || string(b) != "ok" {
		t.Fatalf("response %q, %v", b, err)
	}
	time.Sleep(50 * time.Millisecond) // the client's ACK of the response (max_ack_delay 25 ms)
	pkts := stop(t, c)

	secrets, err := TrafficSecrets(keyLog.Bytes(), "CLIENT_TRAFFIC_SECRET_0")
	if err != nil || len(secrets) != 1 {
		t.Fatalf("key log: %d client traffic secrets, %v:\n%s", len(secrets), err, keyLog.Bytes())
	}
	keys, err := NewQUICKeys(secrets[0])
	if err != nil {
		t.Fatal(err)
	}
	o := NewQUICOpener(keys)
	var streams, acks int
	for _, p := range Select(pkts, Port(0), server) {
		if len(p.Payload) != p.Len {
			t.Fatalf("%v: kept %d bytes", p, len(p.Payload))
		}
		pn, frames, err := o.Open(p.Payload)
		if err != nil {
			t.Fatalf("%v: %v", p, err)
		}
		t.Logf("packet %d: %+v", pn, frames)
		if IsAckOnly(frames) {
			acks++
		}
		for _, f := range frames {
			if f.Type == QUICStream {
				streams++
				if f.Stream != uint64(s.StreamID()) || f.Offset != 0 || !f.Fin || !bytes.Equal(f.Data, msg) {
					t.Errorf("packet %d: stream frame %+v, want stream %d's whole %q with FIN", pn, f, s.StreamID(), msg)
				}
			}
		}
	}
	if streams != 1 || acks == 0 {
		t.Errorf("%d stream frames, %d ACK-only packets; want the stream in one frame and the response acknowledged", streams, acks)
	}
}
