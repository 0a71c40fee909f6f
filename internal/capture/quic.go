package capture

import (
	"bufio"
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// QUIC 1-RTT packets are encrypted; a test that must tell a request's packet from an ACK, a
// probe or half a request opens them with the traffic secret its client logged
// (tls.Config.KeyLogWriter, NSS key log format). Only QUIC v1 with TLS_AES_128_GCM_SHA256 — what
// Go on both sides negotiates where the CPU has AES instructions — is supported.

// TrafficSecrets returns the secrets of a key log's lines with label (CLIENT_TRAFFIC_SECRET_0 for
// what a client sends, SERVER_TRAFFIC_SECRET_0 for what it receives), in log order.
func TrafficSecrets(keyLog []byte, label string) ([][]byte, error) {
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(keyLog))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 || f[0] != label {
			continue
		}
		s, err := hex.DecodeString(f[2])
		if err != nil {
			return nil, fmt.Errorf("capture: key log %s: %w", label, err)
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

// QUICKeys are one direction's 1-RTT packet protection keys (RFC 9001 §5).
type QUICKeys struct {
	aead cipher.AEAD
	iv   []byte
	hp   cipher.Block
}

// NewQUICKeys derives the packet protection keys of a TLS_AES_128_GCM_SHA256 traffic secret.
func NewQUICKeys(secret []byte) (*QUICKeys, error) {
	if len(secret) != sha256.Size {
		return nil, fmt.Errorf("capture: a %d-byte traffic secret; only TLS_AES_128_GCM_SHA256 (32 bytes) is supported", len(secret))
	}
	key, iv, hp, err := deriveQUIC(secret)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	hpBlock, err := aes.NewCipher(hp)
	if err != nil {
		return nil, err
	}
	return &QUICKeys{aead: aead, iv: iv, hp: hpBlock}, nil
}

func deriveQUIC(secret []byte) (key, iv, hp []byte, err error) {
	if key, err = expandLabel(secret, "quic key", 16); err != nil {
		return
	}
	if iv, err = expandLabel(secret, "quic iv", 12); err != nil {
		return
	}
	hp, err = expandLabel(secret, "quic hp", 16)
	return
}

// expandLabel is TLS 1.3's HKDF-Expand-Label with an empty context (RFC 8446 §7.1).
func expandLabel(secret []byte, label string, n int) ([]byte, error) {
	full := "tls13 " + label
	info := make([]byte, 0, 4+len(full))
	info = binary.BigEndian.AppendUint16(info, uint16(n))
	info = append(info, byte(len(full)))
	info = append(info, full...)
	info = append(info, 0)
	return hkdf.Expand(sha256.New, secret, string(info), n)
}

// QUICOpener opens one connection's 1-RTT packets in one direction, in the order they were sent.
type QUICOpener struct {
	keys    []*QUICKeys
	cidLen  int   // the destination connection ID's length, found by the first packet opened
	largest int64 // the largest packet number opened, -1 before the first
}

// NewQUICOpener opens packets protected with any of keys (one per connection the log saw).
func NewQUICOpener(keys ...*QUICKeys) *QUICOpener {
	return &QUICOpener{keys: keys, cidLen: -1, largest: -1}
}

// ErrLongHeader is Open's answer for a handshake-phase (long header) packet.
var ErrLongHeader = errors.New("capture: a long-header QUIC packet (handshake), not 1-RTT")

// Open removes a short-header packet's protection and returns its packet number and frames.
// A datagram holds one short-header packet (one cannot be coalesced after another).
func (o *QUICOpener) Open(datagram []byte) (pn int64, frames []QUICFrame, err error) {
	if len(datagram) == 0 {
		return 0, nil, errors.New("capture: empty datagram")
	}
	if datagram[0]&0x80 != 0 {
		return 0, nil, ErrLongHeader
	}
	lens := []int{o.cidLen}
	if o.cidLen < 0 { // unknown until one opens: QUIC v1 IDs are 0 to 20 bytes
		lens = lens[:0]
		for l := 0; l <= 20; l++ {
			lens = append(lens, l)
		}
	}
	for _, k := range o.keys {
		for _, l := range lens {
			pn, plain, ok := k.open(datagram, l, o.largest)
			if !ok {
				continue
			}
			o.cidLen, o.largest = l, max(o.largest, pn)
			frames, err := parseQUICFrames(plain)
			return pn, frames, err
		}
	}
	return 0, nil, errors.New("capture: no key opens this 1-RTT packet (another connection, or a key update)")
}

func (k *QUICKeys) open(d []byte, cidLen int, largest int64) (int64, []byte, bool) {
	pnOff := 1 + cidLen
	if len(d) < pnOff+4+16 {
		return 0, nil, false
	}
	var mask [16]byte
	k.hp.Encrypt(mask[:], d[pnOff+4:pnOff+4+16])
	hdr := append([]byte(nil), d[:pnOff+4]...)
	hdr[0] ^= mask[0] & 0x1f
	pnLen := int(hdr[0]&0x03) + 1
	hdr = hdr[:pnOff+pnLen]
	var truncated uint64
	for i := range pnLen {
		hdr[pnOff+i] ^= mask[1+i]
		truncated = truncated<<8 | uint64(hdr[pnOff+i])
	}
	pn := decodePacketNumber(largest, truncated, pnLen*8)
	nonce := make([]byte, len(k.iv))
	copy(nonce, k.iv)
	for i := range 8 {
		nonce[len(nonce)-1-i] ^= byte(pn >> (8 * i))
	}
	plain, err := k.aead.Open(nil, nonce, d[pnOff+pnLen:], hdr)
	if err != nil {
		return 0, nil, false
	}
	return pn, plain, true
}

// decodePacketNumber is RFC 9000 §A.3.
func decodePacketNumber(largest int64, truncated uint64, bits int) int64 {
	expected := largest + 1
	win := int64(1) << bits
	half, mask := win/2, win-1
	candidate := (expected &^ mask) | int64(truncated)
	switch {
	case candidate <= expected-half && candidate < (1<<62)-win:
		return candidate + win
	case candidate > expected+half && candidate >= win:
		return candidate - win
	}
	return candidate
}

// QUIC frame types (RFC 9000 §19) that tests look for.
const (
	QUICPadding = 0x00
	QUICPing    = 0x01
	QUICAck     = 0x02 // and 0x03, with ECN counts
	QUICStream  = 0x08 // 0x08 to 0x0f: the low bits are OFF, LEN and FIN
)

// QUICFrame is one frame of an opened packet; stream frames keep their data.
type QUICFrame struct {
	Type   uint64 // the frame type; stream frames are QUICStream whatever their low bits
	Stream uint64 // stream frames (and the other per-stream frames)
	Offset uint64 // stream frames
	Fin    bool   // stream frames
	Data   []byte // stream frames
	Len    int    // the frame's bytes, type included
}

// IsAckOnly says whether frames carry nothing but ACKs and PADDING: a packet its receiver need
// not acknowledge.
func IsAckOnly(frames []QUICFrame) bool {
	for _, f := range frames {
		if f.Type != QUICAck && f.Type != QUICPadding {
			return false
		}
	}
	return true
}

func parseQUICFrames(b []byte) ([]QUICFrame, error) {
	var out []QUICFrame
	r := &varReader{b: b}
	for r.len() > 0 {
		start := r.off
		typ := r.varint()
		f := QUICFrame{Type: typ}
		switch {
		case typ == QUICPadding:
			for r.len() > 0 && r.b[r.off] == 0 { // a run of PADDING is one frame here
				r.off++
			}
		case typ == QUICPing, typ == 0x1e: // PING, HANDSHAKE_DONE
		case typ == 0x02 || typ == 0x03: // ACK
			f.Type = QUICAck
			r.varint() // largest acknowledged
			r.varint() // delay
			ranges := r.varint()
			r.varint() // first range
			for i := uint64(0); i < ranges && r.err == nil; i++ {
				r.varint()
				r.varint()
			}
			if typ == 0x03 {
				r.varint()
				r.varint()
				r.varint()
			}
		case typ == 0x04: // RESET_STREAM
			f.Stream = r.varint()
			r.varint()
			r.varint()
		case typ == 0x05: // STOP_SENDING
			f.Stream = r.varint()
			r.varint()
		case typ == 0x06: // CRYPTO
			r.varint()
			r.bytes(int(r.varint()))
		case typ == 0x07: // NEW_TOKEN
			r.bytes(int(r.varint()))
		case typ >= 0x08 && typ <= 0x0f: // STREAM
			f.Type, f.Stream, f.Fin = QUICStream, r.varint(), typ&0x01 != 0
			if typ&0x04 != 0 {
				f.Offset = r.varint()
			}
			n := r.len()
			if typ&0x02 != 0 {
				n = int(r.varint())
			}
			f.Data = r.bytes(n)
		case typ == 0x10, typ == 0x12, typ == 0x13, typ == 0x14, typ == 0x16, typ == 0x17, typ == 0x19:
			r.varint() // MAX_DATA, MAX_STREAMS, DATA_BLOCKED, STREAMS_BLOCKED, RETIRE_CONNECTION_ID
		case typ == 0x11, typ == 0x15: // MAX_STREAM_DATA, STREAM_DATA_BLOCKED
			f.Stream = r.varint()
			r.varint()
		case typ == 0x18: // NEW_CONNECTION_ID
			r.varint()
			r.varint()
			n := r.bytes(1)
			if len(n) == 1 {
				r.bytes(int(n[0]) + 16)
			}
		case typ == 0x1a, typ == 0x1b: // PATH_CHALLENGE, PATH_RESPONSE
			r.bytes(8)
		case typ == 0x1c || typ == 0x1d: // CONNECTION_CLOSE
			r.varint()
			if typ == 0x1c {
				r.varint()
			}
			r.bytes(int(r.varint()))
		case typ == 0x30: // DATAGRAM to the packet's end
			r.bytes(r.len())
		case typ == 0x31:
			r.bytes(int(r.varint()))
		default:
			return out, fmt.Errorf("capture: QUIC frame type %#x unknown", typ)
		}
		if r.err != nil {
			return out, fmt.Errorf("capture: QUIC frame type %#x: %w", typ, r.err)
		}
		f.Len = r.off - start
		out = append(out, f)
	}
	return out, nil
}

// varReader reads QUIC variable-length integers (RFC 9000 §16) and byte strings; the first
// overrun sets err and every later read returns zero.
type varReader struct {
	b   []byte
	off int
	err error
}

func (r *varReader) len() int { return len(r.b) - r.off }

func (r *varReader) varint() uint64 {
	if r.err != nil || r.len() < 1 {
		r.fail()
		return 0
	}
	n := 1 << (r.b[r.off] >> 6)
	if r.len() < n {
		r.fail()
		return 0
	}
	v := uint64(r.b[r.off] & 0x3f)
	for i := 1; i < n; i++ {
		v = v<<8 | uint64(r.b[r.off+i])
	}
	r.off += n
	return v
}

func (r *varReader) bytes(n int) []byte {
	if r.err != nil || n < 0 || r.len() < n {
		r.fail()
		return nil
	}
	b := r.b[r.off : r.off+n]
	r.off += n
	return b
}

func (r *varReader) fail() {
	if r.err == nil {
		r.err = errors.New("truncated")
	}
}

// HTTP3Frames reads a stream's data as HTTP/3 frames (RFC 9114 §7.1: type, length, payload) and
// returns their types and payload lengths, for tests that check a request stream holds HEADERS
// then DATA. A frame cut short is an error.
func HTTP3Frames(b []byte) (types []uint64, lengths []int, err error) {
	r := &varReader{b: b}
	for r.len() > 0 {
		t := r.varint()
		n := int(r.varint())
		r.bytes(n)
		if r.err != nil {
			return types, lengths, fmt.Errorf("capture: HTTP/3 frame type %#x of %d bytes: %w", t, n, r.err)
		}
		types, lengths = append(types, t), append(lengths, n)
	}
	return types, lengths, nil
}
