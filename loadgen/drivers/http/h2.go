package http

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"

	"golang.org/x/net/http2/hpack"

	"github.com/msgbench/msgbench/internal/wire"
)

// h2Conn is msgbench's own HTTP/2 client connection for publishers (RFC 9113): h2c with prior
// knowledge, or h2 over TLS. Post encodes a request's HEADERS (HPACK with the dynamic table, so
// after the first request its headers are a few indexed bytes, as with h2load or a browser) and
// its DATA into one buffer, written with one system call; a reader goroutine parses frames in
// place and reports each response's :status. Nothing is allocated per request once the maps
// and buffers have grown.
type h2Conn struct {
	nc         net.Conn
	counted    *wire.Conn
	onResponse responseFunc

	mu       sync.Mutex
	wake     *sync.Cond // a stream ended, a window grew, the connection failed
	wbuf     []byte     // frames not yet written
	hbuf     headerBuf
	enc      *hpack.Encoder
	head     requestHead
	clLen    int
	clStr    string // content-length's value
	nextID   uint32
	open     map[uint32]h2Stream // requests without their end
	maxOpen  int                 // the peer's SETTINGS_MAX_CONCURRENT_STREAMS
	maxFrame int                 // the peer's SETTINGS_MAX_FRAME_SIZE
	// Send windows (RFC 9113 §6.9): the connection's and the initial one of a new stream.
	connWindow, initWindow int64
	// The stream Post is sending DATA on and its window (only one Post sends at a time).
	sending       uint32
	sendingWindow int64
	// recvd counts DATA bytes received since the last connection-level WINDOW_UPDATE.
	recvd    int64
	err      error  // why no new request is taken
	goneAt   uint32 // GOAWAY's last stream ID, when the peer sent one
	gone     bool
	closed   bool
	snapshot wire.Counters
}

const (
	h2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
	// h2RecvWindow is the window msgbench grants the gateway, per stream and for the connection.
	// Publish responses are small; a large window means no WINDOW_UPDATE on the request path.
	h2RecvWindow = 16 << 20
	// h2FlushAt sends buffered requests once this many bytes wait, whatever flush says.
	h2FlushAt = 16 << 10
)

// h2Stream is a request in flight: when it was sent, and its final :status once its HEADERS came.
type h2Stream struct {
	sentAt int64
	status int
}

// HTTP/2 frame types and flags (RFC 9113 §6).
const (
	frameData         = 0x0
	frameHeaders      = 0x1
	frameRSTStream    = 0x3
	frameSettings     = 0x4
	framePushPromise  = 0x5
	framePing         = 0x6
	frameGoAway       = 0x7
	frameWindowUpdate = 0x8
	frameContinuation = 0x9

	flagEndStream  = 0x1
	flagAck        = 0x1
	flagEndHeaders = 0x4
	flagPadded     = 0x8
	flagPriority   = 0x20
)

// headerBuf collects one HPACK block from the encoder without allocating.
type headerBuf struct{ b []byte }

func (h *headerBuf) Write(p []byte) (int, error) { h.b = append(h.b, p...); return len(p), nil }

// openH2 connects one HTTP/2 connection (TCP, TLS with ALPN h2 when tlsConf is set) and
// returns once it is usable: the preface and SETTINGS are written, the peer's are read as they
// come (a request does not wait for them, as net/http's client does not).
func (d *driver) openH2(ctx context.Context, tlsConf *tls.Config, head requestHead, onResponse responseFunc) (exchanger, error) {
	nc, counted, err := d.dialTCP(ctx, tlsConf)
	if err != nil {
		return nil, err
	}
	if tc, ok := nc.(*tls.Conn); ok {
		if p := tc.ConnectionState().NegotiatedProtocol; p != "h2" {
			_ = nc.Close()
			return nil, fmt.Errorf("spec.http.version 2: the gateway at %s did not agree to HTTP/2 over TLS (ALPN %q)", d.cfg.Address, p)
		}
	}
	c := newH2Conn(nc, counted, head, onResponse)
	if err := c.start(); err != nil {
		_ = nc.Close()
		return nil, err
	}
	go c.read()
	return c, nil
}

func newH2Conn(nc net.Conn, counted *wire.Conn, head requestHead, onResponse responseFunc) *h2Conn {
	c := &h2Conn{nc: nc, counted: counted, onResponse: onResponse, head: head, nextID: 1,
		open:    map[uint32]h2Stream{},
		maxOpen: 100, maxFrame: 16384, connWindow: 65535, initWindow: 65535}
	c.wake = sync.NewCond(&c.mu)
	c.enc = hpack.NewEncoder(&c.hbuf)
	return c
}

// start writes the preface, msgbench's SETTINGS (no server push; a 16 MiB window per stream)
// and the connection window's increase to the same.
func (c *h2Conn) start() error {
	b := append([]byte(nil), h2Preface...)
	b = appendFrameHeader(b, 12, frameSettings, 0, 0)
	b = appendSetting(b, 0x2, 0)            // SETTINGS_ENABLE_PUSH
	b = appendSetting(b, 0x4, h2RecvWindow) // SETTINGS_INITIAL_WINDOW_SIZE
	b = appendFrameHeader(b, 4, frameWindowUpdate, 0, 0)
	b = binary.BigEndian.AppendUint32(b, h2RecvWindow-65535)
	_, err := c.nc.Write(b)
	return err
}

func appendFrameHeader(b []byte, length int, typ, flags byte, stream uint32) []byte {
	b = append(b, byte(length>>16), byte(length>>8), byte(length), typ, flags)
	return binary.BigEndian.AppendUint32(b, stream&0x7fffffff)
}

func appendSetting(b []byte, id uint16, v uint32) []byte {
	return binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint16(b, id), v)
}

// Post encodes the request into the write buffer, waiting for a free stream and for send
// window as the peer's settings require, and writes the buffer when flush is set or it is full.
func (c *h2Conn) Post(payload []byte, sentAt int64, flush bool) error {
	c.mu.Lock()
	for c.err == nil && len(c.open) >= c.maxOpen {
		_ = c.flushLocked()
		if c.err == nil && len(c.open) >= c.maxOpen {
			c.wake.Wait()
		}
	}
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return err
	}
	id := c.nextID
	c.nextID += 2
	c.open[id] = h2Stream{sentAt: sentAt}
	c.appendHeadersLocked(id, len(payload))
	c.sending, c.sendingWindow = id, c.initWindow
	for len(payload) > 0 {
		if _, ok := c.open[id]; !ok {
			break // answered or reset before its body was all sent (413, RST_STREAM): stop sending
		}
		n := min(len(payload), c.maxFrame)
		n = int(min(int64(n), c.connWindow, c.sendingWindow))
		if n <= 0 { // out of send window: write what waits and let the reader take WINDOW_UPDATEs
			_ = c.flushLocked()
			if c.err != nil {
				break
			}
			c.wake.Wait()
			if c.err != nil {
				break
			}
			continue
		}
		var flags byte
		if n == len(payload) {
			flags = flagEndStream
		}
		c.wbuf = appendFrameHeader(c.wbuf, n, frameData, flags, id)
		c.wbuf = append(c.wbuf, payload[:n]...)
		payload = payload[n:]
		c.connWindow -= int64(n)
		c.sendingWindow -= int64(n)
		if len(c.wbuf) >= h2FlushAt && len(payload) > 0 {
			_ = c.flushLocked()
		}
	}
	c.sending = 0
	// Once in c.open the request is accepted: if the connection failed while its body was being
	// sent, the failure reaches it through onResponse like every other open request.
	if flush || len(c.wbuf) >= h2FlushAt {
		_ = c.flushLocked()
	}
	c.mu.Unlock()
	return nil
}

// appendHeadersLocked appends a HEADERS frame (with CONTINUATION frames past the peer's frame
// size) for stream id; END_STREAM rides on it when the body is empty.
func (c *h2Conn) appendHeadersLocked(id uint32, length int) {
	c.hbuf.b = c.hbuf.b[:0]
	if length != c.clLen || c.clStr == "" { // one string per body size, not per request
		c.clLen, c.clStr = length, strconv.Itoa(length)
	}
	for _, f := range [...]hpack.HeaderField{
		{Name: ":method", Value: "POST"}, {Name: ":scheme", Value: c.head.scheme},
		{Name: ":authority", Value: c.head.authority}, {Name: ":path", Value: c.head.path},
		{Name: "content-type", Value: "application/octet-stream"},
	} {
		_ = c.enc.WriteField(f)
	}
	_ = c.enc.WriteField(hpack.HeaderField{Name: "content-length", Value: c.clStr})
	if c.head.auth != "" {
		_ = c.enc.WriteField(hpack.HeaderField{Name: "authorization", Value: c.head.auth})
	}
	block := c.hbuf.b
	typ, flags := byte(frameHeaders), byte(0)
	if length == 0 {
		flags = flagEndStream
	}
	for {
		n := min(len(block), c.maxFrame)
		f := flags
		if n == len(block) {
			f |= flagEndHeaders
		}
		c.wbuf = appendFrameHeader(c.wbuf, n, typ, f, id)
		c.wbuf = append(c.wbuf, block[:n]...)
		block = block[n:]
		if len(block) == 0 {
			return
		}
		typ, flags = frameContinuation, 0
	}
}

// flushLocked writes the buffer with c.mu held, so frames reach the socket in the order they
// were buffered. A failed write ends the connection for new requests; the reader then fails
// the open ones.
func (c *h2Conn) flushLocked() error {
	if len(c.wbuf) == 0 {
		return nil
	}
	if c.closed {
		c.wbuf = c.wbuf[:0]
		return c.err
	}
	_, err := c.nc.Write(c.wbuf)
	c.wbuf = c.wbuf[:0]
	if err != nil {
		err = fmt.Errorf("HTTP/2 write: %w", err)
		if c.err == nil {
			c.err = err
		}
		_ = c.nc.Close() // wakes the reader, which fails the open requests
		c.wake.Broadcast()
	}
	return err
}

func (c *h2Conn) Flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.flushLocked()
}

func (c *h2Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *h2Conn) Counters() wire.Counters {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return c.snapshot
	}
	return c.counted.Counters()
}

// Close takes every request still open (they get errClosed) and closes the socket; the reader
// then ends without reporting anything more.
func (c *h2Conn) Close() error {
	c.closeWith(errClosed)
	return nil
}

// closeWith closes the connection once, failing the requests still open with err.
func (c *h2Conn) closeWith(err error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	if c.err == nil {
		c.err = err
	}
	c.snapshot = c.counted.Counters()
	_ = c.nc.Close()
	failed := c.takeOpenLocked()
	c.wake.Broadcast()
	c.mu.Unlock()
	for _, sentAt := range failed {
		c.onResponse(sentAt, 0, err)
	}
}

// takeOpenLocked removes every open request, returning their sentAt; it allocates, but only
// when the connection ends.
func (c *h2Conn) takeOpenLocked() []int64 {
	var out []int64
	for id, st := range c.open {
		out = append(out, st.sentAt)
		delete(c.open, id)
	}
	return out
}

// read parses the peer's frames until the connection ends.
func (c *h2Conn) read() {
	br := bufio.NewReaderSize(c.nc, 16<<10)
	dec := hpack.NewDecoder(4096, nil)
	r := h2Reader{c: c, dec: dec}
	dec.SetEmitFunc(r.field)
	err := r.loop(br)
	c.closeWith(err)
}

// h2Reader is the reader goroutine's state.
type h2Reader struct {
	c       *h2Conn
	dec     *hpack.Decoder
	payload []byte
	block   []byte // a header block across CONTINUATION frames
	inBlock bool
	blockOf uint32
	endOf   bool // the block's HEADERS carried END_STREAM
	status  int  // :status of the block being decoded
	ctl     []byte
}

func (r *h2Reader) field(f hpack.HeaderField) {
	if f.Name == ":status" {
		if n, err := strconv.Atoi(f.Value); err == nil {
			r.status = n
		}
	}
}

func (r *h2Reader) loop(br *bufio.Reader) error {
	var hdr [9]byte
	for {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return r.c.lost(err)
		}
		length := int(hdr[0])<<16 | int(hdr[1])<<8 | int(hdr[2])
		typ, flags := hdr[3], hdr[4]
		stream := binary.BigEndian.Uint32(hdr[5:]) & 0x7fffffff
		if length > 1<<24-1 || length > 16<<20 {
			return fmt.Errorf("HTTP/2: a frame of %d bytes", length)
		}
		if cap(r.payload) < length {
			r.payload = make([]byte, length)
		}
		p := r.payload[:length]
		if _, err := io.ReadFull(br, p); err != nil {
			return r.c.lost(err)
		}
		if r.inBlock && typ != frameContinuation {
			return fmt.Errorf("HTTP/2 protocol error: frame type %d inside a header block of stream %d", typ, r.blockOf)
		}
		var err error
		switch typ {
		case frameData:
			r.data(stream, flags, length)
		case frameHeaders:
			err = r.headers(stream, flags, p)
		case frameContinuation:
			err = r.continuation(stream, flags, p)
		case frameRSTStream:
			if len(p) != 4 {
				return errors.New("HTTP/2: RST_STREAM frame of a wrong size")
			}
			code := binary.BigEndian.Uint32(p)
			r.c.end(stream, 0, fmt.Errorf("the gateway reset the request's stream %d (HTTP/2 error %s)", stream, h2ErrorName(code)))
		case frameSettings:
			err = r.settings(flags, p)
		case framePing:
			if flags&flagAck == 0 && len(p) == 8 {
				r.ctl = appendFrameHeader(r.ctl[:0], 8, framePing, flagAck, 0)
				r.ctl = append(r.ctl, p...)
				r.c.writeControl(r.ctl)
			}
		case frameGoAway:
			if len(p) < 8 {
				return errors.New("HTTP/2: GOAWAY frame too short")
			}
			r.c.goAway(binary.BigEndian.Uint32(p)&0x7fffffff, binary.BigEndian.Uint32(p[4:]))
		case frameWindowUpdate:
			if len(p) != 4 {
				return errors.New("HTTP/2: WINDOW_UPDATE frame of a wrong size")
			}
			r.c.windowUpdate(stream, int64(binary.BigEndian.Uint32(p)&0x7fffffff))
		case framePushPromise:
			return errors.New("HTTP/2 protocol error: the gateway pushed a stream though SETTINGS_ENABLE_PUSH is 0")
		}
		if err != nil {
			return err
		}
		if r.c.finished() {
			return errGone
		}
	}
}

func (r *h2Reader) data(stream uint32, flags byte, length int) {
	if length > 0 {
		r.c.consumed(int64(length))
	}
	if flags&flagEndStream != 0 {
		r.c.mu.Lock()
		status := r.c.open[stream].status
		r.c.mu.Unlock()
		if status == 0 {
			r.c.end(stream, 0, fmt.Errorf("HTTP/2: stream %d ended without a response status", stream))
		} else {
			r.c.end(stream, status, nil)
		}
	}
}

func (r *h2Reader) headers(stream uint32, flags byte, p []byte) error {
	if flags&flagPadded != 0 {
		if len(p) < 1 || int(p[0]) > len(p)-1 {
			return errors.New("HTTP/2: HEADERS frame with bad padding")
		}
		p = p[1 : len(p)-int(p[0])]
	}
	if flags&flagPriority != 0 {
		if len(p) < 5 {
			return errors.New("HTTP/2: HEADERS frame too short for its priority")
		}
		p = p[5:]
	}
	r.blockOf, r.endOf = stream, flags&flagEndStream != 0
	if flags&flagEndHeaders == 0 {
		r.block, r.inBlock = append(r.block[:0], p...), true // rare: a block across CONTINUATION frames
		return nil
	}
	return r.headerBlock(p)
}

func (r *h2Reader) continuation(stream uint32, flags byte, p []byte) error {
	if !r.inBlock || stream != r.blockOf {
		return fmt.Errorf("HTTP/2 protocol error: CONTINUATION on stream %d outside a header block", stream)
	}
	r.block = append(r.block, p...)
	if flags&flagEndHeaders == 0 {
		return nil
	}
	r.inBlock = false
	return r.headerBlock(r.block)
}

// headerBlock decodes a complete header block (the decoder's table must see every block) and
// records the final response's status; 1xx responses are interim.
func (r *h2Reader) headerBlock(block []byte) error {
	r.status = 0
	if _, err := r.dec.Write(block); err != nil {
		return fmt.Errorf("HTTP/2: the gateway's header block of stream %d: %w", r.blockOf, err)
	}
	if err := r.dec.Close(); err != nil {
		return fmt.Errorf("HTTP/2: the gateway's header block of stream %d: %w", r.blockOf, err)
	}
	status := r.status
	switch {
	case status >= 100 && status < 200:
		return nil
	case status == 0:
		r.c.mu.Lock()
		isResponse := r.c.open[r.blockOf].status != 0
		r.c.mu.Unlock()
		if !isResponse { // trailers carry no status; a response without one is an error
			r.c.end(r.blockOf, 0, fmt.Errorf("HTTP/2: the gateway's response on stream %d has no :status", r.blockOf))
			return nil
		}
	default:
		r.c.mu.Lock()
		if st, ok := r.c.open[r.blockOf]; ok {
			st.status = status
			r.c.open[r.blockOf] = st
		}
		r.c.mu.Unlock()
	}
	if r.endOf {
		r.c.mu.Lock()
		status = r.c.open[r.blockOf].status
		r.c.mu.Unlock()
		r.c.end(r.blockOf, status, nil)
	}
	return nil
}

func (r *h2Reader) settings(flags byte, p []byte) error {
	if flags&flagAck != 0 {
		return nil
	}
	if len(p)%6 != 0 {
		return errors.New("HTTP/2: SETTINGS frame of a wrong size")
	}
	c := r.c
	c.mu.Lock()
	for ; len(p) >= 6; p = p[6:] {
		v := binary.BigEndian.Uint32(p[2:])
		switch binary.BigEndian.Uint16(p) {
		case 0x1: // SETTINGS_HEADER_TABLE_SIZE: the encoder may use at most this much
			c.enc.SetMaxDynamicTableSizeLimit(v)
		case 0x3: // SETTINGS_MAX_CONCURRENT_STREAMS
			c.maxOpen = int(min(v, 1<<20))
		case 0x4: // SETTINGS_INITIAL_WINDOW_SIZE changes open streams' windows by the difference
			if v > 1<<31-1 {
				c.mu.Unlock()
				return errors.New("HTTP/2: SETTINGS_INITIAL_WINDOW_SIZE above 2^31-1")
			}
			delta := int64(v) - c.initWindow
			c.initWindow = int64(v)
			if c.sending != 0 {
				c.sendingWindow += delta
			}
		case 0x5: // SETTINGS_MAX_FRAME_SIZE
			if v < 16384 || v > 1<<24-1 {
				c.mu.Unlock()
				return fmt.Errorf("HTTP/2: SETTINGS_MAX_FRAME_SIZE %d out of range", v)
			}
			c.maxFrame = int(v)
		}
	}
	c.wake.Broadcast()
	c.mu.Unlock()
	r.ctl = appendFrameHeader(r.ctl[:0], 0, frameSettings, flagAck, 0)
	c.writeControl(r.ctl)
	return nil
}

// writeControl appends a control frame behind buffered requests and writes them all.
func (c *h2Conn) writeControl(frame []byte) {
	c.mu.Lock()
	c.wbuf = append(c.wbuf, frame...)
	_ = c.flushLocked()
	c.mu.Unlock()
}

// consumed returns received DATA to the connection's window once half of it is used (streams
// get 16 MiB each and end long before).
func (c *h2Conn) consumed(n int64) {
	c.mu.Lock()
	c.recvd += n
	if c.recvd >= h2RecvWindow/2 {
		c.wbuf = appendFrameHeader(c.wbuf, 4, frameWindowUpdate, 0, 0)
		c.wbuf = binary.BigEndian.AppendUint32(c.wbuf, uint32(c.recvd))
		c.recvd = 0
		_ = c.flushLocked()
	}
	c.mu.Unlock()
}

func (c *h2Conn) windowUpdate(stream uint32, n int64) {
	c.mu.Lock()
	switch stream {
	case 0:
		c.connWindow += n
	case c.sending:
		c.sendingWindow += n
	}
	c.wake.Broadcast()
	c.mu.Unlock()
}

// end reports a request's outcome, once: requests Close has taken are not reported again.
func (c *h2Conn) end(stream uint32, status int, err error) {
	c.mu.Lock()
	st, ok := c.open[stream]
	if ok {
		delete(c.open, stream)
		c.wake.Broadcast()
	}
	c.mu.Unlock()
	if ok {
		c.onResponse(st.sentAt, status, err)
	}
}

// goAway: streams above last were not processed and fail; the connection takes no new request.
func (c *h2Conn) goAway(last, code uint32) {
	c.mu.Lock()
	c.gone, c.goneAt = true, last
	if c.err == nil {
		c.err = errGone
		if code != 0 {
			c.err = fmt.Errorf("the gateway closed the HTTP/2 connection (GOAWAY, %s)", h2ErrorName(code))
		}
	}
	var failed []int64
	for id, st := range c.open {
		if id > last {
			failed = append(failed, st.sentAt)
			delete(c.open, id)
		}
	}
	c.wake.Broadcast()
	err := c.err
	c.mu.Unlock()
	for _, sentAt := range failed {
		c.onResponse(sentAt, 0, fmt.Errorf("the gateway did not process the request: %w", err))
	}
}

// finished: after GOAWAY, the connection is done once its last request has its response.
func (c *h2Conn) finished() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gone && len(c.open) == 0
}

// lost names why the connection's reader stopped: the socket closed by Close, or by the peer.
func (c *h2Conn) lost(err error) error {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return errClosed
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("the gateway closed the HTTP/2 connection")
	}
	return fmt.Errorf("HTTP/2 read: %w", err)
}

// h2ErrorName is an HTTP/2 error code's name (RFC 9113 §7).
func h2ErrorName(code uint32) string {
	names := [...]string{"NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR",
		"SETTINGS_TIMEOUT", "STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL",
		"COMPRESSION_ERROR", "CONNECT_ERROR", "ENHANCE_YOUR_CALM", "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED"}
	if int(code) < len(names) {
		return names[code]
	}
	return "0x" + strconv.FormatUint(uint64(code), 16)
}
