package http

import (
	"bytes"
	"testing"
)

// TestProbeFilter: a readiness probe's handshake EOF is dropped, every other line kept.
func TestProbeFilter(t *testing.T) {
	var out bytes.Buffer
	f := probeFilter{&out}
	for _, line := range []string{
		"2026/11/22 06:57:47 http: TLS handshake error from 10.213.0.1:55968: EOF\n",
		"2026/11/22 06:57:48 http: TLS handshake error from 10.213.0.9:4000: tls: client offered only unsupported versions\n",
		"2026/11/22 06:57:49 http: Accept error: accept tcp [::]:8080: too many open files\n",
	} {
		if n, err := f.Write([]byte(line)); n != len(line) || err != nil {
			t.Fatalf("Write: %d, %v", n, err)
		}
	}
	got := out.String()
	if bytes.Contains(out.Bytes(), []byte(": EOF")) || !bytes.Contains(out.Bytes(), []byte("unsupported versions")) || !bytes.Contains(out.Bytes(), []byte("too many open files")) {
		t.Errorf("filtered log:\n%s", got)
	}
}
