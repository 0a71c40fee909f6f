package wsconn

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// server is one WebSocket server connection of a test, on a real loopback socket.
type server struct {
	net.Conn
	br *bufio.Reader
}

// frame encodes a server frame (masked only when a test wants a broken server).
func frame(op byte, fin, masked bool, payload []byte) []byte {
	b := []byte{op, 0}
	if fin {
		b[0] |= 0x80
	}
	n := len(payload)
	switch {
	case n <= 125:
		b[1] = byte(n)
	case n <= 0xFFFF:
		b[1] = 126
		b = binary.BigEndian.AppendUint16(b, uint16(n))
	default:
		b[1] = 127
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	if !masked {
		return append(b, payload...)
	}
	b[1] |= 0x80
	key := []byte{1, 2, 3, 4}
	b = append(b, key...)
	for i, c := range payload {
		b = append(b, c^key[i%4])
	}
	return b
}

// readFrame reads a client frame, which must be masked, and returns it unmasked with the size
// of its header.
func (s *server) readFrame(t testing.TB) (op byte, fin bool, payload []byte, header int) {
	t.Helper()
	var h [2]byte
	if _, err := io.ReadFull(s.br, h[:]); err != nil {
		t.Fatalf("server: read frame: %v", err)
	}
	if h[1]&0x80 == 0 {
		t.Fatal("server: the client sent an unmasked frame")
	}
	n, header := uint64(h[1]&0x7F), 2
	switch n {
	case 126:
		var b [2]byte
		_, _ = io.ReadFull(s.br, b[:])
		n, header = uint64(binary.BigEndian.Uint16(b[:])), 4
	case 127:
		var b [8]byte
		_, _ = io.ReadFull(s.br, b[:])
		n, header = binary.BigEndian.Uint64(b[:]), 10
	}
	var key [4]byte
	if _, err := io.ReadFull(s.br, key[:]); err != nil {
		t.Fatal(err)
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(s.br, payload); err != nil {
		t.Fatal(err)
	}
	for i := range payload {
		payload[i] ^= key[i%4]
	}
	return h[0] & 0x0F, h[0]&0x80 != 0, payload, header + 4
}

// dial starts a loopback server that answers the upgrade with answer (nil: a correct 101) and
// then runs fn, and returns the client's upgrade error or connection.
func dial(t testing.TB, answer func(key string) string, fn func(s *server)) (*Conn, error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	done := make(chan struct{})
	t.Cleanup(func() { <-done })
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		s := &server{Conn: c, br: bufio.NewReader(c)}
		req, err := http.ReadRequest(s.br)
		if err != nil {
			t.Errorf("server: %v", err)
			return
		}
		key := req.Header.Get("Sec-WebSocket-Key")
		if req.URL.Path != "/mqtt" || req.Header.Get("Sec-WebSocket-Protocol") != "mqtt" || req.Header.Get("Sec-WebSocket-Version") != "13" {
			t.Errorf("server: upgrade request %s %v", req.URL.Path, req.Header)
		}
		resp := "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
			AcceptKey(key) + "\r\nSec-WebSocket-Protocol: mqtt\r\n\r\n"
		if answer != nil {
			resp = answer(key)
		}
		if _, err := io.WriteString(c, resp); err != nil {
			return
		}
		if fn != nil {
			fn(s)
		}
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return Client(ctx, nc, ln.Addr().String(), "/mqtt")
}

func TestUpgradeRefusals(t *testing.T) {
	ok := func(key string) string {
		return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + AcceptKey(key)
	}
	for name, tc := range map[string]struct {
		answer func(key string) string
		want   string
	}{
		"not found": {func(string) string { return "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n" }, "check mqtt.webSocketPath"},
		"wrong accept": {func(string) string {
			return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: x\r\nSec-WebSocket-Protocol: mqtt\r\n\r\n"
		}, "does not answer the key"},
		"no subprotocol": {func(k string) string { return ok(k) + "\r\n\r\n" }, `selected subprotocol ""`},
		"extension": {func(k string) string {
			return ok(k) + "\r\nSec-WebSocket-Protocol: mqtt\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n"
		}, "extensions"},
		"no upgrade": {func(k string) string {
			return strings.Replace(ok(k), "Upgrade: websocket\r\n", "", 1) + "\r\nSec-WebSocket-Protocol: mqtt\r\n\r\n"
		}, "Upgrade header"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := dial(t, tc.answer, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("upgrade error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// TestWriteFrames: every Write is one final, masked binary frame whose header is as short as its
// length allows, and whose payload unmasks to what was written, also beyond the 32 KiB chunk and
// when the masking restarts mid-key.
func TestWriteFrames(t *testing.T) {
	sizes := []int{1, 125, 126, 65535, 65536, 3*chunk + 7}
	got := make(chan error, 1)
	c, err := dial(t, nil, func(s *server) {
		for _, n := range sizes {
			op, fin, p, h := s.readFrame(t)
			want := 6
			if n > 125 {
				want = 8
			}
			if n > 65535 {
				want = 14
			}
			if op != opBinary || !fin || h != want || !bytes.Equal(p, payload(n)) {
				got <- errors.New("frame mismatch")
				return
			}
		}
		got <- nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range sizes {
		if m, err := c.Write(payload(n)); err != nil || m != n {
			t.Fatalf("Write(%d) = %d, %v", n, m, err)
		}
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
}

func payload(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>8)
	}
	return b
}

// TestFragmentedWithPing: a message split over three frames with a ping between them reads as one
// stream, and the ping is answered with a pong carrying its payload.
func TestFragmentedWithPing(t *testing.T) {
	pong := make(chan []byte, 1)
	c, err := dial(t, nil, func(s *server) {
		var b []byte
		b = append(b, frame(opBinary, false, false, []byte("hello "))...)
		b = append(b, frame(opPing, true, false, []byte("are you there"))...)
		b = append(b, frame(opContinuation, false, false, []byte("frag"))...)
		b = append(b, frame(opContinuation, true, false, []byte("mented"))...)
		b = append(b, frame(opBinary, true, false, []byte("!"))...)
		_, _ = s.Write(b)
		op, _, p, _ := s.readFrame(t)
		if op != opPong {
			t.Errorf("server got opcode %#x, want a pong", op)
		}
		pong <- p
	})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	var got []byte
	for len(got) < len("hello fragmented!") {
		n, err := c.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, buf[:n]...)
	}
	if string(got) != "hello fragmented!" {
		t.Fatalf("read %q", got)
	}
	if p := <-pong; string(p) != "are you there" {
		t.Fatalf("pong payload %q", p)
	}
}

// TestServerClose: the server's close 1000 is answered with close 1000 and ends the stream with
// io.EOF; Write after it fails.
func TestServerClose(t *testing.T) {
	reply := make(chan []byte, 1)
	c, err := dial(t, nil, func(s *server) {
		_, _ = s.Write(frame(opClose, true, false, []byte{0x03, 0xE8, 'b', 'y', 'e'}))
		op, _, p, _ := s.readFrame(t)
		if op != opClose {
			t.Errorf("server got opcode %#x, want close", op)
		}
		reply <- p
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(make([]byte, 8)); !errors.Is(err, io.EOF) {
		t.Fatalf("Read after close = %v, want io.EOF", err)
	}
	if p := <-reply; !bytes.Equal(p, []byte{0x03, 0xE8}) {
		t.Fatalf("close reply %x, want 03e8", p)
	}
	if _, err := c.Write([]byte("x")); err == nil {
		t.Fatal("Write after the close handshake succeeded")
	}
}

// TestClientClose: Close sends close 1000 before closing the socket.
func TestClientClose(t *testing.T) {
	got := make(chan []byte, 1)
	c, err := dial(t, nil, func(s *server) {
		op, _, p, _ := s.readFrame(t)
		if op != opClose {
			t.Errorf("server got opcode %#x, want close", op)
		}
		got <- p
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if p := <-got; !bytes.Equal(p, []byte{0x03, 0xE8}) {
		t.Fatalf("close frame %x, want 03e8", p)
	}
}

// TestRefusedFrames: a masked server frame, a text frame, reserved bits, a stray continuation
// and a fragmented ping each end the stream with ErrProtocol and the close status RFC 6455 and
// MQTT §6 name.
func TestRefusedFrames(t *testing.T) {
	for name, tc := range map[string]struct {
		frame []byte
		code  uint16
	}{
		"masked":              {frame(opBinary, true, true, []byte{0x20, 2, 0, 0}), CloseProtocolError},
		"text":                {frame(opText, true, false, []byte("hi")), CloseUnsupported},
		"reserved bits":       {append([]byte{0x80 | 0x40 | opBinary, 1}, 0), CloseProtocolError},
		"stray continuation":  {frame(opContinuation, true, false, []byte{1}), CloseProtocolError},
		"fragmented ping":     {frame(opPing, false, false, nil), CloseProtocolError},
		"binary inside frags": {append(frame(opBinary, false, false, []byte{1}), frame(opBinary, true, false, []byte{2})...), CloseProtocolError},
	} {
		t.Run(name, func(t *testing.T) {
			code := make(chan uint16, 1)
			c, err := dial(t, nil, func(s *server) {
				_, _ = s.Write(tc.frame)
				op, _, p, _ := s.readFrame(t)
				if op != opClose || len(p) != 2 {
					t.Errorf("server got opcode %#x %x, want close with a status", op, p)
					code <- 0
					return
				}
				code <- binary.BigEndian.Uint16(p)
			})
			if err != nil {
				t.Fatal(err)
			}
			var rerr error
			for rerr == nil {
				_, rerr = c.Read(make([]byte, 8))
			}
			if !errors.Is(rerr, ErrProtocol) {
				t.Fatalf("Read = %v, want ErrProtocol", rerr)
			}
			if got := <-code; got != tc.code {
				t.Fatalf("close status %d, want %d", got, tc.code)
			}
		})
	}
}

// TestWriteAllocs: a steady-state Write allocates nothing.
func TestWriteAllocs(t *testing.T) {
	c, err := dial(t, nil, func(s *server) { _, _ = io.Copy(io.Discard, s) })
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{16, 1000, 40000} {
		p := payload(n)
		if a := testing.AllocsPerRun(100, func() { _, _ = c.Write(p) }); a != 0 {
			t.Errorf("Write(%d bytes): %v allocations, want 0", n, a)
		}
	}
}

// TestReadAllocs: reading frames, a ping among them, allocates nothing either.
func TestReadAllocs(t *testing.T) {
	var stream []byte
	for i := range 400 {
		stream = append(stream, frame(opBinary, true, false, payload(100))...)
		if i%50 == 0 {
			stream = append(stream, frame(opPing, true, false, []byte("p"))...)
		}
	}
	c, err := dial(t, nil, func(s *server) {
		_, _ = s.Write(stream)
		_, _ = io.Copy(io.Discard, s) // the pongs
	})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 100)
	if a := testing.AllocsPerRun(300, func() {
		if _, err := io.ReadFull(c, buf); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("Read: %v allocations per 100-byte frame, want 0", a)
	}
}

// BenchmarkWrite writes frames to a loopback TCP socket a goroutine drains; compare with
// BenchmarkTCPWrite, the same writes without WebSocket.
func BenchmarkWrite(b *testing.B) {
	for _, n := range []int{64, 1024, 16 << 10} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			c, err := dial(b, nil, func(s *server) { _, _ = io.Copy(io.Discard, s) })
			if err != nil {
				b.Fatal(err)
			}
			p := payload(n)
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Write(p); err != nil {
					b.Fatal(err)
				}
			}
			_ = c.Close()
		})
	}
}

// BenchmarkTCPWrite is BenchmarkWrite's writes on the bare socket.
func BenchmarkTCPWrite(b *testing.B) {
	for _, n := range []int{64, 1024, 16 << 10} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			defer ln.Close()
			go func() {
				if s, err := ln.Accept(); err == nil {
					_, _ = io.Copy(io.Discard, s)
					_ = s.Close()
				}
			}()
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			p := payload(n)
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Write(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMask is the masking alone.
func BenchmarkMask(b *testing.B) {
	p := payload(16 << 10)
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		maskBytes(p, 0x01020304, 0)
	}
}

func TestMaskMatchesBytewise(t *testing.T) {
	key := []byte{0xA1, 0xB2, 0xC3, 0xD4}
	k := binary.LittleEndian.Uint32(key)
	for _, pos := range []int{0, 1, 2, 3, 5} {
		p := payload(37)
		want := append([]byte(nil), p...)
		for i := range want {
			want[i] ^= key[(pos+i)%4]
		}
		maskBytes(p, k, pos)
		if !bytes.Equal(p, want) {
			t.Fatalf("pos %d: %x, want %x", pos, p, want)
		}
	}
}

// TestPingWhileWriterBlocked: a ping that arrives while a write is stuck on a server that stopped
// reading does not stop the reader (it goes on returning data), and the writer sends the pong as
// soon as its own frame is out.
func TestPingWhileWriterBlocked(t *testing.T) {
	const big = 32 << 20 // more than loopback's socket buffers hold
	blocked, release := make(chan struct{}), make(chan struct{})
	pong := make(chan []byte, 1)
	c, err := dial(t, nil, func(s *server) {
		<-blocked // the client's writer holds the connection
		_, _ = s.Write(append(frame(opPing, true, false, []byte("p")), frame(opBinary, true, false, []byte("x"))...))
		<-release // only now read: the client's big frame, then its pong
		if op, _, p, _ := s.readFrame(t); op != opBinary || len(p) != big {
			t.Errorf("server got opcode %#x with %d bytes, want the %d-byte frame", op, len(p), big)
		}
		op, _, p, _ := s.readFrame(t)
		if op != opPong || len(p) > 8 {
			t.Errorf("server got opcode %#x with %d bytes, want the pong", op, len(p))
		}
		pong <- p[:min(len(p), 8)]
	})
	if err != nil {
		t.Fatal(err)
	}
	wrote := make(chan error, 1)
	go func() { _, err := c.Write(make([]byte, big)); wrote <- err }()
	for c.wmu.TryLock() { // until the writer has the connection
		c.wmu.Unlock()
		time.Sleep(time.Millisecond)
	}
	close(blocked)
	read := make(chan string, 1)
	go func() {
		buf := make([]byte, 8)
		n, err := c.Read(buf)
		read <- fmt.Sprintf("%q %v", buf[:n], err)
	}()
	select {
	case got := <-read:
		if got != `"x" <nil>` {
			t.Fatalf("Read while a write is blocked = %s; want the data after the ping", got)
		}
	case <-time.After(10 * time.Second):
		close(release) // lets the writer, then the reader, finish
		t.Fatal("Read waited for the blocked writer")
	}
	select {
	case err := <-wrote:
		t.Fatalf("the %d-byte write finished (%v) before the server read anything: the test proves nothing", big, err)
	default:
	}
	close(release)
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-pong:
		if string(p) != "p" {
			t.Fatalf("pong payload %q", p)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no pong after the writer finished")
	}
}
