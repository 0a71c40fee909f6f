package mqtt

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/msgbench/msgbench/internal/keepalive"
	"github.com/msgbench/msgbench/internal/refusal"
)

// Options configure a client connection.
type Options struct {
	Connect ConnectOptions

	// Inflight is the most QoS 1/2 publishes kept unacknowledged; Publish blocks while the
	// window is full. The broker's Receive Maximum (MQTT 5) lowers it.
	Inflight int

	// MaxPacketSize bounds every incoming packet; a larger one ends the connection with an
	// error instead of growing a buffer without limit. Default 1 MiB + 64 KiB.
	MaxPacketSize int

	// OnPublish receives every message the broker delivers, on the connection's reader
	// goroutine. p's slices alias the read buffer and are valid only during the call.
	OnPublish func(p *Publish)

	// OnComplete is called on the reader goroutine when an outgoing QoS 1 publish is acknowledged
	// (PUBACK) or a QoS 2 publish completes (PUBCOMP), with the time Publish wrote it (Now), or
	// the stamp given to PublishStamped.
	// reason is the broker's reason code (0 = success).
	OnComplete func(id uint16, sentAt int64, reason byte)

	// Now is the clock for sentAt; default monotonic nanoseconds since the connection started.
	Now func() int64

	// ReadBufferSize and WriteBufferSize size the connection's buffers (default 2048 and 1024:
	// small, so that ten thousand idle connections stay cheap; large writes bypass the buffer).
	// The write buffer starts at most idleWriteBuffer bytes and grows to WriteBufferSize at the
	// first PUBLISH: a connection that only subscribes, or a device that has not published yet,
	// does not hold a publisher's buffer.
	ReadBufferSize  int
	WriteBufferSize int

	// Raw, when set, is nc's socket (TCP, not TLS): the reader then waits for the next packet
	// without holding its read buffer, which goes back to a pool shared by all connections, so
	// that an idle connection costs no buffer at all. Unset, the reader blocks in a read into
	// its own buffer.
	Raw syscall.RawConn
}

// ErrClosed is returned by operations on a closed connection.
var ErrClosed = errors.New("mqtt connection closed")

// Conn is a client connection after a successful CONNECT. It is safe for one publishing
// goroutine plus its own reader goroutine, and for concurrent Subscribe calls.
type Conn struct {
	nc      net.Conn
	opts    Options
	version byte
	connack Connack

	br *bufio.Reader

	// wmu guards bw and everything written to the connection.
	wmu sync.Mutex
	bw  *bufio.Writer
	hdr []byte // scratch for packet headers, under wmu

	// Acknowledgements produced by the reader wait here until whoever holds wmu writes them;
	// the reader never blocks on wmu (a publisher blocked in a socket write must not stop the
	// reader, or both sides could wait on each other).
	ackMu      sync.Mutex
	ackBuf     []byte
	ackPending atomic.Bool

	// Outgoing QoS 1/2 window.
	window chan struct{}
	// lowWater wakes a publisher that waits for half the window to free (see Publish).
	lowWater    chan struct{}
	waitingHalf atomic.Bool
	// readerIdle is set while the reader has handled every packet that arrived and waits on
	// the socket: no acknowledgement is coming until the broker sends more.
	readerIdle atomic.Bool
	smu        sync.Mutex
	slots      []slot // nil until first used; nil again after a subscriber's last SUBACK
	published  bool   // a PUBLISH took a slot: keep them
	mask       uint16
	nextID     uint16
	inflight   atomic.Int32
	// unfinished counts publishes whose OnComplete has not returned yet: inflight drops before
	// OnComplete runs (a gateway's completion handler may publish again at once), so
	// WaitInflight waits on this instead, or a caller counting completions could miss the last.
	unfinished atomic.Int32
	// waiters are SUBACK/UNSUBACK waiters, under smu; nil while none waits (an idle
	// connection need not keep a map's buckets).
	waiters map[uint16]chan Ack

	// Incoming QoS 2 packet ids between PUBLISH and PUBREL (allocated on first use).
	qos2In []uint64

	// ka pings when nothing was sent for the keep-alive period (nil without keep-alive).
	ka *keepalive.Pinger

	closeOnce sync.Once
	closing   atomic.Bool
	done      chan struct{}
	err       error
	// stopped is closed when the reader goroutine returned: no OnPublish or OnComplete runs.
	stopped chan struct{}

	pub Publish

	// The reader's buffer-free waits (Options.Raw), all on the reader goroutine: peek is
	// peekReadable bound once (no allocation per wait), peeks counts its calls in one wait,
	// ready the waits in a row that found data at once, direct the plain blocking reads left
	// before the next buffer-free wait.
	peek   func(fd uintptr) bool
	peeks  int
	ready  int
	direct int
}

type slot struct {
	sentAt int64
	state  uint8 // slotFree, slotAwaitAck, slotAwaitComp, slotAwaitSub
}

const (
	slotFree uint8 = iota
	slotAwaitAck
	slotAwaitComp
	slotAwaitSub
)

// Connect sends CONNECT on nc (already dialled: TCP, TLS or a QUIC stream), waits for CONNACK
// within ctx, and starts the connection's reader goroutine.
func Connect(ctx context.Context, nc net.Conn, o Options) (*Conn, error) {
	if o.Connect.Version == 0 {
		o.Connect.Version = V311
	}
	if o.Inflight <= 0 {
		o.Inflight = 20
	}
	if o.MaxPacketSize <= 0 {
		o.MaxPacketSize = 1<<20 + 64<<10
	}
	if o.ReadBufferSize <= 0 {
		o.ReadBufferSize = 2048
	}
	if o.WriteBufferSize <= 0 {
		o.WriteBufferSize = 1024
	}
	if o.Now == nil {
		start := time.Now()
		o.Now = func() int64 { return int64(time.Since(start)) }
	}
	c := &Conn{
		nc:      nc,
		opts:    o,
		version: o.Connect.Version,
		bw:      bufio.NewWriterSize(nc, min(o.WriteBufferSize, idleWriteBuffer)),
		done:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
	if o.Raw != nil {
		// The buffer it will hand back to the pool at its first wait: take it from there too, or
		// a ramp of connections fills the pool with one buffer per connection.
		c.br = readerPool(o.ReadBufferSize).Get().(*bufio.Reader)
		c.br.Reset(nc)
	} else {
		c.br = bufio.NewReaderSize(nc, o.ReadBufferSize)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = nc.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Unix(1, 0)) })
	err := c.handshake()
	if !stop() && err == nil {
		err = ctx.Err()
	}
	if err != nil {
		_ = nc.Close()
		return nil, err
	}
	_ = nc.SetDeadline(time.Time{})

	inflight := o.Inflight
	if int(c.connack.ReceiveMaximum) < inflight {
		inflight = int(c.connack.ReceiveMaximum)
	}
	size := 2
	for size < inflight+1 {
		size *= 2
	}
	c.window = make(chan struct{}, inflight)
	c.lowWater = make(chan struct{}, 1)
	c.mask = uint16(size - 1) // slots are allocated at the first request or publish
	if o.Connect.KeepAlive > 0 {
		c.ka = keepalive.New(time.Duration(o.Connect.KeepAlive)*time.Second, c.sendPing, c.fail)
		c.ka.Start()
	}
	c.peek = c.peekReadable
	go c.readLoop()
	return c, nil
}

func (c *Conn) handshake() error {
	c.hdr = AppendConnect(c.hdr[:0], &c.opts.Connect)
	if _, err := c.bw.Write(c.hdr); err != nil {
		return fmt.Errorf("send CONNECT: %w", err)
	}
	if err := c.bw.Flush(); err != nil {
		return fmt.Errorf("send CONNECT: %w", err)
	}
	h, body, err := c.readPacket()
	if err != nil {
		return fmt.Errorf("wait for CONNACK: %w", err)
	}
	if h.Type != CONNACK {
		return fmt.Errorf("expected CONNACK, broker sent %s", PacketName(h.Type))
	}
	if err := DecodeConnack(c.version, body, &c.connack); err != nil {
		return err
	}
	c.br.Discard(h.Remaining) //nolint:errcheck // bytes were peeked
	if c.connack.ReasonCode != 0 {
		e := refusal.Explain(c.version, refusal.CONNACK, c.connack.ReasonCode, c.connack.ReasonString, "")
		if c.opts.Connect.Username != "" {
			e = refusal.WithCredentials(e)
		}
		return e
	}
	return nil
}

// Connack returns the broker's CONNACK.
func (c *Conn) Connack() Connack { return c.connack }

// Version is the protocol level in use.
func (c *Conn) Version() byte { return c.version }

// NetConn is the underlying connection (for counters and socket options).
func (c *Conn) NetConn() net.Conn { return c.nc }

// Done is closed when the connection has ended; Err then says why.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Stopped is closed once the connection's reader goroutine has returned, some time after Done:
// from then on no OnPublish or OnComplete call is running or will be made. Do not wait for it
// inside those callbacks.
func (c *Conn) Stopped() <-chan struct{} { return c.stopped }

// Err is why the connection ended (nil after a clean Disconnect).
func (c *Conn) Err() error {
	select {
	case <-c.done:
		return c.err
	default:
		return nil
	}
}

// Inflight is the number of QoS 1/2 publishes awaiting completion.
func (c *Conn) Inflight() int { return int(c.inflight.Load()) }

// Window is the size of the inflight window in use.
func (c *Conn) Window() int { return cap(c.window) }

// Publish writes a PUBLISH. For QoS 1 and 2 it first takes a place in the inflight window,
// flushing buffered packets and blocking while the window is full. With flush false the packet
// may stay in the write buffer until a later Flush, a full buffer or a blocked window sends it,
// and a full window then waits until half of it is free again: a closed-loop publisher so
// writes bursts of window/2 packets per system call instead of one packet per acknowledgement.
func (c *Conn) Publish(topic string, payload []byte, qos byte, retain, flush bool) (uint16, error) {
	return c.publish(topic, payload, qos, retain, flush, 0, true, nil)
}

// PublishWithProperties is Publish with MQTT 5 properties (AppendRequestProperties), which
// must be encoded properties without their length; a 3.1.1 connection has none to send.
func (c *Conn) PublishWithProperties(topic string, payload []byte, qos byte, retain, flush bool, props []byte) (uint16, error) {
	if c.version != V5 && len(props) > 0 {
		return 0, fmt.Errorf("PUBLISH properties need MQTT 5, the connection speaks 3.1.1")
	}
	return c.publish(topic, payload, qos, retain, flush, 0, true, props)
}

// PublishStamped is Publish with a caller's stamp instead of the clock: OnComplete hands it
// back, so a gateway can tell which of its clients' messages completed without a map from
// packet ids.
func (c *Conn) PublishStamped(topic string, payload []byte, qos byte, retain, flush bool, stamp int64) (uint16, error) {
	return c.publish(topic, payload, qos, retain, flush, stamp, false, nil)
}

func (c *Conn) publish(topic string, payload []byte, qos byte, retain, flush bool, stamp int64, useClock bool, props []byte) (uint16, error) {
	if qos > 0 {
		select {
		case c.window <- struct{}{}:
		default:
			if err := c.Flush(); err != nil {
				return 0, err
			}
			if !flush {
				c.waitHalfWindow()
			}
			select {
			case c.window <- struct{}{}:
			case <-c.done:
				return 0, c.closedErr()
			}
		}
	}
	c.wmu.Lock()
	if c.bw.Size() < c.opts.WriteBufferSize {
		if err := c.growWriterLocked(); err != nil {
			c.unlockWriter()
			c.fail(fmt.Errorf("send PUBLISH: %w", err))
			if qos > 0 {
				<-c.window
			}
			return 0, err
		}
	}
	var id uint16
	if qos > 0 {
		c.smu.Lock()
		id = c.allocLocked(slotAwaitAck)
		if useClock {
			stamp = c.opts.Now()
		}
		c.slots[id&c.mask].sentAt = stamp
		c.smu.Unlock()
		c.unfinished.Add(1)
		c.inflight.Add(1)
	}
	err := c.writePublishLocked(topic, payload, qos, id, retain, props)
	if err == nil && flush {
		err = c.bw.Flush()
	}
	c.unlockWriter()
	if err != nil {
		c.fail(fmt.Errorf("send PUBLISH: %w", err))
		return 0, err
	}
	return id, nil
}

// idleWriteBuffer is the write buffer a connection starts with: enough for CONNECT, SUBSCRIBE,
// PINGREQ and a batch of acknowledgements (larger writes bypass it).
const idleWriteBuffer = 512

// growWriterLocked gives the connection its full write buffer, once, at its first PUBLISH.
// Caller holds wmu.
func (c *Conn) growWriterLocked() error {
	if err := c.bw.Flush(); err != nil {
		return err
	}
	c.bw = bufio.NewWriterSize(c.nc, c.opts.WriteBufferSize)
	return nil
}

func (c *Conn) writePublishLocked(topic string, payload []byte, qos byte, id uint16, retain bool, props []byte) error {
	flags := qos << 1
	if retain {
		flags |= 0x01
	}
	h := c.hdr[:0]
	h = append(h, PUBLISH<<4|flags)
	h = appendVarint(h, publishRemainingProps(c.version, len(topic), len(payload), qos, len(props)))
	h = appendString(h, topic)
	if qos > 0 {
		h = binary.BigEndian.AppendUint16(h, id)
	}
	if c.version == V5 {
		h = appendVarint(h, len(props))
		h = append(h, props...)
	}
	c.hdr = h
	c.ka.Wrote()
	if _, err := c.bw.Write(h); err != nil {
		return err
	}
	_, err := c.bw.Write(payload)
	return err
}

// waitHalfWindow blocks until at most half the window is in flight, so that the next write
// carries many PUBLISHes, or until the connection ends. If no acknowledgement has come for
// ackStallGuard while the reader waits on the socket with a slot free, it returns early: a broker
// without TCP_NODELAY (Mosquitto's default) sends one PUBACK and holds the next ones until our
// ACK of it (Nagle), and our kernel delays that ACK up to 40 ms while we send nothing. Measured
// against such a Mosquitto, a QoS 1 closed loop got 7,294 msg/s at inflight 20 (38,644 at
// inflight 1); writing the next PUBLISH carries the ACK.
func (c *Conn) waitHalfWindow() {
	half, full := int32(cap(c.window)/2), int32(cap(c.window))
	c.waitingHalf.Store(true)
	defer c.waitingHalf.Store(false)
	stall := time.NewTimer(ackStallGuard) // one per batch, not per message
	defer stall.Stop()
	for c.inflight.Load() > half {
		select {
		case <-c.lowWater:
		case <-stall.C:
			if c.inflight.Load() < full && c.readerIdle.Load() {
				return
			}
			stall.Reset(ackStallGuard)
		case <-c.done:
			return
		}
	}
}

// ackStallGuard is how long waitHalfWindow waits without an acknowledgement before it suspects a
// Nagle stall: far above a loopback or LAN round trip's share of a batch, far below 40 ms.
const ackStallGuard = 200 * time.Microsecond

// allocLocked finds a free packet id whose slot is free. The window guarantees one exists within
// len(slots) steps. Caller holds smu.
func (c *Conn) allocLocked(state uint8) uint16 {
	if c.slots == nil {
		c.slots = make([]slot, int(c.mask)+1)
	}
	if state != slotAwaitSub {
		c.published = true
	}
	for {
		c.nextID++
		if c.nextID == 0 {
			c.nextID = 1
		}
		s := &c.slots[c.nextID&c.mask]
		if s.state == slotFree {
			s.state = state
			return c.nextID
		}
	}
}

// Flush sends buffered packets.
func (c *Conn) Flush() error {
	c.wmu.Lock()
	err := c.bw.Flush()
	c.unlockWriter()
	if err != nil {
		c.fail(fmt.Errorf("flush: %w", err))
	}
	return err
}

// unlockWriter writes acknowledgements queued by the reader, then releases wmu. It re-checks
// after unlocking so that an acknowledgement queued meanwhile is never stranded.
func (c *Conn) unlockWriter() {
	for {
		if c.ackPending.Load() {
			c.drainAcksLocked()
		}
		c.wmu.Unlock()
		if !c.ackPending.Load() || !c.wmu.TryLock() {
			return
		}
	}
}

// drainAcksLocked writes queued acknowledgements and flushes them: an acknowledgement that
// waits in a buffer stalls the broker's window. Caller holds wmu.
func (c *Conn) drainAcksLocked() {
	c.ackMu.Lock()
	c.ackPending.Store(false)
	if len(c.ackBuf) == 0 {
		c.ackMu.Unlock()
		return
	}
	c.ka.Wrote()
	_, err := c.bw.Write(c.ackBuf)
	c.ackBuf = c.ackBuf[:0]
	c.ackMu.Unlock()
	if err == nil {
		err = c.bw.Flush()
	}
	if err != nil {
		c.fail(fmt.Errorf("send acknowledgement: %w", err))
	}
}

// queueAck queues a 4-byte acknowledgement from the reader goroutine.
func (c *Conn) queueAck(packetType byte, id uint16) {
	c.ackMu.Lock()
	c.ackBuf = AppendAck(c.ackBuf, packetType, id)
	c.ackMu.Unlock()
	c.ackPending.Store(true)
}

// Subscribe sends SUBSCRIBE and waits for SUBACK, returning its reason codes (granted QoS, or
// 0x80 and above for a refused filter).
func (c *Conn) Subscribe(ctx context.Context, subs ...Subscription) ([]byte, error) {
	return c.request(ctx, func(b []byte, id uint16) []byte { return AppendSubscribe(b, c.version, id, subs) })
}

// Unsubscribe sends UNSUBSCRIBE and waits for UNSUBACK.
func (c *Conn) Unsubscribe(ctx context.Context, filters ...string) ([]byte, error) {
	return c.request(ctx, func(b []byte, id uint16) []byte { return AppendUnsubscribe(b, c.version, id, filters) })
}

func (c *Conn) request(ctx context.Context, build func([]byte, uint16) []byte) ([]byte, error) {
	// A request takes a window place too: its packet id must not collide with a publish's.
	select {
	case c.window <- struct{}{}:
	case <-c.done:
		return nil, c.closedErr()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	reply := make(chan Ack, 1)
	c.wmu.Lock()
	c.smu.Lock()
	id := c.allocLocked(slotAwaitSub)
	if c.waiters == nil {
		c.waiters = map[uint16]chan Ack{}
	}
	c.waiters[id] = reply
	c.smu.Unlock()
	c.hdr = build(c.hdr[:0], id)
	c.ka.Wrote()
	_, err := c.bw.Write(c.hdr)
	if err == nil {
		err = c.bw.Flush()
	}
	c.unlockWriter()
	if err != nil {
		c.fail(err)
		return nil, err
	}
	select {
	case a := <-reply:
		return a.ReasonCodes, nil
	case <-c.done:
		return nil, c.closedErr()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// WaitInflight waits until every QoS 1/2 publish has completed and its OnComplete has returned,
// or ctx ends.
func (c *Conn) WaitInflight(ctx context.Context) error {
	if err := c.Flush(); err != nil {
		return err
	}
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	for c.unfinished.Load() > 0 {
		select {
		case <-t.C:
		case <-c.done:
			return c.closedErr()
		case <-ctx.Done():
			return fmt.Errorf("%d publishes still unacknowledged: %w", c.inflight.Load(), ctx.Err())
		}
	}
	return nil
}

// Disconnect sends DISCONNECT and closes the connection.
func (c *Conn) Disconnect() error {
	c.closing.Store(true)
	// A broker that stopped reading (its socket full) must not hold Disconnect forever.
	_ = c.nc.SetWriteDeadline(time.Now().Add(disconnectTimeout))
	c.wmu.Lock()
	_, err := c.bw.Write(disconnectPacket)
	if err == nil {
		err = c.bw.Flush()
	}
	c.wmu.Unlock()
	c.finish(nil)
	return err
}

// disconnectTimeout bounds the DISCONNECT write.
const disconnectTimeout = 2 * time.Second

// Close closes the connection without DISCONNECT (an ungraceful loss: the broker publishes
// the will, if any).
func (c *Conn) Close() error {
	c.closing.Store(true)
	c.finish(nil)
	return nil
}

func (c *Conn) closedErr() error {
	if err := c.Err(); err != nil {
		return err
	}
	return ErrClosed
}

func (c *Conn) fail(err error) {
	if c.closing.Load() {
		err = nil
	}
	c.finish(err)
}

func (c *Conn) finish(err error) {
	c.closeOnce.Do(func() {
		c.err = err
		c.ka.Stop()
		_ = c.nc.Close()
		close(c.done)
	})
}

// sendPing writes a PINGREQ (keepalive.Pinger calls it when nothing was sent for the period).
func (c *Conn) sendPing() error {
	select {
	case <-c.done:
		return nil
	default:
	}
	c.wmu.Lock()
	_, err := c.bw.Write(pingreqPacket)
	if err == nil {
		err = c.bw.Flush()
	}
	c.unlockWriter()
	if err != nil {
		return fmt.Errorf("send PINGREQ: %w", err)
	}
	return nil
}

// readPacket reads one packet. The body aliases the read buffer when it fits (the caller must
// Discard h.Remaining bytes after use) or c's body buffer otherwise (already consumed).
func (c *Conn) readPacket() (Header, []byte, error) {
	first, err := c.br.ReadByte()
	if err != nil {
		return Header{}, nil, err
	}
	h := Header{Type: first >> 4, Flags: first & 0x0f}
	mult := 1
	for i := 0; ; i++ {
		if i == 4 {
			return h, nil, malformed(h.Type, "remaining length longer than 4 bytes")
		}
		b, err := c.br.ReadByte()
		if err != nil {
			return h, nil, err
		}
		h.Remaining += int(b&0x7f) * mult
		if b&0x80 == 0 {
			break
		}
		mult *= 128
	}
	if h.Remaining > c.opts.MaxPacketSize {
		return h, nil, fmt.Errorf("%s of %d bytes exceeds the %d-byte limit", PacketName(h.Type), h.Remaining, c.opts.MaxPacketSize)
	}
	if h.Remaining <= c.br.Size() {
		body, err := c.br.Peek(h.Remaining)
		return h, body, err
	}
	body := make([]byte, h.Remaining) // rare: larger than the read buffer
	if _, err := io.ReadFull(c.br, body); err != nil {
		return h, nil, err
	}
	h.Remaining = 0 // nothing left to discard
	return h, body, nil
}

// packetBuffered reports whether a whole packet waits in the read buffer, so the next read will
// not block. Acknowledgements are batched while it does and flushed before a blocking read.
func (c *Conn) packetBuffered() bool {
	n := c.br.Buffered()
	if n < 2 {
		return false
	}
	b, _ := c.br.Peek(min(n, 5))
	size, ok := PacketLen(b)
	return ok && size <= n
}

// waitReadable waits until the socket has data (or an error or end) with the read buffer
// returned to the pool, then takes a buffer back. The wait peeks at one byte, which the next read
// consumes: one more system call per wake-up. When data was already there (a busy stream), the
// next directReads waits are plain blocking reads, so that a busy connection pays it rarely.
func (c *Conn) waitReadable() error {
	pool := readerPool(c.br.Size())
	pool.Put(c.br)
	c.br = nil
	c.peeks = 0
	err := c.opts.Raw.Read(c.peek)
	br := pool.Get().(*bufio.Reader)
	br.Reset(c.nc)
	c.br = br
	if c.peeks > 1 {
		c.ready = 0
	} else if c.ready++; c.ready >= busyWaits {
		c.ready, c.direct = 0, directReads
	}
	return err
}

// A connection whose busyWaits waits in a row found data already there is busy: its next
// directReads waits are plain reads. A reply that came before the wait (a SUBACK) does not make
// an idle connection busy.
const (
	busyWaits   = 4
	directReads = 64
)

// peekReadable is RawConn.Read's callback: false (wait) while the socket has nothing to read.
func (c *Conn) peekReadable(fd uintptr) bool {
	c.peeks++
	var b [1]byte
	_, _, errno := syscall.Syscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b[0])), 1,
		syscall.MSG_PEEK|syscall.MSG_DONTWAIT, 0, 0)
	return errno != syscall.EAGAIN && errno != syscall.EINTR
}

// readerPools holds a sync.Pool of read buffers per buffer size.
var readerPools sync.Map // int → *sync.Pool

func readerPool(size int) *sync.Pool {
	if p, ok := readerPools.Load(size); ok {
		return p.(*sync.Pool)
	}
	p, _ := readerPools.LoadOrStore(size, &sync.Pool{New: func() any { return bufio.NewReaderSize(nil, size) }})
	return p.(*sync.Pool)
}

func (c *Conn) readLoop() {
	defer close(c.stopped)
	var err error
	for err == nil {
		var h Header
		var body []byte
		idle := !c.packetBuffered() // the next read may block on the socket
		if idle {
			c.readerIdle.Store(true)
			if c.direct > 0 {
				c.direct--
			} else if c.opts.Raw != nil && c.br.Buffered() == 0 {
				if err = c.waitReadable(); err != nil {
					c.readerIdle.Store(false)
					break
				}
			}
		}
		h, body, err = c.readPacket()
		if idle {
			c.readerIdle.Store(false)
		}
		if err != nil {
			break
		}
		err = c.handle(h, body)
		if _, derr := c.br.Discard(h.Remaining); err == nil {
			err = derr
		}
		if c.ackPending.Load() && !c.packetBuffered() && c.wmu.TryLock() {
			c.unlockWriter()
		}
	}
	if errors.Is(err, io.EOF) {
		err = fmt.Errorf("broker closed the connection (%w)", err) // errors.Is(err, io.EOF) still holds
	}
	c.fail(err)
}

func (c *Conn) handle(h Header, body []byte) error {
	switch h.Type {
	case PUBLISH:
		p := &c.pub
		if err := DecodePublish(c.version, h.Flags, body, p); err != nil {
			return err
		}
		switch p.QoS {
		case 0:
			c.deliver(p)
		case 1:
			c.deliver(p)
			c.queueAck(PUBACK, p.PacketID)
		case 2:
			if c.qos2In == nil {
				c.qos2In = make([]uint64, 65536/64)
			}
			w, bit := p.PacketID/64, uint64(1)<<(p.PacketID%64)
			if c.qos2In[w]&bit == 0 { // a redelivered PUBLISH before PUBREL is not delivered twice
				c.qos2In[w] |= bit
				c.deliver(p)
			}
			c.queueAck(PUBREC, p.PacketID)
		}
	case PUBREL:
		var a Ack
		if err := DecodeAck(c.version, h.Type, body, &a); err != nil {
			return err
		}
		if c.qos2In != nil {
			c.qos2In[a.PacketID/64] &^= uint64(1) << (a.PacketID % 64)
		}
		c.queueAck(PUBCOMP, a.PacketID)
	case PUBACK, PUBREC, PUBCOMP:
		var a Ack
		if err := DecodeAck(c.version, h.Type, body, &a); err != nil {
			return err
		}
		c.outgoingAck(h.Type, a.PacketID, a.ReasonCodes[0])
	case SUBACK, UNSUBACK:
		var a Ack
		if err := DecodeAck(c.version, h.Type, body, &a); err != nil {
			return err
		}
		c.smu.Lock()
		w, ok := c.waiters[a.PacketID]
		if ok {
			delete(c.waiters, a.PacketID)
			if len(c.waiters) == 0 {
				c.waiters = nil
			}
			c.slots[a.PacketID&c.mask].state = slotFree
			if c.waiters == nil && !c.published {
				c.slots = nil // a subscriber that never publishes keeps no slots while idle
			}
		}
		c.smu.Unlock()
		if ok {
			<-c.window
			w <- Ack{PacketID: a.PacketID, ReasonCodes: append([]byte(nil), a.ReasonCodes...)}
		}
	case PINGRESP:
	case DISCONNECT:
		if len(body) == 0 { // 0x00, a normal disconnection, which a broker has no reason to send
			return errors.New("broker sent DISCONNECT (normal disconnection)")
		}
		return refusal.Explain(c.version, refusal.DISCONNECT, body[0], disconnectReasonString(body), "")
	default:
		return malformed(h.Type, "unexpected packet from broker")
	}
	return nil
}

func (c *Conn) deliver(p *Publish) {
	if c.opts.OnPublish != nil {
		c.opts.OnPublish(p)
	}
}

// outgoingAck advances an outgoing QoS 1/2 publish. Unknown ids are ignored: a broker may
// repeat an acknowledgement after a reconnect.
func (c *Conn) outgoingAck(packetType byte, id uint16, reason byte) {
	c.smu.Lock()
	if c.slots == nil { // nothing was ever published: an acknowledgement of nothing
		c.smu.Unlock()
		return
	}
	s := &c.slots[id&c.mask]
	if packetType == PUBREC && s.state == slotAwaitAck && reason < 0x80 {
		s.state = slotAwaitComp
		c.smu.Unlock()
		c.queueAck(PUBREL, id)
		return
	}
	if s.state != slotAwaitAck && s.state != slotAwaitComp {
		c.smu.Unlock()
		return
	}
	if packetType == PUBCOMP && s.state != slotAwaitComp {
		c.smu.Unlock()
		return
	}
	sentAt := s.sentAt
	s.state = slotFree
	c.smu.Unlock()
	n := c.inflight.Add(-1)
	<-c.window
	if c.waitingHalf.Load() && n <= int32(cap(c.window)/2) {
		select {
		case c.lowWater <- struct{}{}:
		default:
		}
	}
	if c.opts.OnComplete != nil {
		c.opts.OnComplete(id, sentAt, reason)
	}
	c.unfinished.Add(-1)
}
