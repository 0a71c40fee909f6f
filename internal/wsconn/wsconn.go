// Package wsconn is a WebSocket client (RFC 6455) as a net.Conn, for MQTT over WebSocket (MQTT
// 3.1.1 §6, MQTT 5 §6): the upgrade asks for subprotocol "mqtt", every Write is one masked
// binary frame, and Read returns the payload of the server's binary frames as one byte stream
// (MQTT packets may span frames and frames may hold several packets). Pings are answered, a
// close frame is answered and ends the stream with io.EOF.
//
// What goes on the wire is the upgrade plus 2–14 byte frame headers around each payload, so a
// counting connection underneath (internal/wire) counts the transport exactly.
package wsconn

import (
	"bufio"
	"context"
	crand "crypto/rand"
	"crypto/sha1"
	"crypto/tls"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Subprotocol is the WebSocket subprotocol MQTT clients offer and servers must select.
const Subprotocol = "mqtt"

// Opcodes (RFC 6455 §5.2).
const (
	opContinuation = 0x0
	opText         = 0x1
	opBinary       = 0x2
	opClose        = 0x8
	opPing         = 0x9
	opPong         = 0xA
)

// Close status codes (RFC 6455 §7.4.1).
const (
	CloseNormal        = 1000
	CloseProtocolError = 1002
	CloseUnsupported   = 1003
)

// chunk bounds the scratch buffer one Write masks into: a larger payload is one frame written in
// several system calls, so the buffer never grows past it.
const chunk = 32 << 10

// closeTimeout bounds writing a close or pong frame from Close or the reader.
const closeTimeout = 2 * time.Second

// ErrProtocol wraps every violation of RFC 6455 or MQTT §6 by the server.
var ErrProtocol = errors.New("websocket protocol error")

// CloseError is the server's close frame: the stream ended with a status other than 1000 (or
// none).
type CloseError struct {
	Code   int // 1005 when the frame had no status
	Reason string
}

func (e *CloseError) Error() string {
	if e.Reason == "" {
		return fmt.Sprintf("websocket closed by the server with status %d", e.Code)
	}
	return fmt.Sprintf("websocket closed by the server with status %d: %s", e.Code, e.Reason)
}

// Conn is a client WebSocket connection. Read and Write may be called from different goroutines;
// writes (data, pong, close) are serialised.
type Conn struct {
	net.Conn // the underlying stream (TCP, or TLS for wss); deadlines pass through

	br *bufio.Reader // what the upgrade response's reader buffered, then every frame

	// reader state, used by one goroutine at a time
	remaining    int64 // payload bytes left in the current data frame
	fragmented   bool  // a data message's FIN has not arrived yet
	readErr      error
	rhdr         [8]byte
	controlFrame [125]byte

	wmu       sync.Mutex // guards everything below and every write to Conn
	wbuf      []byte     // header + masked payload, at most 14 + chunk bytes
	rng       *rand.ChaCha8
	closeSent bool
	writeErr  error

	pmu         sync.Mutex // guards pong
	pong        []byte     // the latest ping's payload, to answer
	pongPending atomic.Bool
}

// Client upgrades nc (already connected, TLS already on top for wss) to a WebSocket with
// subprotocol "mqtt": it sends GET path with Host host and checks the server's 101 answer
// (Sec-WebSocket-Accept, the subprotocol). ctx bounds the upgrade. On failure nc is left open.
func Client(ctx context.Context, nc net.Conn, host, path string) (*Conn, error) {
	var seed [32]byte
	if _, err := crand.Read(seed[:]); err != nil {
		return nil, err
	}
	c := &Conn{Conn: nc, rng: rand.NewChaCha8(seed), wbuf: make([]byte, 14+chunk), pong: make([]byte, 0, 125)}
	var nonce [16]byte
	c.fill(nonce[:])
	key := base64.StdEncoding.EncodeToString(nonce[:])

	if d, ok := ctx.Deadline(); ok {
		_ = nc.SetDeadline(d)
		defer func() { _ = nc.SetDeadline(time.Time{}) }()
	}
	stop := context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	fail := func(err error) (*Conn, error) {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", ctx.Err(), err)
		}
		return nil, fmt.Errorf("websocket upgrade at %s%s: %w", host, path, err)
	}

	if _, err := io.WriteString(nc, UpgradeRequest(host, path, key)); err != nil {
		return fail(err)
	}
	c.br = bufio.NewReaderSize(nc, 4096)
	resp, err := http.ReadResponse(c.br, &http.Request{Method: http.MethodGet})
	if err != nil {
		return fail(err)
	}
	_ = resp.Body.Close() // a 101 has no body; other statuses say enough in their status line
	if err := checkUpgrade(resp, key); err != nil {
		return fail(err)
	}
	return c, nil
}

// UpgradeRequest is the HTTP request that opens a WebSocket for MQTT: exactly the bytes Client
// sends.
func UpgradeRequest(host, path, key string) string {
	return "GET " + path + " HTTP/1.1\r\nHost: " + host +
		"\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: " + key +
		"\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: " + Subprotocol + "\r\n\r\n"
}

// AcceptKey is the Sec-WebSocket-Accept a server answers key with (RFC 6455 §4.2.2).
func AcceptKey(key string) string {
	h := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	return base64.StdEncoding.EncodeToString(h[:])
}

// checkUpgrade checks the server's answer to the upgrade (RFC 6455 §4.1, MQTT §6).
func checkUpgrade(resp *http.Response, key string) error {
	if resp.StatusCode != http.StatusSwitchingProtocols {
		return fmt.Errorf("the server answered %q, not 101 Switching Protocols (is this a WebSocket endpoint? check mqtt.webSocketPath)", resp.Status)
	}
	if !strings.EqualFold(resp.Header.Get("Upgrade"), "websocket") {
		return fmt.Errorf("%w: Upgrade header %q", ErrProtocol, resp.Header.Get("Upgrade"))
	}
	if !headerHasToken(resp.Header, "Connection", "upgrade") {
		return fmt.Errorf("%w: Connection header %q", ErrProtocol, resp.Header.Get("Connection"))
	}
	if got := resp.Header.Get("Sec-WebSocket-Accept"); got != AcceptKey(key) {
		return fmt.Errorf("%w: Sec-WebSocket-Accept %q does not answer the key", ErrProtocol, got)
	}
	if got := resp.Header.Get("Sec-WebSocket-Protocol"); got != Subprotocol {
		return fmt.Errorf("%w: the server selected subprotocol %q, MQTT needs %q", ErrProtocol, got, Subprotocol)
	}
	if ext := resp.Header.Get("Sec-WebSocket-Extensions"); ext != "" {
		return fmt.Errorf("%w: the server selected extensions %q the client did not offer", ErrProtocol, ext)
	}
	return nil
}

func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// fill writes random bytes into b (the masking keys' and the upgrade nonce's source: ChaCha8
// seeded from crypto/rand, unpredictable as RFC 6455 §10.3 asks, and free of system calls).
func (c *Conn) fill(b []byte) {
	for len(b) > 0 {
		v := c.rng.Uint64()
		n := min(len(b), 8)
		for i := range n {
			b[i] = byte(v >> (8 * i))
		}
		b = b[n:]
	}
}

// Read returns payload bytes of the server's binary frames, answering pings and a close frame
// on the way. It ends with io.EOF after a normal close, a *CloseError after another, and an error
// wrapping ErrProtocol (having sent close 1002) when the server breaks the protocol.
func (c *Conn) Read(p []byte) (int, error) {
	for c.remaining == 0 {
		if c.readErr != nil {
			return 0, c.readErr
		}
		if err := c.nextFrame(); err != nil {
			c.readErr = err
			return 0, err
		}
	}
	if int64(len(p)) > c.remaining {
		p = p[:c.remaining]
	}
	n, err := c.br.Read(p)
	c.remaining -= int64(n)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF // the stream ended inside a frame
	}
	if err != nil {
		c.readErr = err
	}
	return n, err
}

// nextFrame reads frame headers, handling control frames, until a data frame with payload
// begins (c.remaining > 0).
func (c *Conn) nextFrame() error {
	h := c.rhdr[:2]
	if _, err := io.ReadFull(c.br, h); err != nil {
		return err
	}
	fin, rsv, op := h[0]&0x80 != 0, h[0]&0x70, h[0]&0x0F
	masked, length := h[1]&0x80 != 0, int64(h[1]&0x7F)
	switch length {
	case 126:
		if _, err := io.ReadFull(c.br, c.rhdr[:2]); err != nil {
			return err
		}
		length = int64(binary.BigEndian.Uint16(c.rhdr[:2]))
	case 127:
		if _, err := io.ReadFull(c.br, c.rhdr[:8]); err != nil {
			return err
		}
		u := binary.BigEndian.Uint64(c.rhdr[:8])
		if u>>63 != 0 {
			return c.protocolError(CloseProtocolError, "frame length with its top bit set")
		}
		length = int64(u)
	}
	switch {
	case masked: // RFC 6455 §5.1: a client closes on a masked frame
		return c.protocolError(CloseProtocolError, "the server sent a masked frame")
	case rsv != 0:
		return c.protocolError(CloseProtocolError, "reserved bits set without a negotiated extension")
	case op >= opClose && (!fin || length > 125):
		return c.protocolError(CloseProtocolError, "fragmented or oversized control frame")
	}
	switch op {
	case opBinary, opContinuation:
		if (op == opContinuation) != c.fragmented {
			return c.protocolError(CloseProtocolError, "continuation frame out of place")
		}
		c.fragmented = !fin
		c.remaining = length
		return nil
	case opText: // MQTT §6: only binary frames carry MQTT
		return c.protocolError(CloseUnsupported, "the server sent a text frame; MQTT uses binary frames")
	case opPing, opPong, opClose:
		body := c.controlFrame[:length]
		if _, err := io.ReadFull(c.br, body); err != nil {
			return err
		}
		switch op {
		case opPing:
			return c.writeControl(opPong, body)
		case opPong:
			return nil
		}
		return c.serverClosed(body)
	}
	return c.protocolError(CloseProtocolError, fmt.Sprintf("unknown opcode %#x", op))
}

// serverClosed answers the server's close frame with the same status (RFC 6455 §5.5.1) and
// returns how the stream ended.
func (c *Conn) serverClosed(body []byte) error {
	ce := &CloseError{Code: 1005}
	reply := body[:0]
	if len(body) >= 2 {
		ce.Code = int(binary.BigEndian.Uint16(body))
		ce.Reason = string(body[2:])
		reply = body[:2]
	} else if len(body) == 1 {
		return c.protocolError(CloseProtocolError, "close frame with a 1-byte body")
	}
	_ = c.writeControl(opClose, reply)
	if ce.Code == CloseNormal {
		return io.EOF
	}
	return ce
}

// protocolError sends close with code and returns the violation.
func (c *Conn) protocolError(code int, what string) error {
	var b [2]byte
	binary.BigEndian.PutUint16(b[:], uint16(code))
	_ = c.writeControl(opClose, b[:])
	return fmt.Errorf("%w: %s", ErrProtocol, what)
}

// writeControl sends a pong or close frame from the reader without ever waiting for a writer:
// a writer blocked on a server that stopped reading must not stop the reader too (the reader's
// error is what closes the connection and frees the writer). A pong that finds the connection
// busy is left for the writer to send when it finishes (RFC 6455 §5.5.3: the latest ping is
// enough); a close frame that finds it busy is skipped.
func (c *Conn) writeControl(op byte, payload []byte) error {
	if op == opPong {
		c.pmu.Lock()
		c.pong = append(c.pong[:0], payload...)
		c.pmu.Unlock()
		c.pongPending.Store(true)
	}
	if !c.wmu.TryLock() {
		return nil
	}
	var err error
	if op == opClose {
		err = c.writeControlLocked(op, payload)
	}
	c.unlock()
	return err
}

// unlock sends a pending pong, then releases wmu, re-checking so that a pong queued meanwhile is
// not stranded.
func (c *Conn) unlock() {
	for {
		if c.pongPending.Swap(false) {
			c.pmu.Lock()
			_ = c.writeControlLocked(opPong, c.pong)
			c.pmu.Unlock()
		}
		c.wmu.Unlock()
		if !c.pongPending.Load() || !c.wmu.TryLock() {
			return
		}
	}
}

func (c *Conn) writeControlLocked(op byte, payload []byte) error {
	if c.closeSent || c.writeErr != nil {
		return c.writeErr
	}
	if op == opClose {
		c.closeSent = true
		_ = c.SetWriteDeadline(time.Now().Add(closeTimeout))
	}
	_, err := c.writeFrameLocked(op, payload)
	return err
}

// Write sends b as one masked binary frame (len(b) > 0). It does not allocate: the header and
// the masked payload go through a fixed buffer, a payload above 32 KiB in several system calls.
func (c *Conn) Write(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	c.wmu.Lock()
	defer c.unlock()
	if c.writeErr != nil {
		return 0, c.writeErr
	}
	if c.closeSent {
		return 0, net.ErrClosed
	}
	return c.writeFrameLocked(opBinary, b)
}

// writeFrameLocked writes one final frame of op with payload and returns the payload bytes
// written. A failure part-way leaves the stream unusable: every later write fails with it.
func (c *Conn) writeFrameLocked(op byte, payload []byte) (int, error) {
	buf := c.wbuf
	buf[0] = 0x80 | op
	n := len(payload)
	var h int
	switch {
	case n <= 125:
		buf[1], h = 0x80|byte(n), 2
	case n <= 0xFFFF:
		buf[1], h = 0x80|126, 4
		binary.BigEndian.PutUint16(buf[2:], uint16(n))
	default:
		buf[1], h = 0x80|127, 10
		binary.BigEndian.PutUint64(buf[2:], uint64(n))
	}
	key := uint32(c.rng.Uint64())
	binary.LittleEndian.PutUint32(buf[h:], key)
	h += 4
	written := 0
	for first := true; first || written < n; first = false {
		m := copy(buf[h:], payload[written:])
		maskBytes(buf[h:h+m], key, written)
		if _, err := c.Conn.Write(buf[:h+m]); err != nil {
			c.writeErr = err
			return written, err
		}
		written += m
		h = 0
	}
	return n, nil
}

// maskBytes XORs b with the 4-byte key (little-endian in key), b starting at payload offset pos.
func maskBytes(b []byte, key uint32, pos int) {
	if s := uint(pos&3) * 8; s != 0 { // rotate so that key's low byte lines up with b[0]
		key = key>>s | key<<(32-s)
	}
	k8 := uint64(key) | uint64(key)<<32
	i := 0
	for ; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], binary.LittleEndian.Uint64(b[i:])^k8)
	}
	for ; i < len(b); i++ {
		b[i] ^= byte(key >> (8 * uint((i)&3)))
	}
}

// Close sends a close frame (1000) unless a write holds the connection or one was sent, then
// closes the underlying connection: MQTT's DISCONNECT already ended the session, so it does not
// wait for the server's close frame.
func (c *Conn) Close() error {
	if c.wmu.TryLock() {
		var b [2]byte
		binary.BigEndian.PutUint16(b[:], CloseNormal)
		_ = c.writeControlLocked(opClose, b[:])
		c.wmu.Unlock()
	}
	return c.Conn.Close()
}

// Dialer returns a dial function that opens WebSocket connections to path: dial (nil: a
// net.Dialer) connects, TLS goes on top when tlsConfig is set (wss), then the upgrade. It fits
// where a dial function is expected (mqtt.Probe).
func Dialer(dial func(ctx context.Context, network, address string) (net.Conn, error), tlsConfig *tls.Config, path string) func(ctx context.Context, network, address string) (net.Conn, error) {
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		nc, err := dial(ctx, network, address)
		if err != nil {
			return nil, err
		}
		if tlsConfig != nil {
			tc := tls.Client(nc, tlsConfig)
			if err := tc.HandshakeContext(ctx); err != nil {
				_ = nc.Close()
				return nil, fmt.Errorf("TLS handshake with %s: %w", address, err)
			}
			nc = tc
		}
		c, err := Client(ctx, nc, address, path)
		if err != nil {
			_ = nc.Close()
			return nil, err
		}
		return c, nil
	}
}
