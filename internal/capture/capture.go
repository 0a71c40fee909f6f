// Package capture records the IPv4 TCP and UDP packets that cross the loopback interface to or
// from chosen ports, for tests that must prove how many packets a client sends (segments per
// request, datagrams per message). It is a packet socket (AF_PACKET, SOCK_RAW) bound to lo with a
// kernel filter on the ports, so it needs root or CAP_NET_RAW; Start's error then wraps
// syscall.EPERM (test: errors.Is(err, os.ErrPermission)).
//
// Loopback shows every packet twice: once as the sender's stack transmits it (PACKET_OUTGOING)
// and once as lo hands it back to the receiving stack (PACKET_HOST). Capture keeps the outgoing
// copy — the packet as it left the sender, timestamped when it was sent, the one a capture on the
// sender's NIC would see — and only counts the other copies (Stats.Incoming).
package capture

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Proto is a transport protocol.
type Proto uint8

// The IP protocol numbers Capture keeps.
const (
	TCP Proto = 6
	UDP Proto = 17
)

func (p Proto) String() string {
	switch p {
	case TCP:
		return "TCP"
	case UDP:
		return "UDP"
	}
	return fmt.Sprintf("proto(%d)", uint8(p))
}

// TCPFlags are a TCP header's flag bits.
type TCPFlags uint8

// TCP flag bits.
const (
	FIN TCPFlags = 1 << iota
	SYN
	RST
	PSH
	ACK
	URG
)

func (f TCPFlags) String() string {
	s := ""
	for i, n := range "FSRPAU" {
		if f&(1<<i) != 0 {
			s += string(n)
		}
	}
	if s == "" {
		return "."
	}
	return s
}

// Filter says what to record.
type Filter struct {
	// Ports: packets from or to any of them (TCP or UDP). At least one.
	Ports []uint16
	// KeepPayload is how many bytes of each packet's payload to keep in Packet.Payload (0: none).
	KeepPayload int
}

// Packet is one recorded packet.
type Packet struct {
	Time     time.Time // when the sender's stack transmitted it (kernel timestamp)
	Proto    Proto
	Src, Dst netip.AddrPort
	Flags    TCPFlags // TCP only
	Seq      uint32   // TCP only: the sequence number of the first payload byte
	// Len is the transport payload: TCP data bytes, or the UDP payload.
	Len int
	// IPLen is the IP packet's length, headers included.
	IPLen int
	// GSOSize is non-zero for a GSO super-packet (one skb the stack hands to the device, which
	// a NIC would split): it leaves as ceil(Len/GSOSize) packets. Loopback does not split them.
	GSOSize int
	// Payload is the payload's first Filter.KeepPayload bytes (or fewer).
	Payload []byte
}

// Packets is how many packets this one is on a NIC: 1, or the pieces of a GSO super-packet.
func (p Packet) Packets() int {
	if p.GSOSize == 0 || p.Len <= p.GSOSize {
		return 1
	}
	return (p.Len + p.GSOSize - 1) / p.GSOSize
}

func (p Packet) String() string {
	s := fmt.Sprintf("%s %s %s > %s len %d", p.Time.Format("15:04:05.000000"), p.Proto, p.Src, p.Dst, p.Len)
	if p.Proto == TCP {
		s += fmt.Sprintf(" [%s] seq %d", p.Flags, p.Seq)
	}
	if p.GSOSize != 0 {
		s += fmt.Sprintf(" gso %d", p.GSOSize)
	}
	return s
}

// Stats are the capture's own counts.
type Stats struct {
	Outgoing int // packets recorded
	Incoming int // loopback's second copies, not recorded
	Drops    int // packets the kernel dropped because the socket's buffer was full
}

// Capture is a running capture.
type Capture struct {
	fd          int
	keep        int
	stop        atomic.Bool
	done        chan struct{}
	stopOnce    sync.Once
	pkts        []Packet
	stats       Stats
	err         error
	stoppedErr  error
	stoppedPkts []Packet
}

const (
	ethHdr    = 14
	vnetHdr   = 10      // struct virtio_net_hdr, before each packet (PACKET_VNET_HDR)
	rcvBuf    = 8 << 20 // queued packets while the reader is descheduled; each costs its skb's truesize
	idle      = 20 * time.Millisecond
	maxHeader = ethHdr + 60 + 60 // Ethernet, IPv4 and TCP headers at their longest
)

// Start begins recording packets from or to f.Ports on lo.
func Start(f Filter) (*Capture, error) {
	if len(f.Ports) == 0 {
		return nil, errors.New("capture: Filter.Ports is empty: name the ports whose packets to record")
	}
	lo, err := loopback()
	if err != nil {
		return nil, err
	}
	prog, err := program(f.Ports, uint32(maxHeader+f.KeepPayload))
	if err != nil {
		return nil, err
	}
	// Protocol 0 receives nothing until bind names ETH_P_ALL and lo, so no packet of another
	// interface or before the filter is attached reaches the queue.
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("capture: packet socket (needs root or CAP_NET_RAW): %w", err)
	}
	c := &Capture{fd: fd, keep: f.KeepPayload, done: make(chan struct{})}
	if err := c.setup(lo, prog); err != nil {
		_ = unix.Close(fd)
		return nil, err
	}
	go c.read()
	return c, nil
}

func loopback() (int, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return 0, fmt.Errorf("capture: %w", err)
	}
	for _, i := range ifs {
		if i.Flags&net.FlagLoopback != 0 {
			return i.Index, nil
		}
	}
	return 0, errors.New("capture: no loopback interface")
}

func (c *Capture) setup(lo int, prog []unix.SockFilter) error {
	fd := c.fd
	if err := unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}); err != nil {
		return fmt.Errorf("capture: attach filter: %w", err)
	}
	// SO_RCVBUFFORCE passes net.core.rmem_max (root); SO_RCVBUF is capped by it.
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, rcvBuf); err != nil {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, rcvBuf); err != nil {
			return fmt.Errorf("capture: SO_RCVBUF: %w", err)
		}
	}
	// The virtio header carries a GSO packet's segment size (Packet.GSOSize).
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_VNET_HDR, 1); err != nil {
		return fmt.Errorf("capture: PACKET_VNET_HDR: %w", err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
		return fmt.Errorf("capture: SO_TIMESTAMPNS: %w", err)
	}
	// The reader wakes at least this often, so Stop ends it after the queue has been idle.
	tv := unix.NsecToTimeval(idle.Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return fmt.Errorf("capture: SO_RCVTIMEO: %w", err)
	}
	// Reading the statistics resets them: start from zero.
	if _, err := unix.GetsockoptTpacketStats(fd, unix.SOL_PACKET, unix.PACKET_STATISTICS); err != nil {
		return fmt.Errorf("capture: PACKET_STATISTICS: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: lo}); err != nil {
		return fmt.Errorf("capture: bind to lo: %w", err)
	}
	return nil
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

func program(ports []uint16, snap uint32) ([]unix.SockFilter, error) {
	if len(ports) > 100 {
		return nil, fmt.Errorf("capture: Filter.Ports has %d ports; at most 100", len(ports))
	}
	raw, err := bpf.Assemble(filter(ports, snap))
	if err != nil {
		return nil, fmt.Errorf("capture: filter: %w", err)
	}
	out := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		out[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	return out, nil
}

// filter is the kernel filter (classic BPF over the packet from its Ethernet header): IPv4, TCP
// or UDP, not a later fragment, source or destination port in ports (at most 100); it keeps the
// first snap bytes of a match.
func filter(ports []uint16, snap uint32) []bpf.Instruction {
	n := uint8(len(ports))
	ins := []bpf.Instruction{
		bpf.LoadAbsolute{Off: 12, Size: 2},                           // ethertype
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: 0x0800, SkipTrue: 0}, // → drop (patched below)
		bpf.LoadAbsolute{Off: ethHdr + 9, Size: 1},                   // IP protocol
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(TCP), SkipTrue: 1},
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: uint32(UDP), SkipTrue: 0}, // → drop
		bpf.LoadAbsolute{Off: ethHdr + 6, Size: 2},                        // flags and fragment offset
		bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: 0x1fff, SkipTrue: 0},       // → drop
		bpf.LoadMemShift{Off: ethHdr},                                     // X = IP header length
		bpf.LoadIndirect{Off: ethHdr, Size: 2},                            // source port
	}
	for i, p := range ports {
		ins = append(ins, bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(p), SkipTrue: 2*n - uint8(i) + 1})
	}
	ins = append(ins, bpf.LoadIndirect{Off: ethHdr + 2, Size: 2}) // destination port
	for i, p := range ports {
		ins = append(ins, bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(p), SkipTrue: n - uint8(i)})
	}
	drop := len(ins)
	ins = append(ins, bpf.RetConstant{Val: 0}, bpf.RetConstant{Val: snap})
	for _, i := range []int{1, 4, 6} { // the jumps to drop
		j := ins[i].(bpf.JumpIf)
		j.SkipTrue = uint8(drop - i - 1)
		ins[i] = j
	}
	return ins
}

func (c *Capture) read() {
	defer close(c.done)
	buf := make([]byte, vnetHdr+maxHeader+c.keep+64)
	oob := make([]byte, 128)
	for {
		n, oobn, _, from, err := unix.Recvmsg(c.fd, buf, oob, 0)
		if err != nil {
			if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
				if c.stop.Load() { // idle for a whole timeout after Stop: the queue is drained
					return
				}
				continue
			}
			c.err = fmt.Errorf("capture: read: %w", err)
			return
		}
		ll, ok := from.(*unix.SockaddrLinklayer)
		if !ok {
			continue
		}
		if ll.Pkttype != unix.PACKET_OUTGOING {
			c.stats.Incoming++
			continue
		}
		p, ok := parse(buf[:n], c.keep)
		if !ok {
			continue
		}
		p.Time = timestamp(oob[:oobn])
		c.pkts = append(c.pkts, p)
		c.stats.Outgoing++
	}
}

// parse reads a packet as the socket delivers it: virtio header, Ethernet, IPv4, TCP or UDP.
func parse(b []byte, keep int) (Packet, bool) {
	if len(b) < vnetHdr+ethHdr+20 {
		return Packet{}, false
	}
	var p Packet
	if gsoType := b[1]; gsoType != 0 { // VIRTIO_NET_HDR_GSO_NONE
		p.GSOSize = int(binary.LittleEndian.Uint16(b[4:6]))
	}
	ip := b[vnetHdr+ethHdr:]
	ihl := int(ip[0]&0x0f) * 4
	p.IPLen = int(binary.BigEndian.Uint16(ip[2:4]))
	p.Proto = Proto(ip[9])
	src, dst := netip.AddrFrom4([4]byte(ip[12:16])), netip.AddrFrom4([4]byte(ip[16:20]))
	if len(ip) < ihl+8 {
		return Packet{}, false
	}
	l4 := ip[ihl:]
	p.Src = netip.AddrPortFrom(src, binary.BigEndian.Uint16(l4[0:2]))
	p.Dst = netip.AddrPortFrom(dst, binary.BigEndian.Uint16(l4[2:4]))
	hdr := 8
	switch p.Proto {
	case TCP:
		if len(l4) < 20 {
			return Packet{}, false
		}
		p.Seq = binary.BigEndian.Uint32(l4[4:8])
		hdr = int(l4[12]>>4) * 4
		p.Flags = TCPFlags(l4[13] & 0x3f)
	case UDP:
	default:
		return Packet{}, false
	}
	p.Len = p.IPLen - ihl - hdr
	if p.Len < 0 || len(l4) < hdr {
		return Packet{}, false
	}
	if k := min(keep, p.Len, len(l4)-hdr); k > 0 {
		p.Payload = append([]byte(nil), l4[hdr:hdr+k]...)
	}
	return p, true
}

func timestamp(oob []byte) time.Time {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err == nil {
		for _, m := range msgs {
			if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SO_TIMESTAMPNS && len(m.Data) >= 16 {
				return time.Unix(int64(binary.NativeEndian.Uint64(m.Data[0:8])), int64(binary.NativeEndian.Uint64(m.Data[8:16])))
			}
		}
	}
	return time.Now()
}

// Stop ends the capture once the socket's queue has been idle for a moment (so every packet sent
// before Stop is read) and returns the outgoing packets in the order they were sent. It fails
// when the kernel dropped any packet: the counts would be short.
func (c *Capture) Stop() ([]Packet, error) {
	c.stopOnce.Do(func() {
		c.stop.Store(true)
		<-c.done
		st, err := unix.GetsockoptTpacketStats(c.fd, unix.SOL_PACKET, unix.PACKET_STATISTICS)
		_ = unix.Close(c.fd)
		switch {
		case c.err != nil:
			c.stoppedErr = c.err
		case err != nil:
			c.stoppedErr = fmt.Errorf("capture: PACKET_STATISTICS: %w", err)
		default:
			c.stats.Drops = int(st.Drops)
			if st.Drops > 0 {
				c.stoppedErr = fmt.Errorf("capture: the kernel dropped %d of %d packets (socket buffer full): the counts are incomplete", st.Drops, st.Packets)
			}
		}
		c.stoppedPkts = c.pkts
	})
	return c.stoppedPkts, c.stoppedErr
}

// Stats are the capture's counts; it stops the capture first.
func (c *Capture) Stats() Stats {
	_, _ = c.Stop()
	return c.stats
}

// Match says whether a packet went from from to to; a zero address or port in either matches any.
func Match(p Packet, from, to netip.AddrPort) bool {
	return matches(p.Src, from) && matches(p.Dst, to)
}

func matches(a, want netip.AddrPort) bool {
	return (!want.Addr().IsValid() || a.Addr() == want.Addr()) && (want.Port() == 0 || a.Port() == want.Port())
}

// Select returns the packets from from to to (Match).
func Select(pkts []Packet, from, to netip.AddrPort) []Packet {
	var out []Packet
	for _, p := range pkts {
		if Match(p, from, to) {
			out = append(out, p)
		}
	}
	return out
}

// Segments counts the packets from from to to that carry data — TCP segments with payload and
// every UDP datagram, a GSO super-packet as the packets it becomes — and their payload bytes.
func Segments(pkts []Packet, from, to netip.AddrPort) (data, payloadBytes int) {
	for _, p := range pkts {
		if Match(p, from, to) && (p.Len > 0 || p.Proto == UDP) {
			data += p.Packets()
			payloadBytes += p.Len
		}
	}
	return data, payloadBytes
}

// Port is an address that matches any host at port (for Select, Segments and Match).
func Port(port uint16) netip.AddrPort { return netip.AddrPortFrom(netip.Addr{}, port) }
