package http

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/quicvarint"
	"golang.org/x/net/http2/hpack"

	"github.com/msgbench/msgbench/internal/wire"
	"github.com/msgbench/msgbench/loadgen/drivers/mqttquic/quicconn"
)

// h3Client is msgbench's own HTTP/3 client connection for publishers (RFC 9114, QPACK RFC 9204
// with the static table only). Post writes a request's HEADERS and DATA frames in one buffer
// with one stream Write followed by FIN, so they leave in one QUIC packet when they fit; a fixed
// set of reader goroutines (at most spec.mqtt.inflight, started as requests overlap) reads the
// responses, finds each :status in place and reports it. The request and read buffers are
// reused, so nothing of msgbench's is allocated per request; quic-go allocates per stream
// (docs/benchmarks-http.md §3).
type h3Client struct {
	qc         *quicconn.Conn
	onResponse responseFunc
	path       string           // for error messages
	control    *quic.SendStream // msgbench's control stream: open while the connection is

	postMu  sync.Mutex // one Post at a time: the fields below and starting readers
	fields  []byte     // the field section before content-length: prefix, :method … authorization
	clLen   int        // the body size clField encodes
	clField []byte     // content-length's field line
	wbuf    []byte     // one request's frames
	readers int        // reader goroutines started

	jobs        chan *h3Slot // requests written, for a reader
	free        chan *h3Slot // slots for new requests; its capacity bounds the slots
	outstanding atomic.Int32 // requests handed to jobs whose reader has not finished with them
	gotControl  atomic.Bool  // the gateway's control stream arrived

	mu     sync.Mutex
	slots  []*h3Slot // every slot made, for Close and GOAWAY
	err    error     // why no new request is taken
	closed bool
	done   chan struct{} // closed by Close: the readers end
}

// h3Slot is one request in flight: its stream, when it was sent, and the buffer its response
// is read into, kept for the next request.
type h3Slot struct {
	str    *quic.Stream
	sentAt int64
	state  uint8 // h3SlotIdle, h3SlotSent (waiting for its response), h3SlotTaken (by Close)
	buf    []byte
}

const (
	h3SlotIdle uint8 = iota
	h3SlotSent
	h3SlotTaken
)

// HTTP/3 frame and stream types, settings and error codes (RFC 9114 §7.2, §6.2, §7.2.4.1, §8.1;
// RFC 9204 §4.2, §5, §6).
const (
	h3FrameData        = 0x0
	h3FrameHeaders     = 0x1
	h3FrameSettings    = 0x4
	h3FramePushPromise = 0x5
	h3FrameGoAway      = 0x7

	h3StreamControl      = 0x0
	h3StreamPush         = 0x1
	h3StreamQPACKEncoder = 0x2
	h3StreamQPACKDecoder = 0x3

	h3SettingQPACKMaxTableCapacity = 0x1
	h3SettingMaxFieldSectionSize   = 0x6
	h3SettingQPACKBlockedStreams   = 0x7

	h3NoError              = 0x100
	h3StreamCreationError  = 0x103
	h3ClosedCriticalStream = 0x104
	h3FrameUnexpected      = 0x105
	h3FrameError           = 0x106
	h3ExcessiveLoad        = 0x107
	h3IDError              = 0x108
	h3SettingsError        = 0x109
	h3MissingSettings      = 0x10a
	h3RequestCancelled     = 0x10c
	h3MessageError         = 0x10e
	qpackDecompression     = 0x200

	// h3MaxFieldSection is msgbench's SETTINGS_MAX_FIELD_SECTION_SIZE: the gateway's responses
	// carry a few short fields.
	h3MaxFieldSection = 16 << 10
	// h3ReadBuf is a slot's first read buffer: a 204's HEADERS frame is 3 bytes, an error's body
	// a line of text.
	h3ReadBuf = 256
)

// openH3 connects one HTTP/3 connection and returns once it is usable: the QUIC handshake done
// (noted), msgbench's control stream with its SETTINGS written. The gateway's SETTINGS are
// read as they come; a request does not wait for them (RFC 9114 §6.2.1 lets a client send
// requests at once; quic-go's client does the same).
func (d *driver) openH3(ctx context.Context, tlsConf *tls.Config, head requestHead, onResponse responseFunc) (exchanger, error) {
	qc, err := quicconn.Dial(ctx, d.cfg.Dialer(), d.cfg.Address, tlsConf, d.quic, false) // a POST never rides in 0-RTT
	if err != nil {
		return nil, err
	}
	select { // complete already: Dial without early data returns after the handshake
	case <-qc.HandshakeComplete():
		d.Note(qc.ConnectionState().TLS)
	case <-qc.Context().Done():
	}
	c := newH3Client(qc, head, d.window, onResponse)
	if err := c.start(); err != nil {
		_ = qc.Close()
		return nil, fmt.Errorf("HTTP/3 control stream to %s: %w", d.cfg.Address, err)
	}
	go c.acceptUni()
	return c, nil
}

func newH3Client(qc *quicconn.Conn, head requestHead, inflight int, onResponse responseFunc) *h3Client {
	return &h3Client{qc: qc, onResponse: onResponse, path: head.path, fields: h3RequestFields(head),
		jobs: make(chan *h3Slot, inflight), free: make(chan *h3Slot, inflight), done: make(chan struct{})}
}

// start opens msgbench's control stream with its SETTINGS: no QPACK dynamic table (capacity 0,
// no blocked streams), so every field section either side sends uses the static table and
// literals only; a 16 KiB bound on response headers.
func (c *h3Client) start() error {
	str, err := c.qc.OpenUniStream()
	if err != nil {
		return err
	}
	c.control = str
	var settings []byte
	for _, s := range [...][2]uint64{
		{h3SettingQPACKMaxTableCapacity, 0}, {h3SettingQPACKBlockedStreams, 0},
		{h3SettingMaxFieldSectionSize, h3MaxFieldSection},
	} {
		settings = quicvarint.Append(quicvarint.Append(settings, s[0]), s[1])
	}
	b := quicvarint.Append(nil, h3StreamControl)
	b = quicvarint.Append(b, h3FrameSettings)
	b = quicvarint.Append(b, uint64(len(settings)))
	_, err = str.Write(append(b, settings...))
	return err
}

// Post opens a stream (waiting at the gateway's stream limit), writes the request's frames with
// one Write and closes the stream's sending side. Once written, the request is accepted: a
// stream the gateway stopped or a connection lost during the write fails it through its reader.
func (c *h3Client) Post(payload []byte, sentAt int64, _ bool) error {
	c.postMu.Lock()
	defer c.postMu.Unlock()
	if err := c.Err(); err != nil {
		return err
	}
	s, err := c.slot()
	if err != nil {
		return err
	}
	str, err := c.qc.OpenStreamSync(c.qc.Context())
	if err != nil {
		c.free <- s
		if err := c.Err(); err != nil {
			return err
		}
		return fmt.Errorf("HTTP/3 POST %s: opening a stream: %w", c.path, err)
	}
	c.wbuf = c.appendRequest(c.wbuf[:0], payload)
	if _, err := str.Write(c.wbuf); err == nil {
		_ = str.Close() // FIN, on the same STREAM frame unless quic-go packed the data meanwhile
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		str.CancelRead(h3RequestCancelled)
		str.CancelWrite(h3RequestCancelled)
		c.free <- s
		return errClosed
	}
	s.state, s.sentAt, s.str = h3SlotSent, sentAt, str
	c.mu.Unlock()
	n := c.outstanding.Add(1)
	c.jobs <- s // never blocks: it holds as many as there are slots
	if int(n) > c.readers {
		// Every reader is busy with a request: one more, up to one per slot.
		c.readers++
		go c.read()
	}
	return nil
}

// slot takes a free slot, makes one while fewer than inflight exist, or waits for one.
func (c *h3Client) slot() (*h3Slot, error) {
	select {
	case s := <-c.free:
		return s, nil
	default:
	}
	c.mu.Lock()
	if len(c.slots) < cap(c.free) {
		s := &h3Slot{buf: make([]byte, 0, h3ReadBuf)}
		c.slots = append(c.slots, s)
		c.mu.Unlock()
		return s, nil
	}
	c.mu.Unlock()
	select {
	case s := <-c.free:
		return s, nil
	case <-c.done:
		return nil, errClosed
	}
}

// appendRequest appends one request's HEADERS and DATA frames.
func (c *h3Client) appendRequest(b, payload []byte) []byte {
	if len(payload) != c.clLen || c.clField == nil { // one encoding per body size, not per request
		c.clLen = len(payload)
		c.clField = appendQPACKLiteral(c.clField[:0], 0, qpackContentLength, strconv.Itoa(len(payload)))
	}
	b = quicvarint.Append(b, h3FrameHeaders)
	b = quicvarint.Append(b, uint64(len(c.fields)+len(c.clField)))
	b = append(b, c.fields...)
	b = append(b, c.clField...)
	if len(payload) > 0 {
		b = quicvarint.Append(b, h3FrameData)
		b = quicvarint.Append(b, uint64(len(payload)))
		b = append(b, payload...)
	}
	return b
}

// read is one reader goroutine: it waits for each response of the requests it is given.
func (c *h3Client) read() {
	for {
		select {
		case s := <-c.jobs:
			c.await(s)
		case <-c.done:
			return
		}
	}
}

// await reads a request's response and reports it, unless Close took the request first.
func (c *h3Client) await(s *h3Slot) {
	r := h3Reader{str: s.str, buf: s.buf[:0]}
	status, err := c.response(&r)
	s.buf = r.buf[:0] // kept, grown or not, for the slot's next request
	c.mu.Lock()
	report := s.state == h3SlotSent
	s.state, s.str = h3SlotIdle, nil
	sentAt := s.sentAt
	c.mu.Unlock()
	c.outstanding.Add(-1)
	c.free <- s // never blocks: it holds every slot
	if report {
		c.onResponse(sentAt, status, err)
	}
}

// response reads the response frames on r's stream to its end: the final :status of the first
// HEADERS frame (after interim 1xx ones); DATA and trailers are read and dropped. A stream reset
// after the final status still reports the status (the body is dropped anyway).
func (c *h3Client) response(r *h3Reader) (int, error) {
	status := 0
	for {
		typ, err := r.varint()
		if err != nil {
			if status != 0 {
				return status, nil
			}
			return 0, c.requestErr(r.str, err)
		}
		length, err := r.varint()
		if err != nil {
			if status != 0 {
				return status, nil
			}
			return 0, c.requestErr(r.str, err)
		}
		switch {
		case typ == h3FrameHeaders && status == 0:
			if length > h3MaxFieldSection {
				r.str.CancelRead(h3ExcessiveLoad)
				return 0, fmt.Errorf("HTTP/3 POST %s: response HEADERS of %d bytes, over msgbench's SETTINGS_MAX_FIELD_SECTION_SIZE %d", c.path, length, h3MaxFieldSection)
			}
			if err := r.need(int(length)); err != nil {
				return 0, c.requestErr(r.str, err)
			}
			st, err := qpackStatus(r.buf[r.r : r.r+int(length)])
			if err != nil {
				r.str.CancelRead(qpackDecompression)
				return 0, fmt.Errorf("HTTP/3 POST %s: response on stream %d: %w", c.path, r.str.StreamID(), err)
			}
			r.r += int(length)
			if st >= 200 { // 1xx: interim, the final response follows
				status = st
			}
		case typ == h3FrameData && status == 0:
			r.str.CancelRead(h3FrameUnexpected)
			return 0, fmt.Errorf("HTTP/3 POST %s: DATA before the response's HEADERS on stream %d", c.path, r.str.StreamID())
		case typ == h3FrameSettings || typ == h3FrameGoAway || typ == h3FramePushPromise || h3ReservedFrame(typ):
			c.fail(h3FrameUnexpected, fmt.Errorf("the gateway sent frame type 0x%x on a request stream (RFC 9114 §7.2)", typ))
			return 0, c.requestErr(r.str, c.Err())
		default: // DATA, trailers, unknown frame types
			if err := r.skip(length); err != nil {
				if status != 0 {
					return status, nil
				}
				return 0, c.requestErr(r.str, err)
			}
		}
	}
}

// h3ReservedFrame: HTTP/2's frame types that HTTP/3 reserves (RFC 9114 §11.2.1).
func h3ReservedFrame(typ uint64) bool { return typ == 0x2 || typ == 0x6 || typ == 0x8 || typ == 0x9 }

// requestErr explains why a request ended without a response.
func (c *h3Client) requestErr(str *quic.Stream, err error) error {
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	var se *quic.StreamError
	switch {
	case errors.As(err, &se) && se.Remote:
		return fmt.Errorf("HTTP/3 POST %s: the gateway reset the request's stream %d (%s)", c.path, str.StreamID(), h3ErrorName(uint64(se.ErrorCode)))
	case se != nil: // cancelled here: after GOAWAY, or a protocol error
		return fmt.Errorf("HTTP/3 POST %s: stream %d: %w", c.path, str.StreamID(), c.lost(err))
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("HTTP/3 POST %s: the gateway ended stream %d before the response's HEADERS", c.path, str.StreamID())
	}
	return fmt.Errorf("HTTP/3 POST %s: %w", c.path, c.lost(err))
}

// lost is the connection's failure: Close, a protocol error, GOAWAY, or the QUIC connection's
// own error.
func (c *h3Client) lost(err error) error {
	if cerr := c.Err(); cerr != nil {
		return cerr
	}
	return quicconn.ExplainRefused(err)
}

// Flush has nothing to write: Post hands every request to QUIC, whose send loop packs it.
func (c *h3Client) Flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return c.err
	}
	return nil
}

func (c *h3Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		select {
		case <-c.qc.Context().Done():
			c.err = h3ConnErr(context.Cause(c.qc.Context()))
		default:
		}
	}
	return c.err
}

// h3ConnErr names why the QUIC connection ended.
func h3ConnErr(err error) error {
	var ae *quic.ApplicationError
	if errors.As(err, &ae) && ae.Remote {
		return fmt.Errorf("the gateway closed the HTTP/3 connection (%s %s)", h3ErrorName(uint64(ae.ErrorCode)), ae.ErrorMessage)
	}
	return fmt.Errorf("HTTP/3 connection: %w", quicconn.ExplainRefused(err))
}

// Counters are the UDP socket's: atomic counts that stay readable after Close.
func (c *h3Client) Counters() wire.Counters { return c.qc.Counters() }

// Close takes every request still waiting for its response (they get errClosed, here, on the
// caller's goroutine) and closes the connection (H3_NO_ERROR); the readers end without
// reporting anything more. A responseFunc that a reader had begun before keeps running.
func (c *h3Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	if c.err == nil {
		c.err = errClosed
	}
	var taken []int64 // allocated only when requests are left
	for _, s := range c.slots {
		if s.state == h3SlotSent {
			s.state = h3SlotTaken
			taken = append(taken, s.sentAt)
		}
	}
	c.mu.Unlock()
	close(c.done)
	_ = c.qc.CloseWithError(h3NoError, "")
	_ = c.qc.Close()
	for _, sentAt := range taken {
		c.onResponse(sentAt, 0, errClosed)
	}
	return nil
}

// fail ends the connection with an HTTP/3 error the gateway caused; err is what requests get.
func (c *h3Client) fail(code quic.ApplicationErrorCode, err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.mu.Unlock()
	_ = c.qc.CloseWithError(code, err.Error())
}

// goAway: the connection takes no new request, and requests on streams from id on, which the
// gateway will not process, end now (RFC 9114 §5.2).
func (c *h3Client) goAway(id uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = errGone
	}
	for _, s := range c.slots {
		if s.state == h3SlotSent && uint64(s.str.StreamID()) >= id {
			s.str.CancelRead(h3RequestCancelled)
		}
	}
}

// acceptUni takes the gateway's unidirectional streams until the connection ends.
func (c *h3Client) acceptUni() {
	for {
		str, err := c.qc.AcceptUniStream(context.Background())
		if err != nil {
			return
		}
		go c.uni(str)
	}
}

// uni handles one unidirectional stream of the gateway by its type (RFC 9114 §6.2).
func (c *h3Client) uni(str *quic.ReceiveStream) {
	br := bufio.NewReaderSize(str, 64)
	typ, err := quicvarint.Read(br)
	if err != nil {
		return
	}
	switch typ {
	case h3StreamControl:
		if !c.gotControl.CompareAndSwap(false, true) {
			c.fail(h3StreamCreationError, errors.New("the gateway opened a second HTTP/3 control stream"))
			return
		}
		c.readControl(br)
	case h3StreamQPACKEncoder, h3StreamQPACKDecoder:
		// With no dynamic table there is nothing to read on them, but they must stay open.
		_, _ = io.Copy(io.Discard, br)
	case h3StreamPush:
		c.fail(h3IDError, errors.New("the gateway opened a push stream, though msgbench never sent MAX_PUSH_ID"))
	default: // an extension's stream, or a grease type
		str.CancelRead(h3StreamCreationError)
	}
}

// readControl reads the gateway's control stream: SETTINGS first, then GOAWAY or frames to skip.
func (c *h3Client) readControl(br *bufio.Reader) {
	for first := true; ; first = false {
		typ, err := quicvarint.Read(br)
		if err != nil {
			c.controlLost()
			return
		}
		length, err := quicvarint.Read(br)
		if err != nil {
			c.controlLost()
			return
		}
		if first && typ != h3FrameSettings {
			c.fail(h3MissingSettings, fmt.Errorf("the gateway's HTTP/3 control stream began with frame type 0x%x, not SETTINGS", typ))
			return
		}
		switch {
		case typ == h3FrameSettings && first:
			if length > 4096 {
				c.fail(h3ExcessiveLoad, fmt.Errorf("the gateway's HTTP/3 SETTINGS frame has %d bytes", length))
				return
			}
			p := make([]byte, length)
			if _, err := io.ReadFull(br, p); err != nil {
				c.controlLost()
				return
			}
			if err := checkH3Settings(p); err != nil {
				c.fail(h3SettingsError, fmt.Errorf("the gateway's HTTP/3 SETTINGS: %w", err))
				return
			}
		case typ == h3FrameGoAway:
			id, err := quicvarint.Read(br)
			if err != nil || uint64(quicvarint.Len(id)) != length {
				c.fail(h3FrameError, errors.New("the gateway's HTTP/3 GOAWAY frame is malformed"))
				return
			}
			c.goAway(id)
		case typ == h3FrameSettings || typ == h3FrameData || typ == h3FrameHeaders || typ == h3FramePushPromise || h3ReservedFrame(typ):
			c.fail(h3FrameUnexpected, fmt.Errorf("the gateway sent frame type 0x%x on its HTTP/3 control stream", typ))
			return
		default: // CANCEL_PUSH, PRIORITY_UPDATE, extensions: nothing for a publisher to do
			if _, err := br.Discard(int(min(length, 1<<30))); err != nil {
				c.controlLost()
				return
			}
		}
	}
}

// controlLost: the gateway's control stream ended. When the connection is still up, that is a
// connection error (RFC 9114 §6.2.1).
func (c *h3Client) controlLost() {
	select {
	case <-c.qc.Context().Done():
	default:
		c.fail(h3ClosedCriticalStream, errors.New("the gateway closed its HTTP/3 control stream"))
	}
}

// checkH3Settings validates a SETTINGS frame's payload: identifiers once each, none of HTTP/2's
// (RFC 9114 §7.2.4.1). msgbench needs none of the values: it sends no dynamic-table references,
// and its requests' fields are far below any size limit.
func checkH3Settings(p []byte) error {
	var seen []uint64
	for len(p) > 0 {
		id, n, err := quicvarint.Parse(p)
		if err != nil {
			return err
		}
		_, m, err := quicvarint.Parse(p[n:])
		if err != nil {
			return err
		}
		p = p[n+m:]
		if id >= 0x2 && id <= 0x5 {
			return fmt.Errorf("HTTP/2 setting 0x%x", id)
		}
		for _, s := range seen {
			if s == id {
				return fmt.Errorf("setting 0x%x twice", id)
			}
		}
		seen = append(seen, id)
	}
	return nil
}

// h3Reader reads one stream's frames through a reusable buffer; buf[r:] is unread.
type h3Reader struct {
	str *quic.Stream
	buf []byte
	r   int
}

// need reads until at least n unread bytes are held, growing the buffer past its capacity.
func (h *h3Reader) need(n int) error {
	for len(h.buf)-h.r < n {
		if h.r > 0 {
			m := copy(h.buf[:cap(h.buf)], h.buf[h.r:])
			h.buf, h.r = h.buf[:m], 0
		}
		if n > cap(h.buf) {
			h.buf = append(make([]byte, 0, max(n, 2*cap(h.buf))), h.buf...)
		}
		k, err := h.str.Read(h.buf[len(h.buf):cap(h.buf)])
		h.buf = h.buf[:len(h.buf)+k]
		if err != nil && len(h.buf)-h.r < n {
			if errors.Is(err, io.EOF) && len(h.buf) > h.r {
				return io.ErrUnexpectedEOF
			}
			return err
		}
	}
	return nil
}

func (h *h3Reader) varint() (uint64, error) {
	if err := h.need(1); err != nil {
		return 0, err
	}
	if err := h.need(1 << (h.buf[h.r] >> 6)); err != nil {
		return 0, err
	}
	v, n, err := quicvarint.Parse(h.buf[h.r:])
	h.r += n
	return v, err
}

// skip drops n bytes of the stream.
func (h *h3Reader) skip(n uint64) error {
	for n > 0 {
		if h.r == len(h.buf) {
			k, err := h.str.Read(h.buf[:cap(h.buf)])
			h.buf, h.r = h.buf[:k], 0
			if k == 0 && err != nil {
				return err
			}
			continue
		}
		d := min(uint64(len(h.buf)-h.r), n)
		h.r += int(d)
		n -= d
	}
	return nil
}

// QPACK static table indices msgbench uses (RFC 9204 Appendix A).
const (
	qpackAuthority     = 0
	qpackPath          = 1
	qpackContentLength = 4
	qpackMethodPOST    = 20
	qpackSchemeHTTP    = 22
	qpackSchemeHTTPS   = 23
	qpackStatus103     = 24 // the first :status entry
	qpackContentType   = 44 // content-type: application/dns-message, for its name
	qpackAuthorization = 84
	qpackStaticEntries = 99
)

// h3RequestFields encodes the fields every request of a publisher carries, content-length
// aside, as a QPACK field section of static-table references and literals (Huffman-coded when
// shorter, as nghttp3 and quic-go do): Required Insert Count 0, Base 0.
func h3RequestFields(head requestHead) []byte {
	b := []byte{0, 0}
	b = appendQPACKIndexed(b, qpackMethodPOST)
	switch head.scheme {
	case "https":
		b = appendQPACKIndexed(b, qpackSchemeHTTPS)
	case "http":
		b = appendQPACKIndexed(b, qpackSchemeHTTP)
	default:
		b = appendQPACKLiteral(b, 0, qpackSchemeHTTP, head.scheme)
	}
	b = appendQPACKLiteral(b, 0, qpackAuthority, head.authority)
	b = appendQPACKLiteral(b, 0, qpackPath, head.path)
	b = appendQPACKLiteral(b, 0, qpackContentType, "application/octet-stream")
	if head.auth != "" {
		b = appendQPACKLiteral(b, 0x20, qpackAuthorization, head.auth) // N: never indexed by a proxy
	}
	return b
}

// appendQPACKInt appends v as a QPACK/HPACK prefix integer of bits bits after the flags of the
// first byte (RFC 7541 §5.1).
func appendQPACKInt(b []byte, flags byte, bits uint8, v uint64) []byte {
	limit := uint64(1)<<bits - 1
	if v < limit {
		return append(b, flags|byte(v))
	}
	b = append(b, flags|byte(limit))
	v -= limit
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// appendQPACKIndexed appends an indexed field line referring to the static table.
func appendQPACKIndexed(b []byte, index uint64) []byte { return appendQPACKInt(b, 0xc0, 6, index) }

// appendQPACKLiteral appends a literal field line whose name is static entry index; never
// (0x20) sets the N bit.
func appendQPACKLiteral(b []byte, never byte, index uint64, value string) []byte {
	b = appendQPACKInt(b, 0x50|never, 4, index)
	if n := hpack.HuffmanEncodeLength(value); n < uint64(len(value)) {
		b = appendQPACKInt(b, 0x80, 7, n)
		return hpack.AppendHuffmanString(b, value)
	}
	b = appendQPACKInt(b, 0, 7, uint64(len(value)))
	return append(b, value...)
}

var (
	errQPACKTruncated = errors.New("QPACK field section truncated")
	errQPACKDynamic   = errors.New("QPACK field line refers to the dynamic table, which msgbench set to capacity 0")
	// qpackStatusHuffman is the name ":status" Huffman-coded, for a literal name.
	qpackStatusHuffman = string(hpack.AppendHuffmanString(nil, ":status"))
)

// qpackStatus finds :status in a response's QPACK field section without decoding the other
// fields or allocating: static-table indexed lines, literals with a static name reference and
// literals with a literal name are understood; anything referring to the dynamic table is an
// error, since msgbench's SETTINGS leave it at capacity 0.
func qpackStatus(p []byte) (int, error) {
	ric, p, ok := qpackInt(p, 8)
	if !ok {
		return 0, errQPACKTruncated
	}
	if ric != 0 {
		return 0, errQPACKDynamic
	}
	if _, p, ok = qpackInt(p, 7); !ok { // Base: sign and delta, unused without a dynamic table
		return 0, errQPACKTruncated
	}
	fields := 0
	for len(p) > 0 {
		fields++
		b := p[0]
		switch {
		case b&0x80 != 0: // indexed field line
			if b&0x40 == 0 {
				return 0, errQPACKDynamic
			}
			var idx uint64
			if idx, p, ok = qpackInt(p, 6); !ok || idx >= qpackStaticEntries {
				return 0, fmt.Errorf("QPACK static index %d out of range", idx)
			}
			if st := qpackStaticStatus(idx); st != 0 {
				return st, nil
			}
		case b&0xc0 == 0x40: // literal field line with a name reference
			if b&0x10 == 0 {
				return 0, errQPACKDynamic
			}
			var idx uint64
			if idx, p, ok = qpackInt(p, 4); !ok || idx >= qpackStaticEntries {
				return 0, fmt.Errorf("QPACK static index %d out of range", idx)
			}
			var v []byte
			var huff bool
			if v, huff, p, ok = qpackString(p, 7); !ok {
				return 0, errQPACKTruncated
			}
			if qpackStaticStatus(idx) != 0 {
				return parseStatus(v, huff)
			}
		case b&0xe0 == 0x20: // literal field line with a literal name
			huffName := b&0x08 != 0
			var name, v []byte
			var huff bool
			if name, _, p, ok = qpackString(p, 3); !ok {
				return 0, errQPACKTruncated
			}
			if v, huff, p, ok = qpackString(p, 7); !ok {
				return 0, errQPACKTruncated
			}
			if (!huffName && string(name) == ":status") || (huffName && string(name) == qpackStatusHuffman) {
				return parseStatus(v, huff)
			}
		default: // post-base indexed or post-base name reference: dynamic table
			return 0, errQPACKDynamic
		}
	}
	return 0, fmt.Errorf("no :status among the response's %d header fields", fields)
}

// qpackStaticStatus is the status of a static-table :status entry, or 0 for other entries.
func qpackStaticStatus(idx uint64) int {
	switch {
	case idx >= qpackStatus103 && idx <= qpackStatus103+4:
		return [...]int{103, 200, 304, 404, 503}[idx-qpackStatus103]
	case idx >= 63 && idx <= 71:
		return [...]int{100, 204, 206, 302, 400, 403, 421, 425, 500}[idx-63]
	}
	return 0
}

// qpackInt reads a prefix integer of bits bits from p's first byte on.
func qpackInt(p []byte, bits uint8) (uint64, []byte, bool) {
	if len(p) == 0 {
		return 0, p, false
	}
	limit := uint64(1)<<bits - 1
	v := uint64(p[0]) & limit
	p = p[1:]
	if v < limit {
		return v, p, true
	}
	for shift := uint(0); len(p) > 0 && shift < 63; shift += 7 {
		b := p[0]
		p = p[1:]
		v += uint64(b&0x7f) << shift
		if b&0x80 == 0 {
			return v, p, true
		}
	}
	return 0, p, false
}

// qpackString reads a string literal whose length is a prefix integer of bits bits, with the
// Huffman flag just above it.
func qpackString(p []byte, bits uint8) (s []byte, huffman bool, rest []byte, ok bool) {
	if len(p) == 0 {
		return nil, false, p, false
	}
	huffman = p[0]&(1<<bits) != 0
	n, p, ok := qpackInt(p, bits)
	if !ok || n > uint64(len(p)) {
		return nil, false, p, false
	}
	return p[:n], huffman, p[n:], true
}

// parseStatus reads a three-digit status, plain or Huffman-coded (RFC 7541 Appendix B: '0'–'2'
// are the 5-bit codes 0–2, '3'–'9' the 6-bit codes 0x19–0x1f; padding is up to 7 one bits).
func parseStatus(v []byte, huffman bool) (int, error) {
	var d [3]int
	if !huffman {
		if len(v) != 3 {
			return 0, fmt.Errorf("malformed :status %q", v)
		}
		for i, ch := range v {
			d[i] = int(ch) - '0'
		}
	} else {
		if len(v) < 2 || len(v) > 3 { // three digits are 15 to 18 bits
			return 0, fmt.Errorf("malformed Huffman-coded :status % x", v)
		}
		var acc uint64
		for _, ch := range v {
			acc = acc<<8 | uint64(ch)
		}
		bits := uint(len(v) * 8)
		take := func(n uint) uint64 { // the next n bits, or all ones past the end
			if n > bits {
				return 1<<n - 1
			}
			bits -= n
			return acc >> bits & (1<<n - 1)
		}
		for i := range d {
			if c := take(5); c <= 2 {
				d[i] = int(c)
			} else if c = c<<1 | take(1); c >= 0x19 && c <= 0x1f {
				d[i] = int(c-0x19) + 3
			} else {
				return 0, fmt.Errorf("malformed Huffman-coded :status % x", v)
			}
		}
		if bits >= 8 || acc&(1<<bits-1) != 1<<bits-1 {
			return 0, fmt.Errorf("malformed Huffman-coded :status % x", v)
		}
	}
	for _, x := range d {
		if x < 0 || x > 9 {
			return 0, fmt.Errorf("malformed :status %q", v)
		}
	}
	st := d[0]*100 + d[1]*10 + d[2]
	if st < 100 || st > 599 {
		return 0, fmt.Errorf(":status %d out of range", st)
	}
	return st, nil
}

// h3ErrorName is an HTTP/3 or QPACK error code's name (RFC 9114 §8.1, RFC 9204 §6).
func h3ErrorName(code uint64) string {
	names := [...]string{"H3_NO_ERROR", "H3_GENERAL_PROTOCOL_ERROR", "H3_INTERNAL_ERROR",
		"H3_STREAM_CREATION_ERROR", "H3_CLOSED_CRITICAL_STREAM", "H3_FRAME_UNEXPECTED",
		"H3_FRAME_ERROR", "H3_EXCESSIVE_LOAD", "H3_ID_ERROR", "H3_SETTINGS_ERROR",
		"H3_MISSING_SETTINGS", "H3_REQUEST_REJECTED", "H3_REQUEST_CANCELLED",
		"H3_REQUEST_INCOMPLETE", "H3_MESSAGE_ERROR", "H3_CONNECT_ERROR", "H3_VERSION_FALLBACK"}
	switch {
	case code >= h3NoError && code < h3NoError+uint64(len(names)):
		return names[code-h3NoError]
	case code >= qpackDecompression && code <= qpackDecompression+2:
		return [...]string{"QPACK_DECOMPRESSION_FAILED", "QPACK_ENCODER_STREAM_ERROR", "QPACK_DECODER_STREAM_ERROR"}[code-qpackDecompression]
	}
	return "0x" + strconv.FormatUint(code, 16)
}
