//go:build linux

package emulator

// ring is a fixed-capacity FIFO of packets, allocated once.
type ring struct {
	buf        []*packet
	head, size int
}

func newRing(capacity int) ring { return ring{buf: make([]*packet, capacity)} }

func (r *ring) len() int { return r.size }

func (r *ring) push(p *packet) {
	r.buf[(r.head+r.size)%len(r.buf)] = p
	r.size++
}

func (r *ring) peek() *packet {
	if r.size == 0 {
		return nil
	}
	return r.buf[r.head]
}

func (r *ring) pop() *packet {
	p := r.buf[r.head]
	r.buf[r.head] = nil
	r.head = (r.head + 1) % len(r.buf)
	r.size--
	return p
}
