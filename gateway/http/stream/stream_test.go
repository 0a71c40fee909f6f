package stream_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/msgbench/msgbench/gateway/http/stream"
)

func TestRoundTrip(t *testing.T) {
	big := bytes.Repeat([]byte{0xab}, 40_000) // larger than the read buffer
	payloads := [][]byte{{}, {0, 0, 0, 0}, []byte("\r\n\x00data: x\n\n"), big, {1}}
	var b []byte
	for _, p := range payloads {
		b = stream.AppendFrame(b, p)
	}
	r := stream.NewReader(bytes.NewReader(b), 1<<20)
	for i, want := range payloads {
		got, err := r.Next()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("frame %d: %d bytes, %v; want %d bytes", i, len(got), err, len(want))
		}
	}
	if _, err := r.Next(); !errors.Is(err, io.EOF) {
		t.Errorf("after the last frame: %v, want io.EOF", err)
	}
}

func TestBadStreams(t *testing.T) {
	for name, tc := range map[string]struct {
		data  []byte
		limit int
		want  error
	}{
		"cut in header":  {[]byte{0, 0}, 100, io.ErrUnexpectedEOF},
		"cut in payload": {[]byte{0, 0, 0, 5, 'a'}, 100, io.ErrUnexpectedEOF},
		"cut large":      {append([]byte{0, 1, 0, 0}, make([]byte, 100)...), 1 << 20, io.ErrUnexpectedEOF},
		"over limit":     {[]byte{0xff, 0xff, 0xff, 0xff}, 100, stream.ErrFrameTooLarge},
	} {
		_, err := stream.NewReader(bytes.NewReader(tc.data), tc.limit).Next()
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
	}
}
