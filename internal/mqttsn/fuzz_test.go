package mqttsn

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzParse feeds arbitrary datagrams to the decoder: it must never panic, every error must be
// ErrMalformed, and whatever decodes must re-encode to a datagram that decodes to the same
// message (the long length form of a short message re-encodes in the short form).
func FuzzParse(f *testing.F) {
	for _, m := range allMessages() {
		b, _ := m.Append(nil)
		f.Add(b)
	}
	long, _ := AppendPublish(nil, Flags(0).WithQoS(1), 1, 2, make([]byte, 300))
	f.Add(long)
	f.Add([]byte{0x01, 0x00, 0x06, byte(PUBREL), 0, 9})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Parse(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("% x: %v is not ErrMalformed", b, err)
			}
			return
		}
		again, err := m.Append(nil)
		if err != nil {
			t.Fatalf("% x decoded to %+v, which does not encode: %v", b, m, err)
		}
		m2, err := Parse(again)
		if err != nil {
			t.Fatalf("% x → %+v → % x: %v", b, m, again, err)
		}
		third, _ := m2.Append(nil)
		if !bytes.Equal(again, third) {
			t.Fatalf("% x → % x → % x", b, again, third)
		}
		if _, body, _ := ReadHeader(b); len(body)+HeaderLen(len(body)) != len(again) && b[0] != 0x01 {
			t.Fatalf("% x re-encoded to %d bytes", b, len(again))
		}
	})
}
