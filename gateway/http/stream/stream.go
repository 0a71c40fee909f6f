// Package stream is the wire format of msgbench's HTTP subscription stream: the body of a
// `GET /topics/<topic>` response is a sequence of frames, each a 4-byte big-endian payload length
// followed by the payload bytes, exactly as the broker delivered them.
//
// Why frames and not Server-Sent Events: SSE is text, so a binary payload (msgbench's 16-byte
// header, sensor data, ciphertext) must be base64-encoded — 4/3 of the payload plus "data: " and
// a blank line per event, and an encode/decode pass on both ends. A frame costs 4 bytes and no
// transformation, and a payload reaches the subscriber byte for byte.
package stream

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// ContentType of the subscription stream.
const ContentType = "application/vnd.msgbench.frames"

// HeaderSize is the per-message overhead of a frame.
const HeaderSize = 4

// PutHeader writes the frame header of a payload of n bytes into b[:4].
func PutHeader(b []byte, n int) { binary.BigEndian.PutUint32(b, uint32(n)) }

// AppendFrame appends one frame to b.
func AppendFrame(b, payload []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(payload)))
	return append(b, payload...)
}

// ErrFrameTooLarge is returned for a frame longer than the reader's limit.
var ErrFrameTooLarge = errors.New("stream frame exceeds the size limit")

// Reader reads frames with one reused buffer.
type Reader struct {
	br  *bufio.Reader
	buf []byte
	max int
}

// NewReader reads frames from r; a frame longer than max bytes is an error (a bound on memory).
func NewReader(r io.Reader, max int) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 16<<10), max: max}
}

// Next returns the next payload, valid until the following call. At the end of the stream it
// returns io.EOF; a stream cut inside a frame is io.ErrUnexpectedEOF.
func (r *Reader) Next() ([]byte, error) {
	var hdr [HeaderSize]byte
	if _, err := io.ReadFull(r.br, hdr[:]); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint32(hdr[:]))
	if n > r.max {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrFrameTooLarge, n, r.max)
	}
	if n <= r.br.Size() {
		// Common case: the payload fits the read buffer; no copy.
		b, err := r.br.Peek(n)
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		_, _ = r.br.Discard(n)
		return b, nil
	}
	if cap(r.buf) < n {
		r.buf = make([]byte, n)
	}
	b := r.buf[:n]
	if _, err := io.ReadFull(r.br, b); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return b, nil
}
